import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventTypes } from './helpers/files.ts';
import { makeClip, tempDir } from './helpers/media.ts';
import { describeEachDb, startInProcess, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { describeEachDbAndStore, storeEnv } from './helpers/stores.ts';
import { until } from './helpers/until.ts';

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

/**
 * A web server holding the files to import, as a customer's origin or CDN would: ranges, ETags, redirects, and the
 * failures imports must survive or report. `ranges` records every Range header it was sent, by path.
 */
class Origin {
  readonly ranges: Record<string, string[]> = {};
  private cut = new Set<string>();
  slowClosed = false;
  private server!: http.Server;
  url = '';

  constructor(private readonly clip: Buffer) {}

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => this.answer(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close = () => new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));

  private answer(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = new URL(req.url!, this.url).pathname;
    (this.ranges[path] ??= []).push(req.headers.range ?? '');
    switch (path) {
      case '/hop1':
        return void res.writeHead(302, { location: '/hop2' }).end();
      case '/hop2':
        return void res.writeHead(301, { location: `${this.url}/media/clip.mp4` }).end();
      case '/to-ftp':
        return void res.writeHead(302, { location: 'ftp://127.0.0.1/clip.mp4' }).end();
      case '/media/clip.mp4':
      case '/flaky.mp4':
        return this.serve(req, res, path);
      case '/slow.mp4': {
        // A slow origin: a few KiB every 100 ms, so that an import is seen in progress, until the client goes away.
        res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': this.clip.length });
        let at = 0;
        const timer = setInterval(() => {
          if (at >= this.clip.length) return clearInterval(timer);
          res.write(this.clip.subarray(at, (at += 4096)));
        }, 100);
        res.on('close', () => {
          clearInterval(timer);
          this.slowClosed = true;
        });
        return;
      }
      case '/big.mp4': {
        // No Content-Length (chunked): the limit is found while the bytes arrive.
        res.writeHead(200, { 'content-type': 'video/mp4' });
        const chunk = Buffer.alloc(64 * 1024, 7);
        let sent = 0;
        const more = () => {
          while (sent < this.clip.length * 3) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', more);
          }
          res.end();
        };
        res.on('error', () => {});
        return more();
      }
      default:
        return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
    }
  }

  /** The clip, with ranges; `/flaky.mp4` cuts its first full answer off half way, once. */
  private serve(req: http.IncomingMessage, res: http.ServerResponse, path: string): void {
    const headers = { 'content-type': 'video/mp4', 'accept-ranges': 'bytes', etag: '"clip-v1"' };
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    if (range && req.headers['if-range'] === '"clip-v1"') {
      const start = Number(range[1]);
      res.writeHead(206, {
        ...headers,
        'content-length': this.clip.length - start,
        'content-range': `bytes ${start}-${this.clip.length - 1}/${this.clip.length}`,
      });
      return void res.end(this.clip.subarray(start));
    }
    res.writeHead(200, { ...headers, 'content-length': this.clip.length });
    if (path === '/flaky.mp4' && !this.cut.has(path)) {
      this.cut.add(path);
      res.write(this.clip.subarray(0, this.clip.length >> 1), () => setTimeout(() => res.socket?.destroy(), 50));
      return;
    }
    res.end(this.clip);
  }
}

const { dir, cleanup } = tempDir('mediaplane-import-');

