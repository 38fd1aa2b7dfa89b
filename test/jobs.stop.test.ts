import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, inject, it } from 'vitest';
import { openDatabase } from '../src/db/client.ts';
import { defineJob, JobQueue } from '../src/jobs/queue.ts';
import { platformLogger } from '../src/platform/logger.ts';
import { Metrics } from '../src/platform/metrics.ts';
import { until } from './helpers/until.ts';

// pg-boss records a job's end without awaiting it. A handler that outlives the queue's stop (an encode slow to abort on
// a loaded machine) ended after the database had closed, and its failure's write was an unhandled rejection ("PGlite
// is closed") that failed a CI run. After the stop that write is dropped: the job stays active until its expiry.
it('a job that ends after its queue stopped and its database closed writes nothing and rejects nothing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mediaplane-jobs-stop-'));
  cpSync(inject('pgliteTemplate'), join(dir, 'pglite'), { recursive: true });
  const unhandled: unknown[] = [];
  const onUnhandled = (e: unknown) => unhandled.push(e);
  process.on('unhandledRejection', onUnhandled);
  try {
    const database = await openDatabase({ dataDir: dir });
    const queue = await JobQueue.start(database, platformLogger(false, 'silent').log, new Metrics());
    const slow = defineJob<{ n: number }>('test.slow-to-stop', { retryLimit: 0 });
    await queue.create(slow);
    let started = false;
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    await queue.work(slow, async () => {
      started = true;
      await released;
      throw new Error('aborted as the process stopped');
    });
    await queue.send(slow, { n: 1 });
    queue.wake();
    await until(
      () => started,
      (s) => s,
      { timeoutMs: 10_000, what: 'the handler started' },
    );
    // pg-boss waits up to 10 s for the handler, then gives up; the platform then closes the database.
    await queue.stop();
    await database.close();
    release();
    await new Promise((r) => setTimeout(r, 500));
    expect(unhandled).toEqual([]);
  } finally {
    process.off('unhandledRejection', onUnhandled);
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
