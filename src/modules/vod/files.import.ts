import { extname } from 'node:path';
import { Readable } from 'node:stream';
import { and, eq } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { defineJob } from '../../jobs/queue.ts';
import { NotMediaError, ProbeUnavailableError } from '../../media/probe.ts';
import { hostRefusal } from '../../platform/addressGuard.ts';
import { DownloadRefusedError } from '../../platform/download.ts';
import { ApiError, validationError } from '../../platform/errors.ts';
import { recordEvent } from '../../platform/events.ts';
import { newId } from '../../platform/ids.ts';
import { openResumable } from '../../platform/resumableFetch.ts';
import { contentTypeOf } from '../../storage/contentTypes.ts';
import { fileTypeOfExtension, findFile, mediaFacts, probeStored, safeName, type FileRow } from './files.service.ts';
import { fileKey } from './storageKeys.ts';
import { vodFiles } from './files.tables.ts';

export interface ImportFileJob {
  tenantId: string;
  fileId: string;
}
const IMPORT_ATTEMPTS = 3;
/**
 * One fetch per attempt; an attempt still running after `expireInSeconds` is taken for a dead worker and run again
 * from the start. A failure that trying later may cure (a 5xx, connections that keep dropping) is retried.
 */
export const importFileJob = defineJob<ImportFileJob>('vod-file-import', { retryLimit: IMPORT_ATTEMPTS - 1, retryDelaySeconds: 10, expireInSeconds: 6 * 3600 });

export const FETCH_SETTING = 'MEDIAPLANE_FETCH_ALLOW_PRIVATE=true';
/** A connection that brings nothing for this long is dropped and resumed. */
const IDLE_TIMEOUT_MS = 30_000;
/** Reconnections in a row without a byte before the attempt fails. */
const MAX_RESUMES = 5;
const RESUME_DELAY_MS = 250;
/** `bytesReceived` is written at most this often; a write that finds the file no longer Uploading stops the fetch. */
const PROGRESS_WRITE_MS = 1000;
/** `vod.file.progress` at each new step of this many percent, at most once per interval (as outputs' progress). */
const PROGRESS_EVENT_STEP = 10;
const PROGRESS_EVENT_INTERVAL_MS = 5000;

export interface ImportRequest {
  url: string;
  name?: string;
  friendlyName?: string;
  metadata?: Record<string, string>;
  tags?: string[];
  attributes?: string[];
}

