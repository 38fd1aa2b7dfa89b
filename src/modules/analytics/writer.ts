import { getTableColumns, sql } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { analyticsBeacons, type BeaconRow } from './tables.ts';

/** Rows per insert: large enough to make one statement cheap per row, small enough to keep its JSON small. */
const MAX_BATCH = 2000;
/** How long the first row of a batch waits for others before the batch is written. */
const LINGER_MS = 20;

const COLUMNS = Object.values(getTableColumns(analyticsBeacons));

/**
 * Group commit for beacons: the rows of every request that arrives within a few milliseconds go to the database in
 * one `insert ... select from jsonb_to_recordset(one parameter)`, and each request is answered once its rows are
 * stored. Many small requests thus cost one statement, not one each, and a full database slows the players down
 * rather than losing their beacons.
 */
export class BeaconWriter {
  private pending: BeaconRow[] = [];
  private waiting: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly db: Db) {}

  write(rows: BeaconRow[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push(...rows);
      this.waiting.push({ resolve, reject });
      if (this.pending.length >= MAX_BATCH) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), LINGER_MS);
    });
  }

  /** Writes what is pending (after the batch being written, so that batches stay in order); resolves when stored. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const rows = this.pending;
    const waiting = this.waiting;
    this.pending = [];
    this.waiting = [];
    if (!rows.length) return this.writing;
    this.writing = this.writing.then(async () => {
      try {
        for (let i = 0; i < rows.length; i += MAX_BATCH) await insertRows(this.db, rows.slice(i, i + MAX_BATCH));
        waiting.forEach((w) => w.resolve());
      } catch (e) {
        waiting.forEach((w) => w.reject(e));
      }
    });
    return this.writing;
  }
}

/** One statement for many rows: the rows travel as one JSON parameter, read back into typed columns. */
async function insertRows(db: Db, rows: BeaconRow[]): Promise<void> {
  const names = COLUMNS.map((c) => c.name);
  const json = JSON.stringify(rows.map((r) => Object.fromEntries(COLUMNS.map((c, i) => [names[i], valueOf(r, c.name)]))));
  const list = sql.raw(names.join(', '));
  const types = sql.raw(COLUMNS.map((c) => `${c.name} ${c.getSQLType()}`).join(', '));
  await db.execute(sql`insert into ${analyticsBeacons} (${list}) select ${list} from jsonb_to_recordset(${json}::jsonb) as r(${types})`);
}

const KEYS = Object.fromEntries(Object.entries(getTableColumns(analyticsBeacons)).map(([key, c]) => [c.name, key])) as Record<string, keyof BeaconRow>;

function valueOf(row: BeaconRow, column: string): unknown {
  const v = row[KEYS[column]];
  return v instanceof Date ? v.toISOString() : (v ?? null);
}

const writers = new WeakMap<PlatformContext, BeaconWriter>();

/** The one writer of a platform, shared by the beacon route and the CMCD observer, so that their rows group together. */
export function writerOf(ctx: PlatformContext): BeaconWriter {
  let writer = writers.get(ctx);
  if (!writer) writers.set(ctx, (writer = new BeaconWriter(ctx.db)));
  return writer;
}
