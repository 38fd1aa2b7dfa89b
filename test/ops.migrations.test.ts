import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { DATABASES, freshStorage, startPlatform, type TestPlatform, type TestStorage } from './helpers/platform.ts';

const MIGRATIONS: unknown[] = JSON.parse(readFileSync(new URL('../migrations/meta/_journal.json', import.meta.url), 'utf8')).entries;

// compose.yaml starts an api, a worker and a live process of a new release at the same moment: each migrates the
// database at start, one at a time (src/db/client.ts), and the job queue's own schema and queues are created as safely.
describe.skipIf(!DATABASES.includes('postgres'))('upgrade: processes starting together on one PostgreSQL database', () => {
  let storage: TestStorage | undefined;
  const platforms: TestPlatform[] = [];
  afterAll(async () => {
    for (const p of platforms) await p.stop();
    await storage?.drop();
  });

  it('migrate an empty database once, and all three start', async () => {
    storage = await freshStorage('postgres', { empty: true });
    const roles = ['api', 'worker', 'live'];
    const started = await Promise.allSettled(roles.map((role) => startPlatform('postgres', { MEDIAPLANE_ROLE: role }, storage)));
    for (const s of started) if (s.status === 'fulfilled') platforms.push(s.value);
    expect(started.filter((s) => s.status === 'rejected').map((s) => String((s as PromiseRejectedResult).reason))).toEqual([]);
    const db = new pg.Client({ connectionString: storage.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query('select count(*)::int as n from drizzle.__drizzle_migrations');
      expect(rows[0].n).toBe(MIGRATIONS.length);
    } finally {
      await db.end();
    }
    // Each serves the one database: a tenant created through one is seen through another.
    const tenant = await platforms[0]!.createTenant();
    expect((await platforms[1]!.admin('GET', `/admin/v1/tenants/${tenant.id}`)).status).toBe(200);
  }, 120_000);
});
