import { spawn } from 'node:child_process';
import { describe, it } from 'vitest';
import { until } from '../helpers/until.ts';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * A media tool dies with the process that started it, even one killed with -9 (src/media/spawnTool.ts): an orphaned
 * live encode of the input-loss colour would otherwise run for ever (seen: 20 minutes after a failed test's platform
 * was killed).
 */
describe.runIf(process.platform === 'linux')('media tools started by the platform', () => {
  it('are killed when the platform process is killed with -9', async () => {
    const platform = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        "const { spawnTool } = await import('./src/media/spawnTool.ts'); console.log(spawnTool('sleep', ['600']).pid); setInterval(() => {}, 1000);",
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    platform.stdout.on('data', (c) => (out += c));
    const pid = Number(
      await until(
        () => out.trim(),
        (o) => /^\d+$/.test(o),
        { timeoutMs: 30_000, what: 'the tool started' },
      ),
    );
    await until(
      () => alive(pid),
      (a) => a,
      { timeoutMs: 5_000 },
    );
    platform.kill('SIGKILL');
    await until(
      () => alive(pid),
      (a) => !a,
      { timeoutMs: 10_000, what: 'the tool gone with its parent' },
    );
  });
});
