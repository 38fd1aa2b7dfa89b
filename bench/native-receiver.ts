import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomFillSync } from 'node:crypto';
import { join } from 'node:path';
import { MD5X4_SCRATCH_BYTES, Md5State, Md5x4 } from '../src/storage/md5x4.ts';

const MiB = 1024 * 1024;

/** Builds bench/native-receiver.c into `dir`; answers why not when this machine has no C compiler or OpenSSL headers. */
export function buildNativeReceiver(dir: string): { binary: string } | { skipped: string } {
  const binary = join(dir, 'native-receiver');
  try {
    execFileSync('cc', ['-O2', '-o', binary, new URL('./native-receiver.c', import.meta.url).pathname, '-lcrypto', '-lpthread'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    return { binary };
  } catch (e) {
    const stderr = String((e as { stderr?: Buffer }).stderr ?? (e as Error).message)
      .trim()
      .split('\n')[0];
    return { skipped: `cc could not build bench/native-receiver.c (needs a C compiler and libssl-dev): ${stderr}` };
  }
}

/** Starts the reference receiver on `port`, writing parts into `file`; resolves once it listens. */
export async function startNativeReceiver(binary: string, port: number, file: string, partSize: number, hashPercent: number) {
  const child = spawn(binary, [String(port), file, String(partSize), String(hashPercent)], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`native-receiver exited with ${code}`)));
  });
  return {
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/**
 * The share (in percent) of each buffer that OpenSSL's MD5 must hash to cost the CPU the 4-lane kernel costs for all
 * of it: OpenSSL's MB per CPU second over the kernel's, measured here (4 lanes of 32 MiB, best of 3 by CPU time).
 */
export function kernelShareOfOpenSsl(): number {
  const lane = 32 * MiB;
  const memory = new WebAssembly.Memory({ initial: Math.ceil((MD5X4_SCRATCH_BYTES + 4 * lane) / 65536) });
  const at = (k: number) => MD5X4_SCRATCH_BYTES + k * lane;
  randomFillSync(Buffer.from(memory.buffer, at(0), 4 * lane));
  const kernel = new Md5x4(memory);
  const cpuSeconds = (fn: () => void) => {
    let best = Infinity;
    for (let pass = 0; pass < 4; pass++) {
      const before = process.cpuUsage();
      fn();
      const used = process.cpuUsage(before);
      if (pass) best = Math.min(best, (used.user + used.system) / 1e6); // the first pass warms V8 up
    }
    return best;
  };
  const viaKernel = cpuSeconds(() => {
    const states = [0, 1, 2, 3].map(() => new Md5State());
    for (let offset = 0; offset < lane; offset += MiB)
      kernel.update(
        states,
        [0, 1, 2, 3].map((k) => at(k) + offset),
        MiB / 64,
      );
  });
  const viaOpenSsl = cpuSeconds(() => {
    for (let k = 0; k < 4; k++)
      createHash('md5')
        .update(Buffer.from(memory.buffer, at(k), lane))
        .digest();
  });
  return Math.min(100, Math.round((100 * viaKernel) / viaOpenSsl));
}
