/**
 * Multi-buffer MD5: one WebAssembly SIMD kernel runs MD5 on four independent streams at once, stream K in 32-bit
 * lane K of every i32x4 vector (the technique of Intel isa-l's md5_mb and minio/md5-simd). MD5 is sequential within
 * a stream, so one stream can't beat OpenSSL; but the parts of an upload in flight are independent streams, and
 * four hashed together here take about 1.3 times as long as one through OpenSSL (~1.5 GB/s in all against ~0.5).
 *
 * The module's bytes are generated here at load time, with no .wasm file or toolchain: a minimal binary emitter and
 * a code generator that unrolls the 64 steps of a block. The module imports its memory (`env.memory`) so that the
 * caller can give it a shared memory whose buffer another thread fills.
 *
 * Memory layout. A kernel owns MD5X4_SCRATCH_BYTES at `scratch` (0 unless its constructor is told otherwise):
 *   scratch + 0    64 B    state vectors A, B, C, D, 16 B each; lane K of each is stream K's word
 *   scratch + 64   1024 B  staging for md5Finish: a stream's tail and its padding
 * The rest of the memory is the caller's: data to hash may be anywhere outside the scratch area (no alignment
 * needed). Kernels on one shared memory, say one per thread, each need a scratch area of their own.
 */

/** Bytes a kernel uses at its `scratch` offset; callers keep their data out of [scratch, scratch + this). */
export const MD5X4_SCRATCH_BYTES = 1088;

const STATE_OFFSET = 0;
const STAGE_OFFSET = 64;
const STAGE_BYTES = 1024;

// ---- MD5 (RFC 1321) ----

const K = [
  0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122,
  0xfd987193, 0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6,
  0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60,
  0xbebfbc70, 0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039,
  0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1, 0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
];
const SHIFTS = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21];
const IV = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476];

/** The message word that step i adds. */
function wordIndex(i: number): number {
  const round = i >> 4;
  return round === 0 ? i : round === 1 ? (5 * i + 1) & 15 : round === 2 ? (3 * i + 5) & 15 : (7 * i) & 15;
}

// ---- binary emitter ----

function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) return [...out, byte];
    out.push(byte | 0x80);
  }
}

const name = (s: string) => [...uleb(Buffer.byteLength(s)), ...Buffer.from(s)];
const section = (id: number, body: number[]) => [id, ...uleb(body.length), ...body];
/** The binary format's vector: a count, then the items. */
const vec = (items: number[][]) => [...uleb(items.length), ...items.flat()];

const I32 = 0x7f;
const V128 = 0x7b;

/** A function body's instructions. SIMD opcodes are the prefix 0xfd and a LEB128 sub-opcode. */
class Code {
  readonly bytes: number[] = [];
  private op(...b: number[]) {
    this.bytes.push(...b);
    return this;
  }
  private simd(sub: number, ...imm: number[]) {
    return this.op(0xfd, ...uleb(sub), ...imm);
  }
  get(local: number) {
    return this.op(0x20, ...uleb(local));
  }
  set(local: number) {
    return this.op(0x21, ...uleb(local));
  }
  tee(local: number) {
    return this.op(0x22, ...uleb(local));
  }
  i32(n: number) {
    return this.op(0x41, ...sleb(n | 0));
  }
  i32Add() {
    return this.op(0x6a);
  }
  i32Sub() {
    return this.op(0x6b);
  }
  i32Eqz() {
    return this.op(0x45);
  }
  block() {
    return this.op(0x02, 0x40);
  }
  loop() {
    return this.op(0x03, 0x40);
  }
  br(depth: number) {
    return this.op(0x0c, ...uleb(depth));
  }
  brIf(depth: number) {
    return this.op(0x0d, ...uleb(depth));
  }
  end() {
    return this.op(0x0b);
  }
  // memarg = log2(alignment), offset; 16-byte alignment is only a hint, unaligned addresses work
  load(offset: number) {
    return this.simd(0x00, 4, ...uleb(offset));
  }
  store(offset: number) {
    return this.simd(0x0b, 4, ...uleb(offset));
  }
  splat32x4(word: number) {
    const b = Buffer.alloc(16);
    for (let i = 0; i < 4; i++) b.writeUInt32LE(word >>> 0, i * 4);
    return this.simd(0x0c, ...b);
  }
  /** i8x16.shuffle of the two vectors on the stack, given as bytes 0-15 of the first and 16-31 of the second. */
  shuffle(bytes: number[]) {
    return this.simd(0x0d, ...bytes);
  }
  /** The same, given as 32-bit lanes 0-3 of the first and 4-7 of the second. */
  shuffle32(lanes: number[]) {
    return this.shuffle(lanes.flatMap((l) => [4 * l, 4 * l + 1, 4 * l + 2, 4 * l + 3]));
  }
  not() {
    return this.simd(0x4d);
  }
  and() {
    return this.simd(0x4e);
  }
  /** a & ~b */
  andnot() {
    return this.simd(0x4f);
  }
  or() {
    return this.simd(0x50);
  }
  xor() {
    return this.simd(0x51);
  }
  shl() {
    return this.simd(0xab);
  }
  shrU() {
    return this.simd(0xad);
  }
  add() {
    return this.simd(0xae);
  }
}

