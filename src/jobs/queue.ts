import PgBoss from 'pg-boss';
import type { Database, Queryable } from '../db/client.ts';
import { executorOf } from '../db/txSql.ts';

/** A kind of durable job: its name, retry policy, how many run at once per process, and what it does. */
export interface JobSpec<P extends object> {
  name: string;
  handler: (data: P, job: { id: string; retryCount: number }) => Promise<void>;
  /** Jobs of this kind run at once in one worker process. */
  concurrency?: number;
  retryLimit?: number;
  retryDelaySeconds?: number;
  retryBackoff?: boolean;
  /** A job still running after this long is treated as failed (its worker died) and retried. */
  expireInSeconds?: number;
  pollingIntervalSeconds?: number;
}

export interface SendOptions {
  /** Enqueue inside this transaction: the job exists exactly when the rows it is about do. */
  tx?: Queryable;
  singletonKey?: string;
  startAfter?: Date | number;
}

/** The pg-boss wrapper every module uses: jobs live in the platform's own database (PGlite or PostgreSQL). */
export class JobQueue {
  private constructor(private readonly boss: PgBoss) {}

  static async start(database: Database): Promise<JobQueue> {
    const boss = new PgBoss({ db: { executeSql: database.executeSql }, schema: 'pgboss', supervise: true, schedule: false });
    boss.on('error', (e) => console.error('[jobs]', e.message));
    await boss.start();
    return new JobQueue(boss);
  }

  /** Creates the queue (idempotent); call once per kind before sending or working. */
  async define<P extends object>(spec: JobSpec<P>): Promise<void> {
    await this.boss.createQueue(spec.name, {
      name: spec.name,
      retryLimit: spec.retryLimit ?? 3,
      retryDelay: spec.retryDelaySeconds ?? 5,
      retryBackoff: spec.retryBackoff ?? true,
      expireInSeconds: spec.expireInSeconds ?? 15 * 60,
    });
  }

  async send<P extends object>(name: string, data: P, opts: SendOptions = {}): Promise<string | null> {
    return this.boss.send(name, data, {
      ...(opts.tx ? { db: executorOf(opts.tx) } : {}),
      ...(opts.singletonKey ? { singletonKey: opts.singletonKey } : {}),
      ...(opts.startAfter !== undefined ? { startAfter: opts.startAfter } : {}),
    });
  }

  /** Starts `concurrency` pollers for this kind of job in this process. */
  async work<P extends object>(spec: JobSpec<P>): Promise<void> {
    for (let i = 0; i < (spec.concurrency ?? 1); i++) {
      await this.boss.work<P>(
        spec.name,
        { batchSize: 1, includeMetadata: true, pollingIntervalSeconds: spec.pollingIntervalSeconds ?? 1 },
        async ([job]) => spec.handler(job.data, { id: job.id, retryCount: job.retryCount }),
      );
    }
  }

  async stop(): Promise<void> {
    await this.boss.stop({ graceful: true, wait: true, timeout: 10_000 });
  }
}
