import { open, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { TestTenant } from './platform.ts';

/** Where a file goes: a VOD source file (it has a friendly name too) or a watermarking suspect file. */
export type UploadModule = 'vod' | 'watermarking';

/**
 * Uploads a local file the way a client does: start, PUT each part to its presigned URL, complete. Returns the file id.
 * `freshFirstPart`: part 1 goes to a fresh URL asked for through `files/{id}/part/1`, as a client whose URL expired.
 */
export async function uploadFile(
  t: TestTenant,
  path: string,
  name = basename(path),
  { module = 'vod', freshFirstPart = false }: { module?: UploadModule; freshFirstPart?: boolean } = {},
): Promise<string> {
  const api = `/${module}/v1/files`;
  const size = (await stat(path)).size;
  const start = await t.json('POST', `${api}/start`, { name, ...(module === 'vod' ? { friendlyName: name } : {}), fileSize: size });
  if (start.status !== 200) throw new Error(`start failed: ${start.status} ${JSON.stringify(start.body)}`);
  const { fileId, multipartUrls, partSize } = start.body as { fileId: string; multipartUrls: string[]; partSize: number };
  if (freshFirstPart) {
    const fresh = await t.json('GET', `${api}/${fileId}/part/1`);
    if (fresh.status !== 200) throw new Error(`part url failed: ${fresh.status} ${JSON.stringify(fresh.body)}`);
    multipartUrls[0] = fresh.body.url as string;
  }
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
  const done = await t.json('POST', `${api}/complete`, { fileId, parts });
  if (done.status !== 200) throw new Error(`complete failed: ${done.status} ${JSON.stringify(done.body)}`);
  return fileId;
}