// ---- code generator ----

/**
 * The module: `md5x4(state, p0, p1, p2, p3, blocks)` hashes `blocks` consecutive 64-byte blocks at each pK into lane
 * K of the 4 state vectors at `state`, over an imported memory that is shared or not (the import must say which).
 *
 * Four lanes of one i32x4 are one dependency chain: each step needs the previous step's result, so the kernel runs at
 * the latency of a step, not at the throughput of the vector units. Everything that doesn't depend on the previous
 * step is therefore added into `a` first (K[i] + M[g], and G's c term), leaving 5-6 single-cycle operations per step
 * on the chain. Measured on V8 11.3 (x64, AVX): round constants as v128.const, splat or loaded from a table, and the
 * transposed block in 16 locals or stored and reloaded from memory, all run at the same speed; bitselect for F and
 * G is ~4% slower (G loses the disjoint-add trick). More speed needs more independent lanes: two interleaved
 * 4-lane chains (8 streams) measured 1.7-2.0 GB/s against this one's 1.5 on a 2.2 GHz core, but only once each step's
 * result was also stored to memory: otherwise TurboFan schedules one chain after the other and spills the other's
 * inputs.
 */
export function md5x4ModuleBytes(shared: boolean): Uint8Array<ArrayBuffer> {
  const STATE = 0;
  const P = [1, 2, 3, 4];
  const BLOCKS = 5;
  let next = 6; // v128 locals follow the six i32 parameters
  const abcd = [next++, next++, next++, next++];
  const saved = [next++, next++, next++, next++];
  const tmp = next++;
  const rows = [next++, next++, next++, next++];
  const t = [next++, next++, next++, next++];
  const m = Array.from({ length: 16 }, () => next++);
  const v128Locals = next - 6;

  const c = new Code();
  abcd.forEach((l, i) =>
    c
      .get(STATE)
      .load(STATE_OFFSET + 16 * i)
      .set(l),
  );
  c.block().loop();
  c.get(BLOCKS).i32Eqz().brIf(1);
  abcd.forEach((l, i) => c.get(l).set(saved[i]));

  // Rows are 4 words of one lane; a 4x4 transpose of each group of words turns them into m[j] = word j of all lanes.
  for (let q = 0; q < 4; q++) {
    for (let k = 0; k < 4; k++)
      c.get(P[k])
        .load(16 * q)
        .set(rows[k]);
    c.get(rows[0]).get(rows[1]).shuffle32([0, 4, 1, 5]).set(t[0]); // r0.0 r1.0 r0.1 r1.1
    c.get(rows[0]).get(rows[1]).shuffle32([2, 6, 3, 7]).set(t[1]); // r0.2 r1.2 r0.3 r1.3
    c.get(rows[2]).get(rows[3]).shuffle32([0, 4, 1, 5]).set(t[2]); // r2.0 r3.0 r2.1 r3.1
    c.get(rows[2]).get(rows[3]).shuffle32([2, 6, 3, 7]).set(t[3]); // r2.2 r3.2 r2.3 r3.3
    for (let j = 0; j < 4; j++) {
      c.get(t[j >> 1])
        .get(t[(j >> 1) + 2])
        .shuffle32(j & 1 ? [2, 3, 6, 7] : [0, 1, 4, 5])
        .set(m[4 * q + j]);
    }
  }

  // The 64 steps; instead of moving values between locals, the roles of the four locals rotate.
  let [a, b, cc, d] = abcd;
  for (let i = 0; i < 64; i++) {
    const round = i >> 4;
    const s = SHIFTS[4 * round + (i & 3)];
    c.get(a).splat32x4(K[i]).get(m[wordIndex(i)]).add().add();
    if (round === 0) {
      c.get(d).get(b).get(cc).get(d).xor().and().xor().add(); // F = d ^ (b & (c ^ d))
    } else if (round === 1) {
      // G = (b & d) | (c & ~d); the two terms share no bits, so or = add, and the c term goes in before b is ready
      c.get(cc).get(d).andnot().add().get(b).get(d).and().add();
    } else if (round === 2) {
      c.get(cc).get(d).xor().get(b).xor().add(); // H = b ^ c ^ d, with c ^ d off the chain
    } else {
      c.get(cc).get(b).get(d).not().or().xor().add(); // I = c ^ (b | ~d)
    }
    if (s === 16) {
      // one byte shuffle (a cycle) instead of shl, shr_u, or (two)
      c.tee(tmp).get(tmp).shuffle([2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13]);
    } else {
      c.tee(tmp)
        .i32(s)
        .shl()
        .get(tmp)
        .i32(32 - s)
        .shrU()
        .or();
    }
    c.get(b).add().set(a);
    [a, b, cc, d] = [d, a, b, cc];
  }

  abcd.forEach((l, i) => c.get(l).get(saved[i]).add().set(l));
  for (const p of P) c.get(p).i32(64).i32Add().set(p);
  c.get(BLOCKS).i32(1).i32Sub().set(BLOCKS);
  c.br(0).end().end();
  abcd.forEach((l, i) =>
    c
      .get(STATE)
      .get(l)
      .store(STATE_OFFSET + 16 * i),
  );
  c.end();

  const body = [...vec([[...uleb(v128Locals), V128]]), ...c.bytes];
  // A shared memory's import must be declared shared, and shared limits need a maximum: take the largest there is.
  const limits = shared ? [0x03, ...uleb(1), ...uleb(65536)] : [0x00, ...uleb(1)];
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec([[0x60, ...vec(Array.from({ length: 6 }, () => [I32])), ...vec([])]])), // type
    ...section(2, vec([[...name('env'), ...name('memory'), 0x02, ...limits]])), // import
    ...section(3, vec([uleb(0)])), // function
    ...section(7, vec([[...name('md5x4'), 0x00, ...uleb(0)]])), // export
    ...section(10, vec([[...uleb(body.length), ...body]])), // code
  ]);
}

