import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, freePort, mediaplane, waitReady, type Run } from './helpers/process.ts';

describe('CLI beside a running server', () => {
  const work = mkdtempSync(join(tmpdir(), 'mediaplane-cli-'));
  const dataDir = join(work, 'server-data');
  let port: number;
  let server: Run;
  beforeAll(async () => {
    port = await freePort();
    server = mediaplane(['serve'], { PORT: String(port), HOST: '127.0.0.1', MEDIAPLANE_DATA_DIR: dataDir });
    await waitReady(`http://127.0.0.1:${port}`, server);
  }, 180_000);
  afterAll(async () => {
    if (server.child.exitCode === null) server.child.kill('SIGTERM');
    await server.exit;
    rmSync(work, { recursive: true, force: true });
  });

  it('without MEDIAPLANE_DATA_DIR, finds the server on PORT and says which data directory to use instead of creating ./data', async () => {
    const cwd = join(work, 'elsewhere');
    mkdirSync(cwd);
    const r = await cli(['tenant', 'list'], { PORT: String(port) }, cwd);
    expect(r.code).toBe(1);
    expect(r.out).toContain(`the Mediaplane server that answers at http://127.0.0.1:${port} uses another data directory`);
    expect(r.out).toContain('Set MEDIAPLANE_DATA_DIR');
    expect(existsSync(join(cwd, 'data'))).toBe(false);
    // With that server's admin token, the command goes to it.
    const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    const withToken = await cli(['tenant', 'list'], { PORT: String(port), MEDIAPLANE_ADMIN_TOKEN: token }, cwd);
    expect(withToken.code, withToken.out).toBe(0);
    expect(existsSync(join(cwd, 'data'))).toBe(false);
  });

  it('`tenant create --export` prints lines a shell can eval; `--json` prints the tenant with its key', async () => {
    const env = { PORT: String(port), MEDIAPLANE_DATA_DIR: dataDir };
    // Without PORT: the server on the data directory says which port it listens on (a user who started it with PORT
    // runs the CLI from another shell).
    const exported = await cli(['tenant', 'create', 'shell', '--export'], { MEDIAPLANE_DATA_DIR: dataDir });
    expect(exported.code, exported.out).toBe(0);
    const m = /^export TENANT_ID=([0-9a-f-]{36}) KEY=(\S+)$/m.exec(exported.out);
    expect(m, exported.out).not.toBeNull();
    const ok = await fetch(`http://127.0.0.1:${port}/core/v1/api-key`, { headers: { 'x-tenant-id': m![1], 'x-api-key': m![2] } });
    expect(ok.status).toBe(200);
    const json = await cli(['tenant', 'create', 'piped', '--json'], env);
    expect(json.code, json.out).toBe(0);
    const t = JSON.parse(json.out);
    expect(t.name).toBe('piped');
    expect(typeof t.apiKey.key).toBe('string');
    const list = JSON.parse((await cli(['tenant', 'list', '--json'], env)).out);
    expect(list.map((x: any) => x.name)).toEqual(['shell', 'piped']);
  });

  it('with no server and no database, says that it creates one', async () => {
    const cwd = join(work, 'fresh');
    mkdirSync(cwd);
    const r = await cli(['tenant', 'list'], { PORT: String(await freePort()) }, cwd);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain(`No database in ${join(cwd, 'data')} yet and no server running: creating a new, empty one there.`);
  });
});
