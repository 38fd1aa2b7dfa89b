import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { md5, partsOf, putPart, startUpload, uploadFile, uploadIdOf } from './helpers/files.ts';
import { startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { sleep } from './helpers/until.ts';

/** Sends `declared` bytes' worth of headers but only `sent` bytes of body, then drops the connection. */
function abandonPart(url: string, declared: number, sent: number): Promise<void> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'PUT', headers: { 'content-length': declared } });
    req.on('error', () => resolve());
    req.on('response', (res) => {
      res.resume();
      resolve();
    });
    req.write(randomBytes(sent), () =>
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 50),
    );
  });
}

/**
 * Parts of the embedded store are hashed and written by a worker thread through a fixed set of shared slots
 * (src/storage/partWriter.ts) and flushed once per object (src/storage/fsUploads.ts).
 */
describe('embedded store: parts through the part writer', () => {
  let p: TestPlatform;
  let t: TestTenant;
  beforeAll(async () => {
    p = await startPlatform('pglite', { MEDIAPLANE_UPLOAD_PART_SIZE: String(2.5 * 1024 * 1024) });
    t = await p.createTenant();
  });
  afterAll(() => p?.stop());

  it('takes more parts at once than there are slots, every byte in place', async () => {
    const data = randomBytes(12 * 2.5 * 1024 * 1024 + 12345);
    const s = await uploadFile(t, 'wide.mp4', data); // all 13 parts in parallel: 39 slots wanted, 16 exist
    expect(s.partsCount).toBe(13);
    const stored = readFileSync(join(p.config.dataDir, 'objects', s.fileKey));
    expect(md5(stored)).toBe(md5(data));
  });

  it('gets its slots back from senders that vanish mid-part', async () => {
    const s = await startUpload(t, { name: 'dropped.mp4', fileSize: 5 * 1024 * 1024 });
    await Promise.all(Array.from({ length: 24 }, () => abandonPart(s.multipartUrls[0], s.partSize, 1.5 * 1024 * 1024)));
    const data = randomBytes(3 * 1024 * 1024);
    const again = await uploadFile(t, 'after.mp4', data);
    expect(md5(readFileSync(join(p.config.dataDir, 'objects', again.fileKey)))).toBe(md5(data));
  });

  it('answers the MD5 of every part and stores its bytes, parts ending on a slot boundary or not', async () => {
    // Slots are 1 MiB: a part of exactly 5 MiB ends with an empty slot, one of 5 MiB + 1234 bytes with a partial one.
    const store = p.ctx.store;
    for (let round = 0; round < 6; round++) {
      const partSize = 5 * 1024 * 1024;
      const data = randomBytes(2 * partSize + 1234);
      const key = `t/aligned/${round}.bin`;
      const { uploadId } = await store.createMultipartUpload(key, 'application/octet-stream', partSize);
      const parts = partsOf(data, partSize);
      const sent = await Promise.all(
        parts.map(async (bytes, i) => ({ partNumber: i + 1, eTag: (await putPart(await store.presignUploadPart(key, uploadId, i + 1, 60), bytes)).eTag! })),
      );
      expect(sent.map((s) => s.eTag)).toEqual(parts.map((b) => `"${md5(b)}"`));
      await store.completeMultipartUpload(key, uploadId, sent);
      expect(md5(readFileSync(join(p.config.dataDir, 'objects', key)))).toBe(md5(data));
    }
  });

  it('counts a part received before the machine restarted as not uploaded, until it is sent again', async () => {
    const data = randomBytes(2 * 2.5 * 1024 * 1024 + 7);
    const s = await startUpload(t, { name: 'reboot.mp4', fileSize: data.length });
    const parts = partsOf(data, s.partSize);
    const sent = await Promise.all(s.multipartUrls.map((url, i) => putPart(url, parts[i])));
    // What a machine crash leaves: the part's record, written in another boot, whose bytes may not be on disk.
    const record = join(p.config.dataDir, 'uploads', uploadIdOf(s.multipartUrls[1]), '2.json');
    writeFileSync(record, JSON.stringify({ ...JSON.parse(readFileSync(record, 'utf8')), bootId: 'an-earlier-boot' }));
    const complete = () => t.json('POST', '/vod/v1/files/complete', { fileId: s.fileId, parts: sent.map((x, i) => ({ partNumber: i + 1, eTag: x.eTag })) });
    const refused = await complete();
    expect(refused.status).toBe(400);
    expect(refused.body.status.code).toBe('upload_parts_not_uploaded');
    expect(refused.body.status.message).toContain('2');
    expect((await putPart(s.multipartUrls[1], parts[1])).eTag).toBe(sent[1].eTag);
    expect((await complete()).status).toBe(200);
    expect(md5(readFileSync(join(p.config.dataDir, 'objects', s.fileKey)))).toBe(md5(data));
  });
});

