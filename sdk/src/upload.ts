import { backoff, linkedController, sleep } from './abort.ts';
import type { Client, FetchLike } from './client.ts';
import { MediaplaneError } from './errors.ts';
import type { BodyOf } from './types.ts';

export interface UploadProgress {
  /** Bytes sent so far (a part sent again counts from zero again). */
  loaded: number;
  total: number;
  partsDone: number;
  partsCount: number;
}

type StartBody = BodyOf<'POST', '/vod/v1/files/start'>;

export interface UploadOptions {
  /**
   * The module whose files API the upload goes to: `vod` (a VOD source file, the default) or `watermarking` (a suspect
   * file for watermark detection: the same parts and answers, but no `friendlyName`, `metadata`, `tags` or
   * `attributes`, and no cancel operation: a failed upload stays `Uploading` there).
   */
  module?: 'vod' | 'watermarking';
  /** The file's `name` (default: the path's or the `File`'s name). */
  name?: string;
  /** The file's `friendlyName` (default: its name). */
  friendlyName?: string;
  metadata?: StartBody['metadata'];
  tags?: StartBody['tags'];
  attributes?: StartBody['attributes'];
  /** Called as bytes go out (in Node and browsers with XMLHttpRequest), and as each part completes. */
  onProgress?: (progress: UploadProgress) => void;
  /** Parts in flight at once (default 4). */
  concurrency?: number;
  /** Times a failed part is sent again, each after a growing pause (default 3). */
  retries?: number;
  /** Aborts the upload: parts in flight stop, the upload is cancelled on the platform (unless `keep`), and the call rejects. */
  signal?: AbortSignal;
  /**
   * An upload started before (by this or another process, e.g. a browser page since reloaded): its parts already
   * stored are not sent again, the others are sent with fresh URLs, then it is completed. `source` must be the same file.
   */
  resume?: UploadState;
  /** Told after the start and after each part is stored: keep it (it holds no secret) to `resume` the upload later. */
  onState?: (state: UploadState) => void;
  /** On failure or abort, leave the upload on the platform to be resumed, instead of cancelling it and deleting its parts. */
  keep?: boolean;
}

/** Where an upload stands: what `resume` needs to send only the parts that are missing. */
export interface UploadState {
  fileId: string;
  fileSize: number;
  partSize: number;
  partsCount: number;
  /** The parts stored so far, with the ETags the store answered. */
  parts: { partNumber: number; eTag?: string }[];
}

export interface UploadResult {
  fileId: string;
  fileKey: string;
}

/** Part answers worth sending again: the store was busy, timed out or failed; 403 after a fresh URL (it expired). */
const RETRIED = (status: number) => status === 403 || status === 408 || status === 429 || status >= 500;

/**
 * `POST /vod/v1/files/start`, then every part PUT to its presigned URL (`concurrency` at once, a failed part sent
 * again up to `retries` times, with a fresh URL when the store refused the old one), the ETags kept, then
 * `POST /vod/v1/files/complete` (`/watermarking/v1/files/...` with `module: 'watermarking'`).
 */
