import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tempDir } from './helpers/media.ts';
import { describeEachDb, startInProcess, type TestPlatform, type TestTenant } from './helpers/platform.ts';

const run = promisify(execFile);
const { dir, cleanup } = tempDir('mediaplane-qr-');
afterAll(cleanup);

/** What a phone's camera reads: zbarimg (Debian's zbar-tools) decodes the PNG. */
async function scan(png: Buffer, name: string): Promise<string> {
  const file = join(dir, `${name}.png`);
  writeFileSync(file, png);
  const { stdout } = await run('zbarimg', ['--raw', '-q', file]);
  return stdout.trim();
}

describeEachDb('Generate QR code', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;

  beforeAll(async () => {
    p = await startInProcess(kind, { MEDIAPLANE_PUBLIC_URL: 'https://video.example.com' });
    t = await p.createTenant();
  });
  afterAll(() => p.stop());

  it('answers a PNG that scans back to the embed URL with the boolean options given', async () => {
    const res = await t.call('GET', '/streaming/v1/qrcode/asset_1-A?Muted=true&Autoplay=false&Analytics=true');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    const png = Buffer.from(await res.arrayBuffer());
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(await scan(png, 'options')).toBe(`https://video.example.com/player/v1/${t.id}/asset_1-A?Muted=true&Autoplay=false&Analytics=true`);
    const plain = Buffer.from(await (await t.call('GET', '/streaming/v1/qrcode/asset_1-A')).arrayBuffer());
    expect(await scan(plain, 'plain')).toBe(`https://video.example.com/player/v1/${t.id}/asset_1-A`);
  });

  it('refuses an id outside the pattern, an option that is no boolean, and a caller without a key', async () => {
    expect((await t.call('GET', '/streaming/v1/qrcode/a%20b')).status).toBe(400);
    expect((await t.call('GET', `/streaming/v1/qrcode/${'a'.repeat(129)}`)).status).toBe(400);
    const notBoolean = await t.json('GET', '/streaming/v1/qrcode/abc?TimeShift=maybe');
    expect(notBoolean.status).toBe(400);
    expect(notBoolean.body.errors[0].field).toBe('TimeShift');
    expect((await p.fetch(`${p.baseUrl}/streaming/v1/qrcode/abc`)).status).toBe(401);
  });
});