/** Whether this process may mount a file system (root in a sandbox that allows it, as on CI's machine). */
function canMount(): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'mediaplane-mount-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'ignore' });
    execFileSync('umount', [dir]);
    return true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.runIf(canMount())('embedded store: a full disk', () => {
  let p: TestPlatform;
  let t: TestTenant;
  let uploads: string;
  beforeAll(async () => {
    p = await startPlatform('pglite', { MEDIAPLANE_UPLOAD_PART_SIZE: String(1024 * 1024) });
    t = await p.createTenant();
    // Uploads in progress live on a 3 MiB file system of their own.
    uploads = join(p.config.dataDir, 'uploads');
    mkdirSync(uploads, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=3m', 'tmpfs', uploads]);
  });
  afterAll(async () => {
    // Lazily (a part's descriptor may still be closing in the background), and before stop() removes the directory.
    if (uploads) execFileSync('umount', ['-l', uploads]);
    await p?.stop();
  });

  it('answers 507 storage_full for a part that does not fit, and takes parts again once space is freed', async () => {
    const s = await startUpload(t, { name: 'big.mp4', fileSize: 5 * 1024 * 1024 });
    const answers = [];
    for (const url of s.multipartUrls) answers.push(await putPart(url, randomBytes(1024 * 1024)));
    const full = answers.find((a) => a.status !== 200)!;
    expect(full.status, full.body).toBe(507);
    expect(JSON.parse(full.body).status.code).toBe('storage_full');
    expect(answers[0].status).toBe(200);

    expect((await t.json('POST', `/vod/v1/files/${s.fileId}/cancel`, { delete: true })).status).toBe(204);
    const again = await startUpload(t, { name: 'small.mp4', fileSize: 2 * 1024 * 1024 });
    const data = randomBytes(1024 * 1024);
    const sent = await putPart(again.multipartUrls[0], data);
    expect(sent.status, sent.body).toBe(200);
    expect(sent.eTag).toBe(`"${md5(data)}"`);
  });
});

/** A part PUT whose body comes in `pieces`, with `pauseMs` of silence before each; resolves with the answer. */
function sendSlowly(url: string, pieces: Buffer[], pauseMs: number): Promise<{ status: number; eTag?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'PUT', headers: { 'content-length': pieces.reduce((n, p) => n + p.length, 0) } });
    req.on('error', reject);
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, eTag: res.headers.etag, body }));
    });
    const next = (i: number) => (i < pieces.length ? setTimeout(() => req.write(pieces[i], () => next(i + 1)), pauseMs) : req.end());
    next(0);
  });
}

/**
 * Starts a part PUT that sends `sent` bytes of its body and then nothing, holding the connection open; resolves with
 * the status the server answers and whether it closed the connection, whenever that happens.
 */
function stallPart(url: string, declared: number, sent: number): { answer: Promise<{ status: number; body: string; closed: boolean }>; drop(): void } {
  const req = request(url, { method: 'PUT', headers: { 'content-length': declared } });
  const answer = new Promise<{ status: number; body: string; closed: boolean }>((resolve) => {
    req.on('error', () => resolve({ status: 0, body: '', closed: true }));
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => req.socket?.once('close', () => resolve({ status: res.statusCode!, body, closed: true })));
    });
  });
  req.write(randomBytes(sent));
  return { answer, drop: () => req.destroy() };
}

