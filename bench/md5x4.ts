/**
 * The 4-lane WebAssembly MD5 kernel (src/storage/md5x4.ts) against node:crypto (OpenSSL) on the same data: 4 lanes
 * of 64 MiB of random bytes in one WebAssembly memory, the kernel called once per 1 MiB of every lane (as the store
 * would per chunk of 4 parts in flight). Baseline: node:crypto hashing the same 4 streams in the same 1 MiB updates;
 * for reference, one node:crypto stream over the whole 256 MiB. Everything runs on this thread (one core); each
 * figure is the best of the passes, after a warm-up pass that also lets V8 tier the kernel up.
 *
 *   npm run bench -- md5x4 [--mib 64] [--passes 5]
 */
import { createHash, randomFillSync } from 'node:crypto';
import { parseArgs } from 'node:util';
import { MD5X4_SCRATCH_BYTES, Md5State, Md5x4, md5Finish } from '../src/storage/md5x4.ts';

const MiB = 1024 * 1024;

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { mib: { type: 'string', default: '64' }, passes: { type: 'string', default: '5' } } });
  const laneBytes = Number(values.mib) * MiB;
  const passes = Number(values.passes);
  const total = 4 * laneBytes;
  const memory = new WebAssembly.Memory({ initial: Math.ceil((MD5X4_SCRATCH_BYTES + total) / 65536) });
  const start = (k: number) => MD5X4_SCRATCH_BYTES + k * laneBytes;
  const lane = (k: number) => Buffer.from(memory.buffer, start(k), laneBytes);
  for (let k = 0; k < 4; k++) randomFillSync(lane(k));
  const kernel = new Md5x4(memory);

  const viaKernel = () => {
    const states = [0, 1, 2, 3].map(() => new Md5State());
    for (let at = 0; at < laneBytes; at += MiB)
      kernel.update(
        states,
        [0, 1, 2, 3].map((k) => start(k) + at),
        MiB / 64,
      );
    return states.map((s) => md5Finish(kernel, s, new Uint8Array(0)));
  };
  const viaCrypto = () => {
    const hashes = [0, 1, 2, 3].map(() => createHash('md5'));
    for (let at = 0; at < laneBytes; at += MiB) for (let k = 0; k < 4; k++) hashes[k].update(lane(k).subarray(at, at + MiB));
    return hashes.map((h) => h.digest('hex'));
  };
  const oneStream = () => [
    createHash('md5')
      .update(Buffer.from(memory.buffer, start(0), total))
      .digest('hex'),
  ];

  // The very first call runs in V8's baseline compiler (Liftoff); later ones in the optimized code.
  const cold = new Md5State();
  let t = performance.now();
  kernel.update([cold, cold, cold, cold], [0, 1, 2, 3].map(start), MiB / 64);
  const coldMBs = (4 * MiB) / 1e6 / ((performance.now() - t) / 1000);

  const expected = viaCrypto();
  if (viaKernel().join() !== expected.join()) throw new Error('md5x4 digests differ from node:crypto');

  const measure = (fn: () => string[]) => {
    const wall: number[] = [];
    const cpu: number[] = [];
    for (let p = 0; p < passes; p++) {
      const c0 = process.cpuUsage();
      t = performance.now();
      fn();
      const seconds = (performance.now() - t) / 1000;
      const used = process.cpuUsage(c0);
      wall.push(total / 1e6 / seconds);
      cpu.push(total / 1e6 / ((used.user + used.system) / 1e6));
    }
    return { best: Math.max(...wall), median: wall.sort((a, b) => a - b)[wall.length >> 1], cpuBest: Math.max(...cpu) };
  };
  const rows: [string, ReturnType<typeof measure>][] = [
    [`md5x4 kernel, 4 lanes x ${values.mib} MiB, 1 MiB per lane per call`, measure(viaKernel)],
    [`node:crypto md5, 4 streams x ${values.mib} MiB, 1 MiB updates`, measure(viaCrypto)],
    [`node:crypto md5, 1 stream x ${4 * Number(values.mib)} MiB (reference)`, measure(oneStream)],
  ];
  console.log(`MB/s = 10^6 bytes/s over ${passes} passes: best and median by wall time, best by this process's CPU time`);
  for (const [label, r] of rows) {
    console.log(
      `  ${label.padEnd(62)} ${r.best.toFixed(0).padStart(5)} MB/s best  ${r.median.toFixed(0).padStart(5)} median  ${r.cpuBest.toFixed(0).padStart(5)} by CPU time`,
    );
  }
  console.log(`  md5x4 first call, before V8 tiers it up (1 MiB per lane)          ${coldMBs.toFixed(0).padStart(5)} MB/s`);
  const [kernelRow, cryptoRow, oneRow] = rows.map(([, r]) => r);
  console.log(
    `  ratio kernel / node:crypto: ${(kernelRow.best / cryptoRow.best).toFixed(2)}x best, ${(kernelRow.median / cryptoRow.median).toFixed(2)}x median` +
      ` (vs one stream: ${(kernelRow.best / oneRow.best).toFixed(2)}x)`,
  );
}
