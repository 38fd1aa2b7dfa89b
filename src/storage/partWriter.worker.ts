import { close, closeSync, constants, fdatasync, openSync, renameSync, rmSync, write, writeFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { Md5State, Md5x4, md5Finish } from './md5x4.ts';
import { PER_PART, type PartRecord, type ToMain, type ToWorker } from './partWriter.ts';

/**
 * The other half of partWriter.ts: writes each slot the main thread filled to its part's file as it comes, and hashes
 * the parts four at a time, one per lane of the kernel, then hands the slots back. Every slot is handed back,
 * whatever happened to its part.
 *
 * Writes bypass the page cache where the file system allows (O_DIRECT): the disk reads the slot itself, so a GiB
 * uploaded costs no copy into the kernel and no page cache to allocate (what costs buffered writes most, in a VM
 * above all), and an upload does not push the rest of the machine's cache out. They go through libuv's thread pool,
 * so the kernel hashes while the disk writes. Direct I/O needs whole aligned blocks: a slot that is not (the end of
 * a part whose size is not a multiple of the block) goes through a second, ordinary descriptor.
 */
const { memory } = workerData as { memory: WebAssembly.Memory };
const bytes = new Uint8Array(memory.buffer); // fixed size: the memory never grows
const kernel = new Md5x4(memory, 0);
// One call over the (unused) slots at boot, so that V8 compiles the kernel's optimized code before the first part.
kernel.update(
  [new Md5State(), new Md5State(), new Md5State(), new Md5State()],
  [0, 1, 2, 3].map((i) => (i + 1) * 64 * 1024),
  1024,
);
const post = (message: ToMain) => parentPort!.postMessage(message);

/** Direct I/O alignment of offsets and lengths: the largest logical block size of the disks we may meet. */
const BLOCK = 4096;
const O_DIRECT = constants.O_DIRECT ?? 0;

interface Segment {
  offset: number;
  length: number;
  hashed: number;
  written: boolean;
}

interface Stream {
  id: number;
  path: string;
  record?: PartRecord;
  /** Opened with O_DIRECT, when the file system allows it. */
  direct?: number;
  /** The file system took the O_DIRECT open but refused a write (a block size above BLOCK): buffered from then on. */
  directRefused?: boolean;
  buffered?: number;
  position: number;
  size: number;
  md5: Md5State;
  /** Slots handed over, in order; the last one of an ended part may hold a partial block. */
  segments: Segment[];
  writing: number;
  ended: boolean;
  /** Why the part failed, once it has. */
  failed: false | Error;
}

const streams = new Map<number, Stream>();

function openFlags(flags: 'r+' | 'w'): number {
  return flags === 'w' ? constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC : constants.O_RDWR;
}

function open(message: Extract<ToWorker, { type: 'open' }>): Stream {
  const { path, flags, position, record } = message;
  const stream: Stream = { id: message.stream, path, position, record, size: 0, md5: new Md5State(), segments: [], writing: 0, ended: false, failed: false };
  if (record) rmSync(record.path, { force: true });
  if (O_DIRECT) {
    try {
      stream.direct = openSync(path, openFlags(flags) | O_DIRECT, 0o644);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EINVAL') throw e; // EINVAL: the file system has no direct I/O
    }
  }
  if (stream.direct === undefined) stream.buffered = openSync(path, openFlags(flags), 0o644);
  return stream;
}

function descriptor(stream: Stream, position: number, length: number): number {
  if (stream.direct !== undefined && !stream.directRefused && position % BLOCK === 0 && length % BLOCK === 0) return stream.direct;
  // Opened after the direct one (which created or truncated the file): 'r+' whatever the part's flags.
  return (stream.buffered ??= openSync(stream.path, constants.O_RDWR));
}

function closeAll(stream: Stream, flush: boolean): void {
  for (const fd of [stream.direct, stream.buffered]) {
    if (fd === undefined) continue;
    // Starts writing the part back now, in the background, so that the flush of the whole object at completion finds
    // little left to do; the ETag does not wait for it (see fsUploads.ts for why that is safe).
    if (flush) fdatasync(fd, () => close(fd, () => {}));
    else closeSync(fd);
  }
}

/**
 * Hands back the slot of a segment once its write is done and the hash no longer needs it: every byte hashed, and not
 * the tail of an ended part, which md5Finish reads (finish() hands that one back).
 */
function release(stream: Stream, segment: Segment): void {
  if (!segment.written) return;
  if (!stream.failed && (segment.hashed < segment.length || (stream.ended && segment === stream.segments.at(-1)))) return;
  stream.segments.splice(stream.segments.indexOf(segment), 1);
  post({ type: 'free', stream: stream.id, offset: segment.offset });
}

function fail(stream: Stream, error: NodeJS.ErrnoException): void {
  if (stream.failed) return;
  stream.failed = error;
  streams.delete(stream.id);
  // Slots still being written come back when their write ends (see writeSegment); the others now.
  for (const segment of [...stream.segments]) release(stream, segment);
  if (!stream.writing) answerFailed(stream);
}

/**
 * Answers a failed (or aborted) part once none of its writes is in flight, not before: a write still queued in the
 * thread pool would land after the answer, over the bytes of the next send of the same part, which the answer lets
 * start (fsUploads.ts serializes the sends of a part on these answers).
 */
function answerFailed(stream: Stream): void {
  closeAll(stream, false);
  const { code, message } = stream.failed as NodeJS.ErrnoException;
  post({ type: 'failed', stream: stream.id, code, message });
}

function writeSegment(stream: Stream, segment: Segment, position: number, done = 0): void {
  const fd = descriptor(stream, position + done, segment.length - done);
  write(fd, bytes, segment.offset + done, segment.length - done, position + done, (error, n) => {
    if (error?.code === 'EINVAL' && fd === stream.direct && !stream.failed) {
      stream.directRefused = true;
      return writeSegment(stream, segment, position, done);
    }
    if (!error && !stream.failed && done + n < segment.length) return writeSegment(stream, segment, position, done + n);
    stream.writing--;
    segment.written = true;
    if (error && !stream.failed) return fail(stream, error);
    release(stream, segment);
    if (!stream.failed) finish(stream);
    else if (!stream.writing) answerFailed(stream);
  });
}

function receive(message: ToWorker): void {
  if (message.type === 'open') {
    streams.set(message.stream, open(message));
    return;
  }
  const stream = streams.get(message.stream);
  if (message.type === 'abort') return void (stream && fail(stream, Object.assign(new Error('aborted'), { code: 'ABORTED' })));
  if (!stream) return void post({ type: 'free', stream: message.stream, offset: message.offset }); // failed
  const segment: Segment = { offset: message.offset, length: message.length, hashed: 0, written: false };
  stream.segments.push(segment);
  stream.ended = message.type === 'end';
  stream.writing++;
  writeSegment(stream, segment, stream.position + stream.size);
  stream.size += segment.length;
}

/** Answers the part once every byte is written and every whole block hashed. */
function finish(stream: Stream): void {
  if (!stream.ended || stream.writing || stream.segments.length !== 1 || stream.failed) return;
  const [last] = stream.segments;
  if (last.length - last.hashed >= 64) return;
  const eTag = `"${md5Finish(kernel, stream.md5, bytes.subarray(last.offset + last.hashed, last.offset + last.length))}"`;
  streams.delete(stream.id);
  stream.segments.length = 0;
  post({ type: 'free', stream: stream.id, offset: last.offset });
  try {
    if (stream.record) writeRecord(stream.record, { eTag, size: stream.size });
  } catch (e) {
    stream.failed = e as Error;
    return answerFailed(stream); // every write has ended
  }
  post({ type: 'done', stream: stream.id, eTag, size: stream.size });
  closeAll(stream, true);
}

let records = 0;
function writeRecord(record: PartRecord, part: { eTag: string; size: number }): void {
  const tmp = `${record.path}.${process.pid}.${++records}.tmp`;
  try {
    writeFileSync(tmp, JSON.stringify({ ...part, ...record.fields }));
    renameSync(tmp, record.path);
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** The segment the hash is at: the first with bytes not hashed. */
const hashing = (s: Stream) => s.segments.find((x) => x.hashed < x.length);
const wholeBlocks = (s: Stream) => {
  const segment = hashing(s);
  return segment ? Math.floor((segment.length - segment.hashed) / 64) : 0;
};

/** How long fewer than four parts with data wait for others before they are hashed anyway. */
const GATHER_MS = 20;

let gathering: NodeJS.Timeout | undefined;

/**
 * One kernel call over the parts with whole blocks waiting, four at a time (those with the most first), then finishes
 * ended parts; then yields to the event loop, so that the next call sees the slots that arrived meanwhile. A lane
 * left idle costs as much as a busy one, so when fewer parts have data than are being received, they wait up to
 * GATHER_MS for the others, unless one holds all the slots it may (its sender waits on us) or has ended (its answer
 * waits on us).
 */
function hash(waited = false): void {
  const ready = [...streams.values()].filter((s) => wholeBlocks(s) > 0);
  const receiving = [...streams.values()].filter((s) => !s.ended).length;
  if (ready.length && ready.length < Math.min(4, receiving) && !waited && !ready.some((s) => s.ended || s.segments.length >= PER_PART)) {
    gathering ??= setTimeout(() => {
      gathering = undefined;
      hash(true);
    }, GATHER_MS);
  } else if (ready.length) {
    const lanes = ready.sort((a, b) => wholeBlocks(b) - wholeBlocks(a)).slice(0, 4);
    const segments = lanes.map((s) => hashing(s)!);
    const blocks = Math.min(...lanes.map(wholeBlocks));
    kernel.update(
      lanes.map((s) => s.md5),
      segments.map((x) => x.offset + x.hashed),
      blocks,
    );
    lanes.forEach((s, i) => {
      segments[i].hashed += blocks * 64;
      release(s, segments[i]);
    });
    schedule();
  }
  for (const s of [...streams.values()]) finish(s);
}

let scheduled = false;
function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(() => {
    scheduled = false;
    hash();
  });
}

parentPort!.on('message', (message: ToWorker) => {
  try {
    receive(message);
  } catch (e) {
    const stream = streams.get(message.stream);
    if (stream) fail(stream, e as NodeJS.ErrnoException);
    else post({ type: 'failed', stream: message.stream, code: (e as NodeJS.ErrnoException).code, message: (e as Error).message });
  }
  // After the messages already queued, so that the parts that arrived together are hashed together.
  schedule();
});