describe('embedded store: senders that stall', () => {
  let p: TestPlatform;
  let t: TestTenant;
  beforeAll(async () => {
    // The 408 of a silent part waits out the drain of the body's rest (platform/bodyDrain.ts) before it is sent: 1 s,
    // not 10, as the sender never sends it.
    p = await startPlatform('pglite', {
      MEDIAPLANE_UPLOAD_PART_SIZE: String(3 * 1024 * 1024),
      MEDIAPLANE_UPLOAD_IDLE_TIMEOUT_SECONDS: '3',
      MEDIAPLANE_BODY_DRAIN_SECONDS: '1',
    });
    t = await p.createTenant();
  });
  afterAll(() => p?.stop());

  it('keeps taking parts while more senders than there are slots stall mid-part', async () => {
    const s = await startUpload(t, { name: 'stalled.mp4', fileSize: 24 * 3 * 1024 * 1024 });
    // Mid-slot, and not on a block boundary: each would hold a slot while silent.
    const stalled = s.multipartUrls.map((url, i) => stallPart(url, s.partSize, i % 2 ? 1 : 1024 * 1024 + 1000));
    try {
      // On purpose: time for the stalled parts to reach the store and take their slots, which nothing outside it shows.
      await sleep(300);
      const data = randomBytes(2 * 3 * 1024 * 1024 + 777);
      let stalledAnswered = 0;
      for (const st of stalled) void st.answer.then(() => stalledAnswered++);
      const other = await uploadFile(t, 'meanwhile.mp4', data);
      // Done while every stalled sender still holds its connection: not by waiting for them to time out.
      expect(stalledAnswered).toBe(0);
      expect(md5(readFileSync(join(p.config.dataDir, 'objects', other.fileKey)))).toBe(md5(data));
    } finally {
      for (const s of stalled) s.drop();
    }
  });

  it('stores the right bytes and ETag for a part whose sender pauses mid-slot', async () => {
    // Pauses longer than the idle check make the part give its slot back mid-slot, whole blocks and the rest apart.
    const data = randomBytes(3 * 1024 * 1024);
    const cuts = [1, 4095, 4097, 700_000, 1024 * 1024 + 3, 2 * 1024 * 1024 - 5, 2 * 1024 * 1024 + 4096];
    const pieces = [0, ...cuts].map((at, i, all) => data.subarray(at, all[i + 1] ?? data.length));
    const s = await startUpload(t, { name: 'slow.mp4', fileSize: data.length + 10 });
    const sent = await sendSlowly(s.multipartUrls[0], pieces, 250);
    expect(sent.status, sent.body).toBe(200);
    expect(sent.eTag).toBe(`"${md5(data)}"`);
    const last = Buffer.from('0123456789');
    const tail = await putPart(s.multipartUrls[1], last);
    const done = await t.json('POST', '/vod/v1/files/complete', {
      fileId: s.fileId,
      parts: [
        { partNumber: 1, eTag: sent.eTag },
        { partNumber: 2, eTag: tail.eTag },
      ],
    });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(md5(readFileSync(join(p.config.dataDir, 'objects', s.fileKey)))).toBe(md5(Buffer.concat([data, last])));
  });

  it('stores every byte of uploads whose parts pause mid-slot while other parts stream, and answers their MD5', async () => {
    // What a loaded machine does to senders: parts of several uploads at once, each silent for longer than the idle
    // check now and then at a cut no disk block aligns with, so that parts give their slots back mid-block and resume
    // while the slots of other parts are being filled, written and hashed.
    const uploads = await Promise.all(
      [0, 1, 2].map(async (u) => {
        const data = randomBytes(5 * 3 * 1024 * 1024 + 1000 * u + 333);
        return { data, s: await startUpload(t, { name: `paused-${u}.mp4`, fileSize: data.length }) };
      }),
    );
    const sent = await Promise.all(
      uploads.map(({ data, s }) => {
        const parts = partsOf(data, s.partSize);
        return Promise.all(
          s.multipartUrls.map(async (url, i) => {
            const cuts = [1 + ((i * 7919) % 4095), 300_000 + i * 1111, 1024 * 1024 + 2049 + i, 2 * 1024 * 1024 + 777].filter((at) => at < parts[i].length);
            const pieces = [0, ...cuts].map((at, k, all) => parts[i].subarray(at, all[k + 1] ?? parts[i].length));
            const answer = await sendSlowly(url, pieces, 150 + ((i * 37) % 100));
            expect(answer.status, answer.body).toBe(200);
            expect(answer.eTag, `part ${i + 1} of ${s.fileId}`).toBe(`"${md5(parts[i])}"`);
            return { partNumber: i + 1, eTag: answer.eTag };
          }),
        );
      }),
    );
    for (const [u, { data, s }] of uploads.entries()) {
      const done = await t.json('POST', '/vod/v1/files/complete', { fileId: s.fileId, parts: sent[u] });
      expect(done.status, JSON.stringify(done.body)).toBe(200);
      const stored = readFileSync(join(p.config.dataDir, 'objects', s.fileKey));
      // Each part's ETag is the MD5 of the bytes stored in its place, not only of what was sent.
      expect(partsOf(stored, s.partSize).map((b) => `"${md5(b)}"`)).toEqual(sent[u].map((x) => x.eTag));
      expect(md5(stored)).toBe(md5(data));
    }
  });

  it('answers 408 part_timeout to a part silent for the idle timeout, closes its connection, and takes the part again', async () => {
    const s = await startUpload(t, { name: 'silent.mp4', fileSize: 3 * 1024 * 1024 });
    const started = Date.now();
    const stalled = stallPart(s.multipartUrls[0], s.partSize, 1024 * 1024 + 1000);
    const answer = await stalled.answer;
    expect(answer.status, answer.body).toBe(408);
    expect(JSON.parse(answer.body).status.code).toBe('part_timeout');
    expect(answer.closed).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2900);

    const data = randomBytes(s.partSize);
    const again = await putPart(s.multipartUrls[0], data);
    expect(again.status, again.body).toBe(200);
    const done = await t.json('POST', '/vod/v1/files/complete', { fileId: s.fileId, parts: [{ partNumber: 1, eTag: again.eTag }] });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(md5(readFileSync(join(p.config.dataDir, 'objects', s.fileKey)))).toBe(md5(data));
  });
});
