import { open, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { TestTenant } from './platform.ts';

/** Uploads a local file the way a client does: start, PUT each part to its presigned URL, complete. Returns the file id. */
export async function uploadFile(t: TestTenant, path: string, name = basename(path)): Promise<string> {
  const size = (await stat(path)).size;
  const start = await t.json('POST', '/vod/v1/files/start', { name, friendlyName: name, fileSize: size });
  if (start.status !== 200) throw new Error(`start failed: ${start.status} ${JSON.stringify(start.body)}`);
  const { fileId, multipartUrls, partSize } = start.body as { fileId: string; multipartUrls: string[]; partSize: number };
  const fh = await open(path);
  const parts: { partNumber: number; eTag: string }[] = [];
  try {
    for (const [i, url] of multipartUrls.entries()) {
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
  const done = await t.json('POST', '/vod/v1/files/complete', { fileId, parts });
  if (done.status !== 200) throw new Error(`complete failed: ${done.status} ${JSON.stringify(done.body)}`);
  return fileId;
}
