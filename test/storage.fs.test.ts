import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRange } from '../src/storage/range.ts';
import type { FsObjectStore } from '../src/storage/fsStore.ts';
import { md5, startUpload } from './helpers/files.ts';
import { startPlatform, type TestPlatform } from './helpers/platform.ts';

describe('embedded store URLs served by the platform', () => {
  let p: TestPlatform;
  let store: FsObjectStore;
  beforeAll(async () => {
    p = await startPlatform('pglite');
    store = p.ctx.store as FsObjectStore;
  });
  afterAll(() => p?.stop());

  it('lets a browser on another origin upload a part and read its ETag', async () => {
    const t = await p.createTenant();
    const s = await startUpload(t, { name: 'web.mp4', fileSize: 5 });
    const pre = await fetch(s.multipartUrls[0], {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'content-type' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    expect(pre.headers.get('access-control-allow-methods')).toContain('PUT');
    expect(pre.headers.get('access-control-allow-headers')).toBe('content-type');
    // Any content type is taken as raw bytes, including JSON.
    const put = await fetch(s.multipartUrls[0], {
      method: 'PUT',
      body: '{"a":1}',
      headers: { 'content-type': 'application/json', origin: 'https://app.example' },
    });
    expect(put.status).toBe(200);
    expect(put.headers.get('etag')).toBe(`"${md5(Buffer.from('{"a":1}'))}"`);
    expect(put.headers.get('access-control-allow-origin')).toBe('*');
    expect(put.headers.get('access-control-expose-headers')).toContain('ETag');
  });

  it('serves HEAD, ranges and 416 for ranges past the end', async () => {
    const bytes = randomBytes(1000);
    await store.putObject('t/x/seg.ts', bytes);
    const url = await store.presignGet('t/x/seg.ts', 60);
    const head = await fetch(url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('1000');
    expect(head.headers.get('content-type')).toBe('video/mp2t');
    expect(head.headers.get('accept-ranges')).toBe('bytes');
    const open = await fetch(url, { headers: { range: 'bytes=990-' } });
    expect(open.status).toBe(206);
    expect(Buffer.from(await open.arrayBuffer())).toEqual(bytes.subarray(990));
    const past = await fetch(url, { headers: { range: 'bytes=1000-1010' } });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe('bytes */1000');
    expect((await past.json()).status.code).toBe('range_not_satisfiable');
  });

  it('refuses unsigned, tampered, retargeted and expired download URLs with 403', async () => {
    await store.putObject('t/y/a.mp4', 'aaa');
    await store.putObject('t/y/b.mp4', 'bbb');
    const url = new URL(await store.presignGet('t/y/a.mp4', 60));
    const codeOf = async (u: string) => {
      const r = await fetch(u);
      return [r.status, (await r.json()).status.code];
    };
    const unsigned = new URL(url);
    unsigned.search = '';
    expect(await codeOf(unsigned.href)).toEqual([403, 'url_signature_invalid']);
    expect(await codeOf(url.href.replace('/a.mp4', '/b.mp4'))).toEqual([403, 'url_signature_invalid']);
    const later = new URL(url);
    later.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
    expect(await codeOf(later.href)).toEqual([403, 'url_signature_invalid']);
    const withName = new URL(url);
    withName.searchParams.set('filename', 'x.mp4');
    expect(await codeOf(withName.href)).toEqual([403, 'url_signature_invalid']);
    expect(await codeOf(await store.presignGet('t/y/a.mp4', -1))).toEqual([403, 'url_expired']);
    for (const expires of ['-99999999999999999', '-1e300', '-9000000000000']) {
      // Past any date JavaScript can print: still an expired URL, not a 500.
      const ancient = new URL(url);
      ancient.searchParams.set('expires', expires);
      expect(await codeOf(ancient.href), expires).toEqual([403, 'url_expired']);
    }
    expect(await codeOf(url.href.replace('/t/y/a.mp4', '/t/y/../../etc/passwd'))).toEqual([403, 'url_signature_invalid']);
    await store.delete('t/y/a.mp4');
    expect(await codeOf(url.href)).toEqual([404, 'object_not_found']);
  });

  it('parses byte ranges like HTTP servers do', () => {
    expect(parseRange('bytes=0-99', 1000)).toEqual({ start: 0, end: 99 });
    expect(parseRange('bytes=900-', 1000)).toEqual({ start: 900, end: 999 });
    expect(parseRange('bytes=-100', 1000)).toEqual({ start: 900, end: 999 });
    expect(parseRange('bytes=-2000', 1000)).toEqual({ start: 0, end: 999 });
    expect(parseRange('bytes=500-5000', 1000)).toEqual({ start: 500, end: 999 });
    expect(parseRange('bytes=1000-', 1000)).toBe('unsatisfiable');
    expect(parseRange('bytes=5-4', 1000)).toBe('unsatisfiable');
    expect(parseRange('bytes=0-1,5-6', 1000)).toBeUndefined();
    expect(parseRange('items=0-1', 1000)).toBeUndefined();
    expect(parseRange(undefined, 1000)).toBeUndefined();
  });
});