describeEachDbAndStore('VOD file import from a URL', (db, store) => {
  let p: TestPlatform;
  let t: TestTenant;
  let clip: Buffer;
  let origin: Origin;

  beforeAll(async () => {
    clip = readFileSync(await makeClip(dir, `clip-${db}`, { seconds: 2, width: 320, height: 180 }));
    origin = new Origin(clip);
    await origin.start();
    p = await startPlatform(db, {
      ...(await storeEnv(store)),
      // The origin is on loopback: the setting that lets the platform fetch from private addresses.
      MEDIAPLANE_FETCH_ALLOW_PRIVATE: 'true',
      MEDIAPLANE_IMPORT_MAX_BYTES: String(clip.length * 2),
    });
    t = await p.createTenant();
  });
  afterAll(async () => {
    await p?.stop();
    await origin?.close();
  });

  const importing = async (body: Record<string, unknown>) => {
    const res = await t.json('POST', '/vod/v1/files/import', body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { fileId: string; fileKey: string };
  };
  const settled = async (id: string) =>
    (
      await until(
        () => t.json('GET', `/vod/v1/files/${id}`),
        (r) => r.body.status !== 'Uploading',
        { timeoutMs: 60_000, what: `file ${id} to leave Uploading` },
      )
    ).body;
  const stored = async (id: string) => Buffer.from(await (await fetch((await t.json('GET', `/vod/v1/files/${id}/preview`)).body.link)).arrayBuffer());

  it('imports a file through redirects; it completes with its size and media facts, and makes an asset that plays', async () => {
    const { fileId, fileKey } = await importing({
      url: `${origin.url}/hop1`,
      name: 'movie.mp4',
      friendlyName: 'Movie',
      tags: ['imported'],
      metadata: { a: 'b' },
    });
    expect(fileKey).toMatch(new RegExp(`/files/${fileId}/movie\\.mp4$`));
    const file = await settled(fileId);
    expect(file).toMatchObject({
      status: 'Completed',
      fileSize: clip.length,
      fileTypes: 'Video',
      name: 'movie.mp4',
      friendlyName: 'Movie',
      orginalFileName: 'movie.mp4',
      tags: ['imported'],
      metadata: { a: 'b' },
      errorMessage: null,
      import: { url: `${origin.url}/hop1`, bytesReceived: clip.length, progressPercent: 100 },
    });
    expect(file.tracks.map((x: any) => x.type)).toEqual(['Video', 'Audio', 'Audio']);
    expect(md5(await stored(fileId))).toBe(md5(clip));
    expect((await t.json('GET', `/vod/v1/files/${fileId}/duration`)).body.duration).toBeGreaterThan(1900);
    // As an upload's, with the fetch's progress in between (a step of 10 % reached, at most every 5 s).
    const types = await eventTypes(p, fileId);
    expect(types.filter((x) => x !== 'vod.file.progress')).toEqual(['vod.file.created', 'vod.file.completed']);
    expect(types.at(-1)).toBe('vod.file.completed');
    // Parts and completion belong to uploads.
    expect((await t.json('GET', `/vod/v1/files/${fileId}/part/1`)).status).toBe(409);

    const asset = await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'mp4-h264-download' });
    expect(asset.status, JSON.stringify(asset.body)).toBe(200);
    const done = await until(
      () => t.json('GET', `/vod/v1/assets/${asset.body.id}`),
      (r) => ['Available', 'Error'].includes(r.body.status),
      { timeoutMs: 120_000 },
    );
    expect(done.body.status, done.body.errorMessage).toBe('Available');
    const mp4 = await fetch(done.body.endpoints[0].url);
    expect(mp4.status).toBe(200);
    expect(
      Buffer.from(await mp4.arrayBuffer())
        .subarray(4, 8)
        .toString(),
    ).toBe('ftyp');
  });

  it('takes its name from the URL when none is given', async () => {
    const { fileId } = await importing({ url: `${origin.url}/media/clip.mp4` });
    expect(await settled(fileId)).toMatchObject({ status: 'Completed', name: 'clip.mp4', friendlyName: 'clip.mp4', fileSize: clip.length });
  });

  it('resumes a connection dropped half way with a Range request, and stores the whole file', async () => {
    const { fileId } = await importing({ url: `${origin.url}/flaky.mp4` });
    expect(await settled(fileId)).toMatchObject({ status: 'Completed', fileSize: clip.length });
    expect(md5(await stored(fileId))).toBe(md5(clip));
    const ranges = origin.ranges['/flaky.mp4'];
    expect(ranges[0]).toBe('');
    expect(ranges.slice(1)).toContainEqual(`bytes=${clip.length >> 1}-`);
  });

  it('ends in Error with the reason in words: a 404, a file over the size limit, a redirect to another scheme', async () => {
    const cases: [string, RegExp][] = [
      ['/missing.mp4', /the server answered 404 Not Found/],
      ['/big.mp4', new RegExp(`larger than the import limit of ${clip.length * 2} bytes`)],
      ['/to-ftp', /ftp: URLs are not fetched/],
    ];
    for (const [path, reason] of cases) {
      const { fileId } = await importing({ url: `${origin.url}${path}`, name: 'x.mp4' });
      const file = await settled(fileId);
      expect(file.status).toBe('Error');
      expect(file.errorMessage).toMatch(reason);
      expect(file.errorMessage).toContain(`${origin.url}${path}`);
      expect((await eventTypes(p, fileId)).filter((x) => x !== 'vod.file.progress')).toEqual(['vod.file.created', 'vod.file.failed']);
      const listed = await t.json('GET', `/vod/v1/files?ids=${fileId}`);
      expect(listed.body.items[0]).toMatchObject({ status: 'Error', errorMessage: file.errorMessage });
      expect((await t.json('GET', `/vod/v1/files/${fileId}/preview`)).status).toBe(409);
    }
  });

  it('shows the progress of an import, and cancel stops the fetch: the file goes to Error, or is deleted', async () => {
    const { fileId } = await importing({ url: `${origin.url}/slow.mp4` });
    const running = await until(
      () => t.json('GET', `/vod/v1/files/${fileId}`),
      (r) => r.body.import?.bytesReceived > 0,
      { timeoutMs: 30_000 },
    );
    expect(running.body).toMatchObject({ status: 'Uploading', fileSize: clip.length, errorMessage: null });
    expect(running.body.import.progressPercent).toBeLessThan(100);
    expect(running.body.import.progressPercent).toBe(Math.floor((running.body.import.bytesReceived * 100) / clip.length));
    expect((await t.json('POST', '/vod/v1/files/complete', { fileId, parts: [{ partNumber: 1 }] })).body.status.code).toBe('file_importing');

    expect((await t.json('POST', `/vod/v1/files/${fileId}/cancel`, {})).status).toBe(204);
    expect(await settled(fileId)).toMatchObject({ status: 'Error', errorMessage: 'the import was cancelled' });
    await until(() => origin.slowClosed, Boolean, { timeoutMs: 30_000, what: 'the import to close its connection' });
    expect(await eventTypes(p, fileId)).toContain('vod.file.failed');
    expect((await t.json('POST', `/vod/v1/files/${fileId}/cancel`, {})).status).toBe(409);

    origin.slowClosed = false;
    const deleted = await importing({ url: `${origin.url}/slow.mp4` });
    await until(
      () => t.json('GET', `/vod/v1/files/${deleted.fileId}`),
      (r) => r.body.import?.bytesReceived > 0,
      { timeoutMs: 30_000 },
    );
    expect((await t.json('POST', `/vod/v1/files/${deleted.fileId}/cancel`, { delete: true })).status).toBe(204);
    expect((await t.json('GET', `/vod/v1/files/${deleted.fileId}`)).status).toBe(404);
    await until(() => origin.slowClosed, Boolean, { timeoutMs: 30_000, what: 'the import to close its connection' });
  });

  it('refuses URLs it cannot fetch with 400 in the documented error shape', async () => {
    const bad: [unknown, RegExp][] = [
      ['ftp://127.0.0.1/clip.mp4', /must use http or https, not ftp/],
      ['file:///etc/passwd', /must use http or https, not file/],
      ['http://', /must be an absolute http or https URL/],
      ['/media/clip.mp4', /must be an absolute http or https URL/],
      ['http://user:secret@127.0.0.1/clip.mp4', /must not carry credentials/],
    ];
    for (const [url, message] of bad) {
      const res = await t.json('POST', '/vod/v1/files/import', { url });
      expect(res.status, String(url)).toBe(400);
      expect(res.body.status).toMatchObject({ code: 'validation_failed', status: 400 });
      expect(res.body.errors).toEqual([{ field: 'url', message: expect.stringMatching(message) }]);
    }
    const noType = await t.json('POST', '/vod/v1/files/import', { url: `${origin.url}/download?id=3` });
    expect(noType.status).toBe(400);
    expect(noType.body.status.code).toBe('unsupported_file_type');
    const unknown = await t.json('POST', '/vod/v1/files/import', { url: `${origin.url}/a.mp4`, fileSize: 3 });
    expect(unknown.status).toBe(400);
    expect(unknown.body.status.code).toBe('validation_failed');
  });
});

describeEachDb('VOD file import without MEDIAPLANE_FETCH_ALLOW_PRIVATE', (db) => {
  let p: TestPlatform;
  let t: TestTenant;
  beforeAll(async () => {
    p = await startInProcess(db);
    t = await p.createTenant();
  });
  afterAll(() => p?.stop());

  it('refuses private addresses and names that resolve to them, naming the setting', async () => {
    for (const url of [
      'http://127.0.0.1:8080/clip.mp4',
      'http://10.1.2.3/clip.mp4',
      'http://[::1]/clip.mp4',
      'http://localhost/clip.mp4',
      'http://169.254.169.254/clip.mp4',
    ]) {
      const res = await t.json('POST', '/vod/v1/files/import', { url });
      expect(res.status, url).toBe(400);
      expect(res.body.status.code).toBe('validation_failed');
      expect(res.body.errors[0]).toMatchObject({ field: 'url', message: expect.stringContaining('MEDIAPLANE_FETCH_ALLOW_PRIVATE=true') });
    }
    expect((await t.json('GET', '/vod/v1/files')).body.totalCount).toBe(0);
  });
});

afterAll(cleanup);