// ---- wrapper ----

const modules: Partial<Record<'shared' | 'private', WebAssembly.Module>> = {};

/** One stream's running MD5. */
export class Md5State {
  /** A, B, C, D */
  readonly words = Uint32Array.from(IV);
  /** Bytes hashed so far, always whole blocks; the length that the padding encodes adds the tail to it. */
  bytes = 0;

  clone(): Md5State {
    const copy = new Md5State();
    copy.words.set(this.words);
    copy.bytes = this.bytes;
    return copy;
  }
}

type Md5x4Export = (state: number, p0: number, p1: number, p2: number, p3: number, blocks: number) => void;

export class Md5x4 {
  readonly memory: WebAssembly.Memory;
  /** Where this kernel's MD5X4_SCRATCH_BYTES are; see the memory layout at the top of this file. */
  readonly scratch: number;
  private readonly md5x4: Md5x4Export;
  private u32: Uint32Array;

  /**
   * `memory` may be shared, so that another thread fills it. Without one, the kernel makes a private one-page
   * memory: 63 KiB past the scratch area, for the caller to grow as needed.
   */
  constructor(memory?: WebAssembly.Memory, scratch = 0) {
    // aligned so that the state vectors are whole elements of a Uint32Array view
    if (!Number.isInteger(scratch) || scratch < 0 || scratch % 16 !== 0) {
      throw new RangeError(`md5x4 scratch offset ${scratch} is not a multiple of 16`);
    }
    this.memory = memory ?? new WebAssembly.Memory({ initial: 1 });
    this.scratch = scratch;
    const shared = typeof SharedArrayBuffer !== 'undefined' && this.memory.buffer instanceof SharedArrayBuffer;
    const key = shared ? 'shared' : 'private';
    const module = (modules[key] ??= new WebAssembly.Module(md5x4ModuleBytes(shared)));
    this.md5x4 = new WebAssembly.Instance(module, { env: { memory: this.memory } }).exports.md5x4 as Md5x4Export;
    this.u32 = new Uint32Array(this.memory.buffer);
    if (scratch + MD5X4_SCRATCH_BYTES > this.u32.byteLength) throw new RangeError('md5x4 scratch area is outside the memory');
  }

