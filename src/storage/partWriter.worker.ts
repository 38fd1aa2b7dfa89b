import { close as closeAsync, closeSync, fdatasync, openSync, writeSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { Md5State, Md5x4, md5Finish } from './md5x4.ts';
import { PER_PART, type ToMain, type ToWorker } from './partWriter.ts';

/**
 * The other half of partWriter.ts: writes each slot the main thread filled to its part's file as it comes, and hashes
 * the parts four at a time, one per lane of the kernel, then hands the slots back. Every slot is handed back,
 * whatever happened to its part.
 */
const { memory } = workerData as { memory: WebAssembly.Memory };
const bytes = new Uint8Array(memory.buffer); // fixed size: the memory never grows
const kernel = new Md5x4(memory, 0);
const post = (message: ToMain) => parentPort!.postMessage(message);

interface Segment {
  offset: number;
  length: number;
  hashed: number;
}

interface Stream {
  fd: number;
  position: number;
  size: number;
  md5: Md5State;
  /** Slots written, waiting to be hashed, in order; the last one of an ended part may hold a partial block. */
  segments: Segment[];
  ended: boolean;
}

const streams = new Map<number, Stream>();

function drop(id: number): void {
  const stream = streams.get(id);
  if (!stream) return;
  streams.delete(id);
  for (const segment of stream.segments) post({ type: 'free', stream: id, offset: segment.offset });
  closeSync(stream.fd);
}

function receive(message: ToWorker): void {
  if (message.type === 'open') {
    const fd = openSync(message.path, message.flags);
    streams.set(message.stream, { fd, position: message.position, size: 0, md5: new Md5State(), segments: [], ended: false });
    return;
  }
  if (message.type === 'abort') return drop(message.stream);
  const stream = streams.get(message.stream);
  if (!stream) return void post({ type: 'free', stream: message.stream, offset: message.offset }); // aborted or failed
  stream.segments.push({ offset: message.offset, length: message.length, hashed: 0 });
  stream.ended = message.type === 'end';
  const slot = bytes.subarray(message.offset, message.offset + message.length);
  for (let done = 0; done < slot.length; ) done += writeSync(stream.fd, slot, done, slot.length - done, stream.position + stream.size + done);
  stream.size += slot.length;
}

const wholeBlocks = (s: Stream) => (s.segments.length ? Math.floor((s.segments[0].length - s.segments[0].hashed) / 64) : 0);

/** How long fewer than four parts with data wait for others before they are hashed anyway. */
const GATHER_MS = 5;
let gathering: NodeJS.Timeout | undefined;

/**
 * Hashes the parts with whole blocks waiting, four at a time (those with the most first), then finishes ended parts.
 * A lane left idle costs as much as a busy one, so fewer than four parts wait up to GATHER_MS for others, unless one
 * holds all the slots it may (its sender waits on us).
 */
function hash(waited = false): void {
  for (;;) {
    const ready = [...streams.entries()].filter(([, s]) => wholeBlocks(s) > 0);
    if (!ready.length) break;
    if (ready.length < 4 && !waited && !ready.some(([, s]) => s.segments.length >= PER_PART)) {
      gathering ??= setTimeout(() => {
        gathering = undefined;
        hash(true);
      }, GATHER_MS);
      break;
    }
    const lanes = ready.sort(([, a], [, b]) => wholeBlocks(b) - wholeBlocks(a)).slice(0, 4);
    const blocks = Math.min(...lanes.map(([, s]) => wholeBlocks(s)));
    kernel.update(lanes.map(([, s]) => s.md5), lanes.map(([, s]) => s.segments[0].offset + s.segments[0].hashed), blocks);
    for (const [id, s] of lanes) {
      const segment = s.segments[0];
      segment.hashed += blocks * 64;
      if (segment.hashed === segment.length && (s.segments.length > 1 || !s.ended)) {
        s.segments.shift();
        post({ type: 'free', stream: id, offset: segment.offset });
      }
    }
  }
  for (const [id, s] of streams) {
    if (!s.ended || s.segments.length !== 1) continue;
    const [last] = s.segments;
    const eTag = `"${md5Finish(kernel, s.md5, bytes.subarray(last.offset + last.hashed, last.offset + last.length))}"`;
    streams.delete(id);
    post({ type: 'free', stream: id, offset: last.offset });
    post({ type: 'done', stream: id, eTag, size: s.size });
    // Start writing the part back now, in the background, so that the flush of the whole object at completion finds
    // little left to do; the ETag does not wait for it (see fsUploads.ts for why that is safe).
    fdatasync(s.fd, () => closeAsync(s.fd, () => {}));
  }
}

let hashing = false;
parentPort!.on('message', (message: ToWorker) => {
  try {
    receive(message);
  } catch (e) {
    try {
      drop(message.stream);
    } catch {}
    post({ type: 'failed', stream: message.stream, code: (e as NodeJS.ErrnoException).code, message: (e as Error).message });
  }
  // After the messages already queued, so that the parts that arrived together are hashed together.
  if (!hashing) {
    hashing = true;
    setImmediate(() => {
      hashing = false;
      hash();
    });
  }
});
