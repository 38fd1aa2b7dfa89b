import PgBoss from 'pg-boss';
import type { Database, Queryable } from '../db/client.ts';
import { executorOf } from '../db/txSql.ts';
import type { Logger } from '../platform/logger.ts';
import type { Metrics } from '../platform/metrics.ts';
import { currentRequestId, withRequestId } from '../platform/requestContext.ts';

/** The id of the request that caused a job rides in its payload, under this name, next to the job's own data. */
const REQUEST_ID_FIELD = 'requestId';

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
  /** Of jobs waiting in one queue, a higher priority is started first (default 0). */
  priority?: number;
}

/**
 * The channel a sent job is announced on (`pg_notify`, delivered when its transaction commits), with the job's name as
 * payload: a worker that listens (`wake`) starts it at once instead of at its next poll.
 */
export const JOBS_CHANNEL = 'mediaplane_jobs';

/**
 * How often an idle worker asks for a job no one announced: a retry or a delayed job coming due, or one whose
 * notification was missed. A sent job wakes its workers on commit and a finished one its queue (`run`), so the poll
 * is not how work starts. At 1 s the dozen pollers of a process were most of an idle platform's queries: on PGlite,
 * which runs them on the main thread, an idle platform took 13–14% of a core, 8% at 5 s (BENCHMARKS.md, import).
 */
const POLL_SECONDS = 5;

/** The pg-boss wrapper every module uses: jobs live in the platform's own database (PGlite or PostgreSQL). */
export class JobQueue {
  /** The pg-boss workers of this process, by queue name. */
  private readonly workers = new Map<string, string[]>();

  private constructor(
    private readonly boss: PgBoss,
    private readonly log: Logger,
    private readonly metrics: Metrics,
    private readonly database: Database,
    private readonly stopped: { done: boolean },
  ) {}

  static async start(database: Database, log: Logger, metrics: Metrics): Promise<JobQueue> {
    // pg-boss records a job's completion or failure without awaiting it: a handler that ends as the process stops
    // (its work aborted) has that write still to make once the queue has stopped and the database is closing, and its
    // rejection was unhandled (one failed a CI run). Once stopped, such a write is never made and never settles
    // (pg-boss reads what it answers): the job stays active and its expiry gives it to another worker, as a process
    // that died would.
    const stopped = { done: false };
    const executeSql: Database['executeSql'] = (text, params) => (stopped.done ? new Promise(() => {}) : database.executeSql(text, params));
    const boss = new PgBoss({ db: { executeSql }, schema: 'pgboss', supervise: true, schedule: false });
    boss.on('error', (e) => log.error({ err: e }, 'job queue error'));
    await boss.start();
    return new JobQueue(boss, log, metrics, database, stopped);
  }

  /** Jobs per queue and state, for the metrics (read when they are scraped, never on a request). */
  async counts(): Promise<{ queue: string; state: string; count: number }[]> {
    const { rows } = await this.database.executeSql(
      'select name as queue, state::text as state, count(*)::int as count from pgboss.job group by name, state order by name, state',
    );
    return rows as { queue: string; state: string; count: number }[];
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

  /** Enqueues a job; sent while serving a request, it carries that request's id (`REQUEST_ID_FIELD`). */
  async send<P extends object>(job: JobDefinition<P>, data: P, opts: SendOptions = {}): Promise<string | null> {
    const requestId = currentRequestId();
    const payload = requestId && !(REQUEST_ID_FIELD in data) ? { ...data, [REQUEST_ID_FIELD]: requestId } : data;
    const id = await this.boss.send(job.name, payload, {
      ...(opts.tx ? { db: executorOf(opts.tx) } : {}),
      ...(opts.singletonKey ? { singletonKey: opts.singletonKey } : {}),
      ...(opts.startAfter !== undefined ? { startAfter: opts.startAfter } : {}),
      ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
    });
    // Delivered when the job's transaction commits (never for a rolled back one); a job due later waits for its poll.
    if (id && opts.startAfter === undefined) {
      const sql = 'select pg_notify($1, $2)';
      await (opts.tx ? executorOf(opts.tx).executeSql(sql, [JOBS_CHANNEL, job.name]) : this.database.executeSql(sql, [JOBS_CHANNEL, job.name]));
    }
    return id;
  }

  /** Starts this process's workers of the queue `name` (of every queue when none is named) now, not at their next poll. */
  wake(name?: string): void {
    const ids = name === undefined ? [...this.workers.values()].flat() : (this.workers.get(name) ?? []);
    for (const id of ids) this.boss.notifyWorker(id);
  }

  /** Starts `concurrency` pollers for this kind of job in this process; `wake` starts them early. */
  async work<P extends object>(job: JobDefinition<P>, handler: JobHandler<P>, { concurrency = 1 }: { concurrency?: number } = {}): Promise<void> {
    for (let i = 0; i < concurrency; i++) {
      const id = await this.boss.work<P>(
        job.name,
        { batchSize: 1, includeMetadata: true, pollingIntervalSeconds: job.options.pollingIntervalSeconds ?? POLL_SECONDS },
        async ([j]) => this.run(job, handler, j),
      );
      this.workers.set(job.name, [...(this.workers.get(job.name) ?? []), id]);
    }
  }

  /**
   * Runs one job in the context of the request that caused it: what it enqueues or records carries the same id,
   * and its log lines name the request, the job and the attempt.
   */
  private async run<P extends object>(job: JobDefinition<P>, handler: JobHandler<P>, j: PgBoss.JobWithMetadata<P>): Promise<void> {
    const given = (j.data as Record<string, unknown>)[REQUEST_ID_FIELD];
    const requestId = typeof given === 'string' ? given : undefined;
    const log = this.log.child({ ...(requestId ? { requestId } : {}), job: job.name, jobId: j.id, retryCount: j.retryCount });
    const started = Date.now();
    log.info('job started');
    try {
      await withRequestId(requestId, () => handler(j.data, { id: j.id, retryCount: j.retryCount }));
      log.info({ ms: Date.now() - started }, 'job finished');
      this.metrics.jobsRun.inc({ queue: job.name, outcome: 'completed' });
    } catch (e) {
      // Work aborted because this process is stopping is not a failure: pg-boss gives the job to the next worker.
      if (this.stopping)
        log.info({ ms: Date.now() - started, reason: e instanceof Error ? e.message : String(e) }, 'job stopped with the process; it runs again');
      else log.warn({ ms: Date.now() - started, err: e }, 'job failed');
      this.metrics.jobsRun.inc({ queue: job.name, outcome: this.stopping ? 'stopped' : 'failed' });
      throw e;
    } finally {
      // pg-boss's worker waits out the rest of its poll after a job shorter than it, whatever is queued behind: told
      // now, it fetches again at once (an empty queue costs that one fetch), so a backlog of short jobs drains.
      if (!this.stopping) this.wake(job.name);
    }
  }

  /** Set when the process begins to stop (`stopping`, `stop`): work that ends from then on ended because of it. */
  private stopping = false;

  /** The process is stopping: its workers' work is about to be aborted, which is not a failure of the jobs. */
  beginStop(): void {
    this.stopping = true;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    try {
      await this.boss.stop({ graceful: true, wait: true, timeout: 10_000 });
    } finally {
      this.stopped.done = true;
    }
  }
}
