import type { Logger } from './logger.ts';

export interface PeriodicTask {
  /** Stops the timer and waits for a pass that is running. */
  stop(): Promise<void>;
  /** Runs a pass now rather than at the next interval (right after the one running, if one is). */
  wake(): void;
}

export interface PeriodicOptions {
  /** Runs the first pass at once (default) rather than after one interval. */
  runAtStart?: boolean;
}

/**
 * Runs `pass` every `intervalMs`, never two at once: the next pass is scheduled when one ends. A pass that throws is
 * logged under `name` and the schedule goes on. The timer does not keep the process alive.
 */
export function startPeriodic(
  name: string,
  intervalMs: number,
  pass: () => Promise<void>,
  log: Logger,
  { runAtStart = true }: PeriodicOptions = {},
): PeriodicTask {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let woken = false;
  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(run, ms);
    timer.unref();
  };
  const run = () => {
    timer = undefined;
    running = Promise.resolve()
      .then(pass)
      .catch((err) => log.error({ err, task: name }, `${name} failed`))
      .finally(() => {
        running = undefined;
        schedule(woken ? 0 : intervalMs);
        woken = false;
      });
  };
  schedule(runAtStart ? 0 : intervalMs);
  return {
    wake() {
      if (stopped) return;
      if (running) {
        woken = true;
        return;
      }
      clearTimeout(timer);
      schedule(0);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
