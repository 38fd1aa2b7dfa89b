import PgBoss from 'pg-boss';
import type { Database, Queryable } from '../db/client.ts';
import { executorOf } from '../db/txSql.ts';
import type { Logger } from '../platform/logger.ts';

/** A kind of durable job's retry policy: the queue is created with it. */
export interface JobOptions {
  retryLimit?: number;
  retryDelaySeconds?: number;
  retryBackoff?: boolean;
  /** A job still running after this long is treated as failed (its worker died) and retried. */
  expireInSeconds?: number;
  pollingIntervalSeconds?: number;
}

/**
 * A kind of durable job, made by `defineJob`. `send` and `work` take the same handle, so the payload a sender writes
 * and the one a handler reads are the same type at compile time.
 */
export interface JobDefinition<P extends object> {
  readonly name: string;
  readonly options: JobOptions;
  /** Never set: carries the payload type. */
  readonly payload?: P;
}

export const defineJob = <P extends object>(name: string, options: JobOptions = {}): JobDefinition<P> => ({ name, options });

export type JobHandler<P extends object> = (data: P, job: { id: string; retryCount: number }) => Promise<void>;

export interface SendOptions {
  /** Enqueue inside this transaction: the job exists exactly when the rows it is about do. */
  tx?: Queryable;
  singletonKey?: string;
  startAfter?: Date | number;
}

/** The pg-boss wrapper every module uses: jobs live in the platform's own database (PGlite or PostgreSQL). */
export class JobQueue {
  private constructor(private readonly boss: PgBoss) {}

  static async start(database: Database, log: Logger): Promise<JobQueue> {
    const boss = new PgBoss({ db: { executeSql: database.executeSql }, schema: 'pgboss', supervise: true, schedule: false });
    boss.on('error', (e) => log.error({ err: e }, 'job queue error'));
    await boss.start();
    return new JobQueue(boss);
  }

  /** Creates the queue (idempotent); the platform calls it for every module's jobs at start, on every role. */
  async create(job: JobDefinition<object>): Promise<void> {
    const o = job.options;
    await this.boss.createQueue(job.name, {
      name: job.name,
      retryLimit: o.retryLimit ?? 3,
      retryDelay: o.retryDelaySeconds ?? 5,
      retryBackoff: o.retryBackoff ?? true,
      expireInSeconds: o.expireInSeconds ?? 15 * 60,
    });
  }

  async send<P extends object>(job: JobDefinition<P>, data: P, opts: SendOptions = {}): Promise<string | null> {
    return this.boss.send(job.name, data, {
      ...(opts.tx ? { db: executorOf(opts.tx) } : {}),
      ...(opts.singletonKey ? { singletonKey: opts.singletonKey } : {}),
      ...(opts.startAfter !== undefined ? { startAfter: opts.startAfter } : {}),
    });
  }

  /** Starts `concurrency` pollers for this kind of job in this process. */
  async work<P extends object>(job: JobDefinition<P>, handler: JobHandler<P>, { concurrency = 1 }: { concurrency?: number } = {}): Promise<void> {
    for (let i = 0; i < concurrency; i++) {
      await this.boss.work<P>(
        job.name,
        { batchSize: 1, includeMetadata: true, pollingIntervalSeconds: job.options.pollingIntervalSeconds ?? 1 },
        async ([j]) => handler(j.data, { id: j.id, retryCount: j.retryCount }),
      );
    }
  }

  async stop(): Promise<void> {
    await this.boss.stop({ graceful: true, wait: true, timeout: 10_000 });
  }
}
