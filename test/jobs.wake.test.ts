import { afterAll, beforeAll, expect, it } from 'vitest';
import { defineJob } from '../src/jobs/queue.ts';
import { describeEachDb, startInProcess, type TestPlatform } from './helpers/platform.ts';
import { until } from './helpers/until.ts';

/**
 * A worker starts a job when the transaction that sent it commits (issue 24: time to first playable), not at its next
 * poll: this queue polls once an hour, so only the wake-up can run the job within the wait.
 */
const hourlyJob = defineJob<{ n: number }>('test.wake', { pollingIntervalSeconds: 3600 });

describeEachDb('jobs woken on commit', (kind) => {
  let p: TestPlatform;
  const ran: number[] = [];

  beforeAll(async () => {
    p = await startInProcess(kind);
    await p.ctx.jobs.create(hourlyJob);
    await p.ctx.jobs.work(hourlyJob, async ({ n }) => void ran.push(n));
    // The worker's first fetch (at start) found nothing; from now on it polls hourly.
    await new Promise((r) => setTimeout(r, 1000));
  });
  afterAll(() => p?.stop());

  it('runs a job sent in a transaction once that transaction commits, and one sent outside any', async () => {
    await p.ctx.db.transaction(async (tx) => {
      await p.ctx.jobs.send(hourlyJob, { n: 1 }, { tx });
    });
    await until(
      () => ran,
      (r) => r.includes(1),
      { timeoutMs: 45_000, what: 'the job sent in a transaction' },
    );
    await p.ctx.jobs.send(hourlyJob, { n: 2 });
    await until(
      () => ran,
      (r) => r.includes(2),
      { timeoutMs: 45_000, what: 'the job sent outside a transaction' },
    );
  });

  it('runs a backlog sent at once one job after another, not one job per poll', async () => {
    // One commit announces the queue once (PostgreSQL folds equal notifications): the first job is woken, and each
    // job's end wakes the worker for the next.
    await p.ctx.db.transaction(async (tx) => {
      for (const n of [11, 12, 13, 14, 15]) await p.ctx.jobs.send(hourlyJob, { n }, { tx });
    });
    await until(
      () => ran,
      (r) => [11, 12, 13, 14, 15].every((n) => r.includes(n)),
      { timeoutMs: 45_000, what: 'every job of the backlog' },
    );
  });

  it('does not announce a job whose transaction rolled back', async () => {
    await p.ctx.db
      .transaction(async (tx) => {
        await p.ctx.jobs.send(hourlyJob, { n: 3 }, { tx });
        throw new Error('rollback');
      })
      .catch(() => {});
    await p.ctx.jobs.send(hourlyJob, { n: 4 });
    await until(
      () => ran,
      (r) => r.includes(4),
      { timeoutMs: 45_000 },
    );
    expect(ran).not.toContain(3);
  });
});
