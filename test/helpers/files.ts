import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import { events } from '../../src/db/events.ts';
import type { TestPlatform, TestTenant } from './platform.ts';
import type { StoreKind } from './stores.ts';

export const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

/**
 * `size` bytes that look random but are the same in every run (a SHA-256 chain from `seed`), for uploads that must not
 * be media: truly random bytes are now and then taken by ffprobe for a stream (seen in CI: a "Video 1" track).
 */
export function notMediaBytes(size: number, seed = 'mediaplane'): Buffer {
  const out = Buffer.alloc(size);
  let block = createHash('sha256').update(seed).digest();
  for (let at = 0; at < size; at += block.length) {
    block.copy(out, at);
    block = createHash('sha256').update(block).digest();
  }
  return out;
}

/** Part size forced per store: tiny on fs, S3's 5 MiB minimum on S3. */
export const PART_SIZE: Record<StoreKind, number> = { fs: 256 * 1024, s3: 5 * 1024 * 1024 };

export async function startUpload(t: TestTenant, body: Record<string, unknown>) {
  const res = await t.json('POST', '/vod/v1/files/start', { friendlyName: body.name, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { fileId: string; multipartUrls: string[]; fileKey: string; partSize: number; lastPartSize: number; partsCount: number };
}

export async function putPart(url: string, bytes: Buffer): Promise<{ status: number; eTag: string | null; body: string }> {
  const res = await fetch(url, { method: 'PUT', body: bytes as Uint8Array<ArrayBuffer> });
  return { status: res.status, eTag: res.headers.get('etag'), body: await res.text() };
}

export const partsOf = (data: Buffer, partSize: number) =>
  Array.from({ length: Math.ceil(data.length / partSize) }, (_, i) => data.subarray(i * partSize, (i + 1) * partSize));

/** Starts, uploads every part and completes: a Completed file holding `data`. */
export async function uploadFile(t: TestTenant, name: string, data: Buffer, extra: Record<string, unknown> = {}) {
  const s = await startUpload(t, { name, fileSize: data.length, ...extra });
  const parts = partsOf(data, s.partSize);
  const sent = await Promise.all(s.multipartUrls.map((url, i) => putPart(url, parts[i])));
  for (const p of sent) expect(p.status, p.body).toBe(200);
  const done = await t.json('POST', '/vod/v1/files/complete', { fileId: s.fileId, parts: sent.map((p, i) => ({ partNumber: i + 1, eTag: p.eTag })) });
  expect(done.status, JSON.stringify(done.body)).toBe(200);
  return s;
}

/** The event types recorded for one object, oldest first. */
export async function eventTypes(p: TestPlatform, id: string): Promise<string[]> {
  const rows = await p.ctx.db.select().from(events).orderBy(events.occuredAt, events.id);
  return rows.filter((r) => r.data.id === id).map((r) => r.type);
}

export const uploadIdOf = (url: string) => new URL(url).searchParams.get('uploadId')!;
