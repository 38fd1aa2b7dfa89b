import { createHash, randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { MD5X4_SCRATCH_BYTES, Md5State, Md5x4, md5Finish, md5x4ModuleBytes } from '../../src/storage/md5x4.ts';

const md5 = (data: Uint8Array) => createHash('md5').update(data).digest('hex');
const PAGE = 65536;

/** A small deterministic PRNG, so that a failing schedule can be replayed. */
function prng(seed: number) {
  return (n: number) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return Math.floor((seed / 2 ** 32) * n);
  };
}

/**
 * Hashes each input in its own lane: copies the inputs into the memory, runs the kernel over their whole blocks in
 * calls of at most `maxBlocks`, letting lanes that have run out go idle, then finishes each with its tail.
 */
function hashLanes(kernel: Md5x4, inputs: Uint8Array[], at: number, maxBlocks = 1 << 30): string[] {
  const mem = () => new Uint8Array(kernel.memory.buffer);
  const starts: number[] = [];
  for (const input of inputs) {
    starts.push(at);
    mem().set(input, at);
    at += input.length + 64;
  }
  const states = inputs.map(() => new Md5State());
  const left = inputs.map((input) => Math.floor(input.length / 64));
  for (;;) {
    const busy = left.map((n) => n > 0);
    if (!busy.includes(true)) break;
    const blocks = Math.min(maxBlocks, ...left.filter((n) => n > 0));
    kernel.update(
      states.map((s, k) => (busy[k] ? s : undefined)),
      states.map((s, k) => starts[k] + s.bytes),
      blocks,
    );
    for (let k = 0; k < left.length; k++) if (busy[k]) left[k] -= blocks;
  }
  return inputs.map((input, k) => md5Finish(kernel, states[k], input.subarray(states[k].bytes)));
}

function memoryFor(bytes: number, shared = false): WebAssembly.Memory {
  const pages = Math.ceil((MD5X4_SCRATCH_BYTES + bytes) / PAGE) + 1;
  return shared ? new WebAssembly.Memory({ initial: pages, maximum: pages * 2, shared: true }) : new WebAssembly.Memory({ initial: pages });
}

describe('md5x4 module', () => {
  it('validates, shared and not', () => {
    expect(WebAssembly.validate(md5x4ModuleBytes(false))).toBe(true);
    expect(WebAssembly.validate(md5x4ModuleBytes(true))).toBe(true);
  });
});