export async function uploadFile(client: Client, send: FetchLike, source: string | Blob, options: UploadOptions = {}): Promise<UploadResult> {
  const { concurrency = 4, retries = 3, onProgress, signal } = options;
  const file = await openSource(source, options.name);
  const { name } = file;
  signal?.throwIfAborted();
  const { resume } = options;
  if (resume && resume.fileSize !== file.size)
    throw new MediaplaneError(0, 'upload_resume_mismatch', `${name} has ${file.size} bytes, the upload to resume ${resume.fileSize}`);
  const api = filesApi(client, options);
  const start = resume ? { ...resume, multipartUrls: [] as string[] } : await api.start(name, file.size, signal);
  const { fileId, partSize, partsCount } = start;
  const urls: (string | undefined)[] = [...start.multipartUrls];
  const eTags: (string | undefined)[] = new Array(partsCount);
  const done = new Array<boolean>(partsCount).fill(false);
  const sent = new Array<number>(partsCount).fill(0);
  let partsDone = 0;
  for (const p of resume?.parts ?? []) {
    const i = p.partNumber - 1;
    if (i < 0 || i >= partsCount || done[i]) continue;
    done[i] = true;
    eTags[i] = p.eTag;
    sent[i] = Math.min(file.size, (i + 1) * partSize) - i * partSize;
    partsDone++;
  }
  const state = (): UploadState => ({
    fileId,
    fileSize: file.size,
    partSize,
    partsCount,
    parts: done.flatMap((d, i) => (d ? [{ partNumber: i + 1, ...(eTags[i] ? { eTag: eTags[i] } : {}) }] : [])),
  });
  const report = () => onProgress?.({ loaded: sent.reduce((a, b) => a + b, 0), total: file.size, partsDone, partsCount });
  options.onState?.(state());
  report();
  const missing = done.flatMap((d, i) => (d ? [] : [i]));

  // One failed part (after its retries) stops the others; so does the caller's signal.
  const stop = linkedController(signal);
  const freshUrl = (index: number) => api.partUrl(fileId, index + 1, stop.signal);
  let next = 0;
  const sendPart = async (index: number) => {
    // A resumed upload has no URLs yet: each part asks for its own.
    if (!urls[index]) urls[index] = await freshUrl(index);
    const part = { start: index * partSize, end: Math.min(file.size, (index + 1) * partSize) };
    const partBytes = part.end - part.start;
    for (let attempt = 0; ; attempt++) {
      sent[index] = 0;
      try {
        const { status, eTag } = await putPart(send, urls[index]!, file, part, (n) => ((sent[index] += n), report()), stop.signal);
        if (status >= 200 && status < 300) {
          eTags[index] = eTag;
          done[index] = true;
          sent[index] = partBytes;
          partsDone++;
          options.onState?.(state());
          report();
          return;
        }
        if (attempt >= retries || !RETRIED(status))
          throw new MediaplaneError(status, 'upload_part_failed', `part ${index + 1} of ${name}: the store answered ${status}`);
        if (status === 403) urls[index] = await freshUrl(index);
      } catch (e) {
        if (stop.signal.aborted || e instanceof MediaplaneError || attempt >= retries) throw e;
      }
      await sleep(backoff(attempt, 500), stop.signal);
    }
  };

  try {
    await Promise.all(
      Array.from({ length: Math.max(1, Math.min(concurrency, missing.length)) }, async () => {
        while (next < missing.length && !stop.signal.aborted) {
          const index = missing[next++]!;
          try {
            await sendPart(index);
          } catch (e) {
            if (!stop.signal.aborted) stop.abort(e);
            throw e;
          }
        }
      }),
    );
    const parts = eTags.map((eTag, i) => ({ partNumber: i + 1, ...(eTag ? { eTag } : {}) }));
    return await api.complete(fileId, parts, signal);
  } catch (e) {
    // Frees the parts already stored; the upload would otherwise wait for MEDIAPLANE_UPLOAD_TTL_HOURS.
    if (!options.keep) await api.cancel(fileId).catch(() => {});
    throw signal?.aborted ? signal.reason : stop.signal.aborted && stop.signal.reason !== undefined ? stop.signal.reason : e;
  }
}

/** The four calls of an upload, to VOD's files API or to watermarking's (whose part number is `{nr}`, and which has no cancel). */
function filesApi(client: Client, options: UploadOptions) {
  type Parts = { partNumber: number; eTag?: string }[];
  if (options.module === 'watermarking')
    return {
      start: (name: string, fileSize: number, signal?: AbortSignal) => client.request('POST', '/watermarking/v1/files/start', { name, fileSize }, { signal }),
      partUrl: async (id: string, nr: number, signal: AbortSignal) =>
        (await client.request('GET', '/watermarking/v1/files/{id}/part/{nr}', undefined, { params: { id, nr }, signal })).url,
      complete: (fileId: string, parts: Parts, signal?: AbortSignal) =>
        client.request('POST', '/watermarking/v1/files/complete', { fileId, parts }, { signal }),
      cancel: (): Promise<unknown> => Promise.resolve(),
    };
  return {
    start: (name: string, fileSize: number, signal?: AbortSignal) =>
      client.request(
        'POST',
        '/vod/v1/files/start',
        {
          name,
          friendlyName: options.friendlyName ?? name,
          fileSize,
          ...(options.metadata ? { metadata: options.metadata } : {}),
          ...(options.tags ? { tags: options.tags } : {}),
          ...(options.attributes ? { attributes: options.attributes } : {}),
        },
        { signal },
      ),
    partUrl: async (id: string, partNumber: number, signal: AbortSignal) =>
      (await client.request('GET', '/vod/v1/files/{id}/part/{partNumber}', undefined, { params: { id, partNumber }, signal })).url,
    complete: (fileId: string, parts: Parts, signal?: AbortSignal) => client.request('POST', '/vod/v1/files/complete', { fileId, parts }, { signal }),
    cancel: (fileId: string) => client.request('POST', '/vod/v1/files/{id}/cancel', { delete: true }, { params: { id: fileId } }),
  };
}

