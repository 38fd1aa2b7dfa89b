import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { and, eq, sql } from 'drizzle-orm';
import { pgTable, text } from 'drizzle-orm/pg-core';
import { drizzle } from 'drizzle-orm/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as lease from '../../src/db/lease.ts';
import { workUnderLease, type LeasedWork } from '../../src/db/leasedWork.ts';

const rows = pgTable('leased', { id: text('id').primaryKey(), ...lease.leaseColumns() });
const REF = { owner: rows.leaseOwner, until: rows.leaseUntil };

let client: PGlite;
let db: ReturnType<typeof drizzle>;
beforeAll(async () => {
  client = await PGlite.create();
  db = drizzle({ client });
  await db.execute(sql`create table leased (id text primary key, lease_owner text, lease_until timestamptz)`);
  await db.insert(rows).values([{ id: 'r' }, { id: 'q', leaseOwner: 'queued', leaseUntil: sql`now() + interval '1 hour'` }]);
});
afterAll(() => client.close());

const claim = (id: string, owner: string, handoff?: string) =>
  db
    .update(rows)
    .set(lease.take(owner, 60_000))
    .where(and(eq(rows.id, id), lease.claimable(REF, owner, handoff)))
    .returning();
const renew = (id: string, owner: string) =>
  db
    .update(rows)
    .set(lease.renew(60_000))
    .where(and(eq(rows.id, id), lease.heldBy(REF, owner)))
    .returning();

it('claims a free row, refuses it to another owner while held, and lets the holder renew', async () => {
  expect(await claim('r', 'a')).toHaveLength(1);
  expect(await claim('r', 'b')).toHaveLength(0);
  expect(await renew('r', 'a')).toHaveLength(1);
  const [{ ahead }] = (await db.execute(sql`select lease_until > now() + interval '50 seconds' as ahead from leased where id = 'r'`)).rows as {
    ahead: boolean;
  }[];
  expect(ahead).toBe(true);
});

it("takes over a dead owner's row once its lease ran out on the database's clock; the old owner can no longer renew", async () => {
  await db.execute(sql`update leased set lease_until = now() - interval '1 second' where id = 'r'`);
  expect(
    await db
      .select()
      .from(rows)
      .where(and(eq(rows.id, 'r'), lease.expired(REF))),
  ).toHaveLength(1);
  const [taken] = await claim('r', 'b');
  expect(taken.leaseOwner).toBe('b');
  expect(await renew('r', 'a')).toHaveLength(0);
});

it('frees a released row for anyone at once', async () => {
  await db
    .update(rows)
    .set(lease.release())
    .where(and(eq(rows.id, 'r'), lease.heldBy(REF, 'b')));
  expect(await claim('r', 'c')).toHaveLength(1);
});

it('hands a row held by the hand-off owner to the first who asks', async () => {
  expect(await claim('q', 'a')).toHaveLength(0);
  expect(await claim('q', 'a', 'queued')).toHaveLength(1);
  expect(await claim('q', 'b', 'queued')).toHaveLength(0);
});

describe('workUnderLease', () => {
  class Permanent extends Error {}
  const held = (stopping: AbortSignal, log: string[], leaseMs = 30): LeasedWork => ({
    leaseMs,
    renew: async () => void log.push('renew'),
    giveBack: async () => void log.push('giveBack'),
    stopping,
    workDir: join(tmpdir(), `leased-${process.pid}-${Math.random().toString(36).slice(2)}`),
    isPermanent: (e) => e instanceof Permanent,
    fail: async (e) => void log.push(`fail: ${e.message}`),
  });

  it('renews the lease while the work runs in an empty directory, and removes the directory after', async () => {
    const log: string[] = [];
    const w = held(new AbortController().signal, log);
    await workUnderLease(w, async () => {
      await writeFile(join(w.workDir, 'f'), 'x');
      while (log.filter((l) => l === 'renew').length < 2) await new Promise((r) => setTimeout(r, 5));
    });
    expect(log).not.toContain('giveBack');
    expect(existsSync(w.workDir)).toBe(false);
  });

  // No renewal comes within these (a loaded machine took over 10 ms to make the folder): the log holds the outcome only.
  const LONG_LEASE_MS = 60_000;
  it('gives the row back and rethrows for a retry; a permanent failure is failed instead, unless the process stops', async () => {
    const log: string[] = [];
    await expect(workUnderLease(held(new AbortController().signal, log, LONG_LEASE_MS), () => Promise.reject(new Error('transient')))).rejects.toThrow(
      'transient',
    );
    expect(log).toEqual(['giveBack']);
    log.length = 0;
    await workUnderLease(held(new AbortController().signal, log, LONG_LEASE_MS), () => Promise.reject(new Permanent('bad source')));
    expect(log).toEqual(['fail: bad source']);
    log.length = 0;
    const stopping = new AbortController();
    const w = held(stopping.signal, log, LONG_LEASE_MS);
    const run = workUnderLease(
      w,
      (signal) =>
        new Promise((_, reject) => {
          const killed = () => reject(new Permanent('killed'));
          if (signal.aborted) killed();
          else signal.addEventListener('abort', killed);
        }),
    );
    stopping.abort();
    await expect(run).rejects.toThrow('killed');
    expect(log).toEqual(['giveBack']);
    expect(existsSync(w.workDir)).toBe(false);
  });

  it('does not begin work handed over once the process is stopping: the row is given back for the retry', async () => {
    const log: string[] = [];
    const stopping = new AbortController();
    stopping.abort();
    let begun = false;
    await expect(workUnderLease(held(stopping.signal, log, LONG_LEASE_MS), async () => void (begun = true))).rejects.toThrow();
    expect(begun).toBe(false);
    expect(log).toEqual(['giveBack']);
  });
});