  /** Growing a memory detaches a private memory's buffer and gives a shared one a new, longer buffer. */
  private view(): Uint32Array {
    const buffer = this.memory.buffer;
    if (this.u32.buffer !== buffer || this.u32.byteLength !== buffer.byteLength) this.u32 = new Uint32Array(buffer);
    return this.u32;
  }

  /**
   * Hashes `blocks` 64-byte blocks at `pointers[k]` into `states[k]`, for up to four lanes. A lane whose state is
   * undefined is idle: the kernel computes all four lanes anyway, so an idle one reads an active lane's data, and
   * its result is dropped.
   */
  update(states: readonly (Md5State | undefined)[], pointers: readonly number[], blocks: number): void {
    if (!Number.isInteger(blocks) || blocks < 0) throw new RangeError(`md5x4 blocks must be a whole number, got ${blocks}`);
    if (states.length > 4) throw new RangeError(`md5x4 has 4 lanes, got ${states.length} states`);
    const active = [0, 1, 2, 3].filter((k) => states[k] !== undefined);
    if (active.length === 0 || blocks === 0) return;
    const u32 = this.view();
    const base = (this.scratch + STATE_OFFSET) / 4;
    const lanePointers = [0, 1, 2, 3].map((k) => pointers[states[k] ? k : active[0]]);
    for (const k of active) {
      const p = lanePointers[k];
      if (!Number.isInteger(p) || p < 0 || p + blocks * 64 > u32.byteLength) {
        throw new RangeError(`md5x4 lane ${k}: [${p}, ${p} + ${blocks * 64}) is outside the memory`);
      }
    }
    for (const k of active) for (let w = 0; w < 4; w++) u32[base + 4 * w + k] = states[k]!.words[w];
    const [p0, p1, p2, p3] = lanePointers;
    this.md5x4(this.scratch + STATE_OFFSET, p0, p1, p2, p3, blocks);
    for (const k of active) {
      const state = states[k]!;
      for (let w = 0; w < 4; w++) state.words[w] = u32[base + 4 * w + k];
      state.bytes += blocks * 64;
    }
  }
}

/**
 * The lowercase hex digest of `state` followed by `tail`, which may have any length (usually it is a stream's last,
 * partial block). `state` is not changed. The tail is copied through the kernel's staging area, 15 blocks at a
 * time, so this is for the end of a stream, not its bulk.
 */
export function md5Finish(kernel: Md5x4, state: Md5State, tail: Uint8Array): string {
  const st = state.clone();
  const stage = kernel.scratch + STAGE_OFFSET;
  const staging = () => new Uint8Array(kernel.memory.buffer, stage, STAGE_BYTES);
  // After whole chunks, fewer than 960 bytes are left, and with 9 to 72 bytes of padding they fit the 1024.
  const chunk = STAGE_BYTES - 64;
  let at = 0;
  for (; tail.length - at >= chunk; at += chunk) {
    staging().set(tail.subarray(at, at + chunk));
    kernel.update([st], [stage], chunk / 64);
  }
  const rest = tail.length - at;
  const length = st.bytes + rest;
  const padded = (rest + 9 + 63) & ~63; // 0x80, zeros, then the bit length as a 64-bit little-endian number
  const buf = staging();
  buf.fill(0, 0, padded);
  buf.set(tail.subarray(at));
  buf[rest] = 0x80;
  const bits = new DataView(buf.buffer, buf.byteOffset + padded - 8, 8);
  bits.setUint32(0, (length * 8) >>> 0, true);
  bits.setUint32(4, Math.floor(length / 2 ** 29) >>> 0, true);
  kernel.update([st], [stage], padded / 64);
  const digest = Buffer.alloc(16);
  st.words.forEach((w, i) => digest.writeUInt32LE(w, 4 * i));
  return digest.toString('hex');
}
