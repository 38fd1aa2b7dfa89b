import { basename } from 'node:path';
import type { TestTenant } from './platform.ts';
import { until } from './until.ts';
import { uploadFile } from './upload.ts';

/** Uploads a suspect file like a client: start, a fresh URL for part 1 through `part/{nr}`, PUT every part, complete. */
export const uploadSuspect = (t: TestTenant, path: string, name = basename(path)): Promise<string> =>
  uploadFile(t, path, name, { module: 'watermarking', freshFirstPart: true });

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
