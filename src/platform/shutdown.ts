import type { Logger } from 'pino';

/**
 * One step of a shutdown, given at most `ms`: a step still running then is logged (so an operator sees what held the
 * process) and left behind, so that one stuck request, job or worker never keeps the rest from closing.
 */
export async function shutdownStep(log: Logger, step: string, ms: number, run: () => Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
  });
  const done = run().then(
    () => 'done' as const,
    (err: unknown) => {
      log.warn({ err, step }, 'shutdown step failed; going on');
      return 'done' as const;
    },
  );
  try {
    if ((await Promise.race([done, late])) === 'late') {
      log.warn({ step, seconds: ms / 1000 }, 'shutdown step still running; going on without it');
    }
  } finally {
    clearTimeout(timer);
  }
}
