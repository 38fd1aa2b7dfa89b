import { open, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { TestTenant } from './platform.ts';
import { until } from './until.ts';

/** Uploads a suspect file like a client: start, a fresh URL for part 1 through `part/{nr}`, PUT every part, complete. */
export async function uploadSuspect(t: TestTenant, path: string, name = basename(path)): Promise<string> {
  const size = (await stat(path)).size;
  const start = await t.json('POST', '/watermarking/v1/files/start', { name, fileSize: size });
  if (start.status !== 200) throw new Error(`start failed: ${start.status} ${JSON.stringify(start.body)}`);
  const { fileId, multipartUrls, partSize } = start.body as { fileId: string; multipartUrls: string[]; partSize: number };
  const fresh = await t.json('GET', `/watermarking/v1/files/${fileId}/part/1`);
  if (fresh.status !== 200) throw new Error(`part url failed: ${fresh.status} ${JSON.stringify(fresh.body)}`);
  const urls = [fresh.body.url as string, ...multipartUrls.slice(1)];
  const fh = await open(path);
  const parts: { partNumber: number; eTag: string }[] = [];
  try {
    for (const [i, url] of urls.entries()) {
      const length = Math.min(partSize, size - i * partSize);
      const buf = Buffer.alloc(length);
      await fh.read(buf, 0, length, i * partSize);
      const res = await t.fetch(url, { method: 'PUT', body: buf });
      if (!res.ok) throw new Error(`part ${i + 1} failed: ${res.status} ${await res.text()}`);
      parts.push({ partNumber: i + 1, eTag: res.headers.get('etag')! });
    }
  } finally {
    await fh.close();
  }
  const done = await t.json('POST', '/watermarking/v1/files/complete', { fileId, parts });
  if (done.status !== 200) throw new Error(`complete failed: ${done.status} ${JSON.stringify(done.body)}`);
  return fileId;
}

/** Uploads a file, starts a detection job and waits for its result. */
export async function detect(t: TestTenant, path: string, timeoutMs = 60_000) {
  const fileId = await uploadSuspect(t, path);
  const job = await t.json('POST', '/watermarking/v1/detectjobs', { fileId });
  if (job.status !== 200) throw new Error(`detectjobs failed: ${job.status} ${JSON.stringify(job.body)}`);
  const file = await until(
    () => t.json('GET', `/watermarking/v1/files/${fileId}`),
    (r) => ['Detected', 'NoMarkFound', 'Error'].includes(r.body?.detection?.status),
    { timeoutMs, what: `the detection of ${basename(path)}` },
  );
  return { fileId, jobId: job.body.jobId as string, file: file.body };
}

/** Prepares a VOD asset for watermarking and waits until it is Available (or failed). */
export async function prepare(t: TestTenant, vodAssetId: string, timeoutMs = 90_000) {
  const created = await t.json('POST', '/watermarking/v1/assets', { vodAssetId, metadata: { title: 'Marked clip' } });
  if (created.status !== 200) throw new Error(`prepare failed: ${created.status} ${JSON.stringify(created.body)}`);
  const asset = await until(
    () => t.json('GET', `/watermarking/v1/assets/${created.body.id}`),
    (r) => ['Available', 'Error'].includes(r.body?.status),
    { timeoutMs, what: 'the prepared asset' },
  );
  return asset.body;
}