/** What is uploaded: its bytes by range, as a stream (fetch), and as a Blob when it is one (XMLHttpRequest). */
interface Source {
  name: string;
  size: number;
  blob?: Blob;
  stream(start: number, end: number): ReadableStream<Uint8Array>;
}

async function openSource(source: string | Blob, name?: string): Promise<Source> {
  if (typeof source !== 'string') {
    return {
      name: name ?? (source as Partial<File>).name ?? 'upload',
      size: source.size,
      blob: source,
      stream: (start, end) => source.slice(start, end).stream(),
    };
  }
  // Node only (a path); the specifiers are variables so that browser bundlers leave them alone. Each part reads its
  // range through a stream of its own: parts read in parallel from one `fs.openAsBlob` were seen to get one another's
  // bytes on Node 20.
  const [fsModule, streamModule] = ['node:fs', 'node:stream'];
  const [fs, { Readable }] = (await Promise.all([import(/* @vite-ignore */ fsModule), import(/* @vite-ignore */ streamModule)])) as [NodeFs, NodeStream];
  const { size } = await fs.promises.stat(source);
  return {
    name: name ?? source.split(/[\\/]/).pop()!,
    size,
    stream: (start, end) => Readable.toWeb(fs.createReadStream(source, { start, end: end - 1 })),
  };
}

/** The few Node APIs a path needs, typed here: the SDK is compiled without Node's types (it runs in browsers). */
interface NodeFs {
  promises: { stat(path: string): Promise<{ size: number }> };
  createReadStream(path: string, range: { start: number; end: number }): unknown;
}
interface NodeStream {
  Readable: { toWeb(stream: unknown): ReadableStream<Uint8Array> };
}

interface PartAnswer {
  status: number;
  eTag?: string;
}

/**
 * PUTs one part and tells each chunk of bytes as it goes out: with XMLHttpRequest where there is one (browsers: fetch
 * cannot report upload progress there), else with fetch, the body streamed through a counter (Node).
 */
function putPart(
  send: FetchLike,
  url: string,
  file: Source,
  { start, end }: { start: number; end: number },
  onBytes: (n: number) => void,
  signal: AbortSignal,
): Promise<PartAnswer> {
  if (typeof XMLHttpRequest !== 'undefined' && file.blob) return putWithXhr(url, file.blob.slice(start, end), onBytes, signal);
  return putWithFetch(send, url, file.stream(start, end), end - start, onBytes, signal);
}

async function putWithFetch(
  send: FetchLike,
  url: string,
  part: ReadableStream<Uint8Array>,
  size: number,
  onBytes: (n: number) => void,
  signal: AbortSignal,
): Promise<PartAnswer> {
  const counted = part.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        onBytes(chunk.byteLength);
        controller.enqueue(chunk);
      },
    }),
  );
  const res = await send(url, {
    method: 'PUT',
    body: counted,
    // A streamed body is sent with its length (S3 refuses a part without one), not chunked.
    headers: { 'content-length': String(size) },
    signal,
    duplex: 'half',
  } as RequestInit);
  await res.body?.cancel().catch(() => {});
  return { status: res.status, eTag: res.headers.get('etag') ?? undefined };
}

function putWithXhr(url: string, part: Blob, onBytes: (n: number) => void, signal: AbortSignal): Promise<PartAnswer> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    let reported = 0;
    xhr.upload.onprogress = (e) => {
      onBytes(e.loaded - reported);
      reported = e.loaded;
    };
    xhr.onload = () => resolve({ status: xhr.status, eTag: xhr.getResponseHeader('etag') ?? undefined });
    xhr.onerror = () => reject(new TypeError(`part upload to the store failed (network error)`));
    xhr.onabort = () => reject(signal.reason);
    signal.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.open('PUT', url);
    xhr.send(part);
  });
}