describe('Md5x4', () => {
  it('gives the RFC 1321 test suite digests', () => {
    const kernel = new Md5x4();
    const suite: [string, string][] = [
      ['', 'd41d8cd98f00b204e9800998ecf8427e'],
      ['a', '0cc175b9c0f1b6a831c399e269772661'],
      ['abc', '900150983cd24fb0d6963f7d28e17f72'],
      ['message digest', 'f96b697d7cb7938d525a2f31aaf161d0'],
      ['abcdefghijklmnopqrstuvwxyz', 'c3fcd3d76192e4007dfb496cca67e13b'],
      ['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', 'd174ab98d277d9f5a5611c2c9f419d9f'],
      ['1234567890'.repeat(8), '57edf4a22be3c955ac49da2e2107b67a'],
    ];
    for (const [text, digest] of suite) expect(md5Finish(kernel, new Md5State(), Buffer.from(text))).toBe(digest);
    // through the kernel's bulk path too, four at a time
    const inputs = suite.map(([text]) => Buffer.from(text.repeat(3)));
    const got = [...hashLanes(kernel, inputs.slice(0, 4), MD5X4_SCRATCH_BYTES), ...hashLanes(kernel, inputs.slice(4), MD5X4_SCRATCH_BYTES)];
    expect(got).toEqual(inputs.map(md5));
  });

  it('matches node:crypto for four lanes of different data and lengths', () => {
    const lengths = [0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 1000, 4096, 1024 * 1024 + 17, 333_333, 64 * 100 + 55];
    const inputs = lengths.map((n) => randomBytes(n));
    const kernel = new Md5x4(memoryFor(lengths.reduce((a, b) => a + b + 64, 0)));
    for (let i = 0; i < inputs.length; i += 4) {
      const four = inputs.slice(i, i + 4);
      expect(hashLanes(kernel, four, MD5X4_SCRATCH_BYTES)).toEqual(four.map(md5));
    }
    // all sixteen again, lanes shuffled, in small calls so that they advance together
    const order = [13, 0, 7, 11];
    expect(
      hashLanes(
        kernel,
        order.map((i) => inputs[i]),
        MD5X4_SCRATCH_BYTES,
        5,
      ),
    ).toEqual(order.map((i) => md5(inputs[i])));
  });

  it('hashes fewer than four lanes, in any lane', () => {
    const kernel = new Md5x4(memoryFor(8192));
    const data = randomBytes(64 * 10 + 3);
    new Uint8Array(kernel.memory.buffer).set(data, 4096);
    const state = new Md5State();
    kernel.update([undefined, undefined, state], [0, 0, 4096], 10);
    expect(state.bytes).toBe(640);
    expect(md5Finish(kernel, state, data.subarray(640))).toBe(md5(data));
  });

  it('keeps idle lanes as they were while others advance by different amounts', () => {
    const rand = prng(1321);
    const laneBytes = 64 * 2000;
    const kernel = new Md5x4(memoryFor(4 * laneBytes));
    const data = [0, 1, 2, 3].map(() => randomBytes(laneBytes));
    const start = (k: number) => MD5X4_SCRATCH_BYTES + k * laneBytes;
    data.forEach((d, k) => new Uint8Array(kernel.memory.buffer).set(d, start(k)));
    const states = [0, 1, 2, 3].map(() => new Md5State());
    for (let call = 0; call < 60; call++) {
      const lanes = [0, 1, 2, 3].filter(() => rand(3) > 0);
      const room = Math.min(...lanes.map((k) => (laneBytes - states[k].bytes) / 64));
      if (lanes.length === 0 || room === 0) continue;
      const before = states.map((s) => [...s.words, s.bytes]);
      kernel.update(
        states.map((s, k) => (lanes.includes(k) ? s : undefined)),
        states.map((s, k) => start(k) + s.bytes),
        1 + rand(Math.min(room, 40)),
      );
      for (let k = 0; k < 4; k++) if (!lanes.includes(k)) expect([...states[k].words, states[k].bytes]).toEqual(before[k]);
    }
    for (let k = 0; k < 4; k++) {
      const n = states[k].bytes;
      expect(n).toBeGreaterThan(0);
      const tail = data[k].subarray(n, n + rand(200));
      expect(md5Finish(kernel, states[k], tail)).toBe(md5(data[k].subarray(0, n + tail.length)));
    }
  });

  it('finishes a tail longer than its staging area, and leaves the state as it was', () => {
    const kernel = new Md5x4();
    const data = randomBytes(64 * 3 + 5000);
    new Uint8Array(kernel.memory.buffer).set(data.subarray(0, 192), 4096);
    const state = new Md5State();
    kernel.update([state], [4096], 3);
    const words = [...state.words];
    expect(md5Finish(kernel, state, data.subarray(192))).toBe(md5(data));
    expect([...state.words]).toEqual(words);
    expect(state.bytes).toBe(192);
  });

  it('finishes tails of every length up to 1100 bytes without writing past its scratch area', () => {
    const kernel = new Md5x4();
    const data = randomBytes(1100);
    const sentinel = randomBytes(4096);
    const bytes = new Uint8Array(kernel.memory.buffer);
    bytes.set(sentinel, MD5X4_SCRATCH_BYTES);
    for (let n = 0; n <= data.length; n++) expect(md5Finish(kernel, new Md5State(), data.subarray(0, n))).toBe(md5(data.subarray(0, n)));
    expect(Buffer.from(bytes.subarray(MD5X4_SCRATCH_BYTES, MD5X4_SCRATCH_BYTES + 4096)).equals(sentinel)).toBe(true);
  });

  it('hashes a shared memory that another thread filled', async () => {
    const lane = 256 * 1024 + 64 * 3;
    const memory = memoryFor(4 * lane, true);
    expect(memory.buffer).toBeInstanceOf(SharedArrayBuffer);
    const worker = new Worker(
      `const { workerData, parentPort } = require('node:worker_threads');
       const { randomFillSync, createHash } = require('node:crypto');
       const { memory, at, lane } = workerData;
       const digests = [];
       for (let k = 0; k < 4; k++) {
         const view = new Uint8Array(memory.buffer, at + k * lane, lane - k * 37);
         randomFillSync(view);
         digests.push(createHash('md5').update(view).digest('hex'));
       }
       parentPort.postMessage(digests);`,
      { eval: true, workerData: { memory, at: MD5X4_SCRATCH_BYTES, lane } },
    );
    const expected = await new Promise<string[]>((resolve, reject) => worker.once('message', resolve).once('error', reject));
    await worker.terminate();

    const kernel = new Md5x4(memory);
    const bytes = new Uint8Array(memory.buffer);
    const states = [0, 1, 2, 3].map(() => new Md5State());
    const starts = [0, 1, 2, 3].map((k) => MD5X4_SCRATCH_BYTES + k * lane);
    const lengths = [0, 1, 2, 3].map((k) => lane - k * 37);
    const whole = Math.min(...lengths.map((n) => Math.floor(n / 64)));
    kernel.update(states, starts, whole);
    const digests = states.map((s, k) => md5Finish(kernel, s, bytes.subarray(starts[k] + s.bytes, starts[k] + lengths[k])));
    expect(digests).toEqual(expected);
  });

  it('follows the memory when it grows, and keeps to its own scratch area', () => {
    for (const shared of [false, true]) {
      const memory = memoryFor(PAGE, shared);
      const kernels = [new Md5x4(memory, 0), new Md5x4(memory, 2048)];
      const data = randomBytes(64 * 50 + 9);
      memory.grow(2);
      const at = memory.buffer.byteLength - PAGE;
      new Uint8Array(memory.buffer).set(data, at);
      const states = [new Md5State(), new Md5State()];
      kernels[0].update([states[0]], [at], 20);
      kernels[1].update([undefined, states[1]], [0, at], 50);
      kernels[0].update([states[0]], [at + 20 * 64], 30);
      expect(kernels.map((k, i) => md5Finish(k, states[i], data.subarray(3200)))).toEqual([md5(data), md5(data)]);
    }
  });

  it('refuses lane data outside the memory and bad arguments', () => {
    const kernel = new Md5x4();
    const state = new Md5State();
    expect(() => kernel.update([state], [PAGE - 32], 1)).toThrow(RangeError);
    expect(() => kernel.update([state], [-64], 1)).toThrow(RangeError);
    expect(() => kernel.update([state], [4096], 1.5)).toThrow(RangeError);
    expect(() => new Md5x4(undefined, 8)).toThrow(RangeError);
    expect(state.bytes).toBe(0);
    kernel.update([state], [4096], 0);
    kernel.update([undefined, undefined], [0, 0], 10);
    expect(state.bytes).toBe(0);
  });
});