/** The URL as it will be fetched: absolute http(s), a host, no credentials, not a private address (unless allowed). */
async function checkImportUrl(raw: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw validationError('url', 'must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw validationError('url', `must use http or https, not ${url.protocol.slice(0, -1)}`);
  if (!url.hostname) throw validationError('url', 'must name a host');
  if (url.username || url.password) {
    throw validationError('url', 'must not carry credentials (user:password@): they would be stored and shown in clear; use a signed URL instead');
  }
  if (!allowPrivate) {
    const reason = await hostRefusal(url, FETCH_SETTING);
    if (reason) throw validationError('url', `${reason}: imports from private addresses are refused`);
  }
  return url;
}

/** The URL's last path segment, decoded: what a file fetched from it is called when no name is given. */
function nameFromUrl(url: URL): string {
  const last = url.pathname.split('/').filter(Boolean).pop() ?? '';
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/**
 * Creates a file in `Uploading` that the platform fills from `url` (`importFileJob`); it then completes, is probed and
 * is used exactly like an uploaded one. The URL is judged here as the fetch will judge it, and again at every hop.
 */
export async function importFile(ctx: PlatformContext, tenantId: string, req: ImportRequest) {
  const url = await checkImportUrl(req.url, ctx.config.fetchAllowPrivate);
  const name = req.name ?? nameFromUrl(url);
  const extension = extname(name).toLowerCase();
  const fileTypes = fileTypeOfExtension(extension);
  if (!fileTypes) {
    const field = req.name === undefined ? 'url' : 'name';
    throw new ApiError(
      400,
      'unsupported_file_type',
      `${field}: "${extension || 'no extension'}" is not an accepted file type; see GET /vod/v1/filetypes${req.name === undefined ? ' (or give a name)' : ''}`,
      [{ field, message: 'has an extension that is not accepted' }],
    );
  }
  const id = newId();
  const objectKey = fileKey(tenantId, id, safeName(name));
  const now = new Date();
  await ctx.db.transaction(async (tx) => {
    await tx.insert(vodFiles).values({
      id,
      createDate: now,
      lastModificationDate: now,
      tenantId,
      name,
      friendlyName: req.friendlyName ?? name,
      orginalFileName: name,
      extension,
      fileKey: objectKey,
      fileSize: 0,
      status: 'Uploading',
      fileTypes,
      metadata: req.metadata ?? {},
      tags: req.tags ?? [],
      attributes: req.attributes ?? [],
      partSize: 0,
      partsCount: 0,
      importUrl: url.href,
      bytesReceived: 0,
    });
    await recordEvent(tx, tenantId, 'vod.file.created', { id, name, importUrl: url.href });
    await ctx.jobs.send(importFileJob, { tenantId, fileId: id }, { tx });
  });
  return { fileId: id, fileKey: objectKey };
}

/** The file's row while it is still being imported; the condition every write of the job is made under. */
const stillImporting = (row: FileRow) => and(eq(vodFiles.tenantId, row.tenantId), eq(vodFiles.id, row.id), eq(vodFiles.status, 'Uploading'));

class ImportStopped extends Error {}

/**
 * Fetches an imported file into the store, then completes it as `completeUpload` does (probe, `vod.file.completed`).
 * `stopping` is the process shutting down: the attempt stops without failing the file, and a new job runs it again.
 */
export async function runImport(ctx: PlatformContext, j: ImportFileJob, attempt: number, stopping: AbortSignal): Promise<void> {
  const row = await findFile(ctx.db, j.tenantId, j.fileId);
  if (row?.status !== 'Uploading' || !row.importUrl) return; // cancelled, deleted or finished by an earlier attempt
  const log = ctx.log.child({ fileId: row.id });
  const abort = new AbortController();
  const stop = () => abort.abort(new ImportStopped('the platform is stopping'));
  stopping.addEventListener('abort', stop);
  let received = 0;
  try {
    const source = await openResumable(row.importUrl, {
      allowPrivate: ctx.config.fetchAllowPrivate,
      setting: FETCH_SETTING,
      timeoutMs: IDLE_TIMEOUT_MS,
      maxBytes: ctx.config.importMaxBytes,
      maxResumes: MAX_RESUMES,
      resumeDelayMs: RESUME_DELAY_MS,
      onResume: (at, reason) => log.info({ at, reason }, 'import connection dropped; resuming with a Range request'),
    });
    const size = source.size;
    if (size !== undefined) await ctx.db.update(vodFiles).set({ fileSize: size }).where(stillImporting(row));
    const progress = progressWriter(ctx, row, size, () => abort.abort(new ImportStopped('the file was cancelled or deleted')));
    const counted = async function* () {
      for await (const chunk of source.body) {
        if (abort.signal.aborted) throw abort.signal.reason;
        received += chunk.length;
        progress.report(received);
        yield chunk;
      }
    };
    const body = Readable.from(counted(), { objectMode: false });
    abort.signal.addEventListener('abort', () => body.destroy(abort.signal.reason as Error));
    try {
      await ctx.store.putObject(row.fileKey, body, contentTypeOf(row.fileKey));
    } finally {
      await progress.settled();
    }
    if (abort.signal.aborted) throw abort.signal.reason;
    await complete(ctx, row, received);
  } catch (e) {
    const reason = abort.signal.aborted ? (abort.signal.reason as Error) : (e as Error);
    if (reason instanceof ImportStopped) {
      log.info({ reason: reason.message }, 'import stopped');
      // The platform is stopping: a new job (its attempts counted afresh) runs the import again after the restart.
      if (stopping.aborted) await ctx.jobs.send(importFileJob, { tenantId: j.tenantId, fileId: j.fileId });
      return;
    }
    const final = reason instanceof DownloadRefusedError || attempt >= IMPORT_ATTEMPTS - 1;
    if (!final) throw reason;
    await fail(ctx, row, `The file could not be imported from ${row.importUrl}: ${reason.message}`);
  } finally {
    stopping.removeEventListener('abort', stop);
  }
}

async function complete(ctx: PlatformContext, row: FileRow, size: number): Promise<void> {
  const info = await probeStored(ctx, row.fileKey).catch((e) => {
    if (e instanceof NotMediaError || e instanceof ProbeUnavailableError) return undefined;
    throw e;
  });
  const done = await ctx.db.transaction(async (tx) => {
    const [updated] = await tx
      .update(vodFiles)
      .set({
        status: 'Completed',
        fileSize: size,
        bytesReceived: size,
        lastModificationDate: new Date(),
        ...(info ? mediaFacts(info) : {}),
      })
      .where(stillImporting(row))
      .returning();
    if (updated) await recordEvent(tx, row.tenantId, 'vod.file.completed', { id: row.id, fileSize: size, fileTypes: updated.fileTypes });
    return updated;
  });
  if (!done) {
    // Cancelled or deleted while the last bytes were stored: the object is nobody's. (Completed: by an earlier attempt
    // the queue took for dead; the object is the same file.)
    const now = await findFile(ctx.db, row.tenantId, row.id);
    if (now?.status !== 'Completed') await ctx.store.delete(row.fileKey).catch(() => {});
    return;
  }
  ctx.metrics.uploadBytes.inc(size);
}

async function fail(ctx: PlatformContext, row: FileRow, message: string): Promise<void> {
  await ctx.store.delete(row.fileKey).catch(() => {});
  await ctx.db.transaction(async (tx) => {
    const updated = await tx
      .update(vodFiles)
      .set({ status: 'Error', errorMessage: message, lastModificationDate: new Date() })
      .where(stillImporting(row))
      .returning({ id: vodFiles.id });
    if (updated.length) await recordEvent(tx, row.tenantId, 'vod.file.failed', { id: row.id, reason: 'import_failed', message });
  });
}

/**
 * Writes `bytesReceived` at most once a second, one write at a time, with a `vod.file.progress` event in the same
 * transaction at each new 10 % step (when the size is known). A write that finds the file gone or no longer Uploading
 * calls `gone`: the fetch stops.
 */
function progressWriter(ctx: PlatformContext, row: FileRow, size: number | undefined, gone: () => void) {
  let lastWrite = 0;
  let sentStep = 0;
  let lastEvent = 0;
  let chain: Promise<void> = Promise.resolve();
  const write = (bytesReceived: number, step: number | undefined) =>
    ctx.db.transaction(async (tx) => {
      const rows = await tx.update(vodFiles).set({ bytesReceived }).where(stillImporting(row)).returning({ id: vodFiles.id });
      if (!rows.length) return gone();
      if (step !== undefined) await recordEvent(tx, row.tenantId, 'vod.file.progress', { id: row.id, progressPercent: step, bytesReceived });
    });
  return {
    report(bytes: number) {
      const now = Date.now();
      if (now - lastWrite < PROGRESS_WRITE_MS) return;
      lastWrite = now;
      const percent = size ? Math.min(99, Math.floor((bytes * 100) / size)) : 0;
      const step = Math.floor(percent / PROGRESS_EVENT_STEP) * PROGRESS_EVENT_STEP;
      const send = step > sentStep && now - lastEvent >= PROGRESS_EVENT_INTERVAL_MS;
      if (send) {
        sentStep = step;
        lastEvent = now;
      }
      // Progress is a hint: a failed write is not worth failing the import for.
      chain = chain.then(() => write(bytes, send ? step : undefined)).catch(() => {});
    },
    settled: () => chain,
  };
}
