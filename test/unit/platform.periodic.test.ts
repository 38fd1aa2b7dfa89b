import { expect, it, vi } from 'vitest';
import type { Logger } from '../../src/platform/logger.ts';
import { startPeriodic } from '../../src/platform/periodic.ts';
import { sleep, until } from '../helpers/until.ts';

const fakeLog = () => ({ error: vi.fn() }) as unknown as Logger & { error: ReturnType<typeof vi.fn> };

/** The task runs every millisecond: look as often. */
const soon = (check: () => boolean) => until(check, Boolean, { everyMs: 5 });

it('never runs two passes at once, and stop() waits for the running pass', async () => {
  let running = 0;
  let maxRunning = 0;
  let passes = 0;
  let finish: () => void = () => {};
  const task = startPeriodic(
    'test',
    1,
    async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      passes++;
      if (passes === 3) await new Promise<void>((r) => (finish = r));
      running--;
    },
    fakeLog(),
  );
  await soon(() => passes === 3);
  let stopped = false;
  const stopping = task.stop().then(() => (stopped = true));
  await sleep(20); // on purpose: stop() must still be waiting after time has passed
  expect(stopped).toBe(false);
  finish();
  await stopping;
  expect(stopped).toBe(true);
  expect(maxRunning).toBe(1);
  const after = passes;
  await sleep(20); // on purpose: no pass may start once stopped, which only passing time shows
  expect(passes).toBe(after);
});

it('logs a failing pass and goes on with the next', async () => {
  const log = fakeLog();
  let passes = 0;
  const task = startPeriodic(
    'sweep',
    1,
    async () => {
      passes++;
      if (passes === 1) throw new Error('boom');
    },
    log,
  );
  await soon(() => passes >= 2);
  await task.stop();
  expect(log.error).toHaveBeenCalledTimes(1);
  expect(log.error.mock.calls[0][0]).toMatchObject({ err: expect.objectContaining({ message: 'boom' }), task: 'sweep' });
});

it('wake() runs a pass now instead of at the next interval, and once more after a running pass', async () => {
  let passes = 0;
  let finish: () => void = () => {};
  const task = startPeriodic(
    'test',
    3_600_000,
    async () => {
      passes++;
      if (passes === 2) await new Promise<void>((r) => (finish = r));
    },
    fakeLog(),
  );
  await soon(() => passes === 1);
  task.wake();
  await soon(() => passes === 2);
  // Woken while the pass runs: one more right after it, not an hour later.
  task.wake();
  finish();
  await soon(() => passes === 3);
  await task.stop();
});
