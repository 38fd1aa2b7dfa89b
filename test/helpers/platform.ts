import { execFile } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { describe, inject, it } from 'vitest';
import { tenantClient, type TestTenant } from './client.ts';
import { injectFetch, type Fetch } from './inject.ts';

export { tenantClient, type TestTenant };
import { loadConfig, type Config } from '../../src/config.ts';
import type { LoggerSetting } from '../../src/platform/logger.ts';
import { openPlatform, type Platform } from '../../src/server.ts';

export type DbKind = 'pglite' | 'postgres';

/** The databases every persistence test runs on: PGlite always, PostgreSQL when TEST_DATABASE_URL is set. */
export const DATABASES: DbKind[] = process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

export function describeEachDb(name: string, fn: (kind: DbKind) => void): void {
  for (const kind of DATABASES) describe(`${name} [${kind}]`, () => fn(kind));
}

/**
 * For a media end-to-end file whose database work an API test already covers on both databases (what is asked of
 * the database is the same whichever plays the media): it runs on `kind` only, or on PGlite when PostgreSQL is not
 * configured. The media files split between the two, so that both databases serve real players. Restarts, leases
 * and schedules, where the database is the point, use `describeEachDb`. CI's 20 minutes are why.
 */
export function describeOnDb(kind: DbKind, name: string, fn: (kind: DbKind) => void): void {
  describe(`${name} [${oneDb(kind)}]`, () => fn(oneDb(kind)));
}

export const oneDb = (kind: DbKind): DbKind => (DATABASES.includes(kind) ? kind : 'pglite');

/**
 * Inside `describeEachDb`: a test whose database work the file's other tests (or an API test) cover on both databases
 * runs on `on` only, as `describeOnDb` does for a whole file.
 */
export const itOnDb = (kind: DbKind, on: DbKind) => it.runIf(kind === oneDb(on));

/**
 * A fresh PostgreSQL database on the TEST_DATABASE_URL server, a copy of the run's migrated one
 * (test/setup/globalSetup.ts) unless `empty`; dropped by the returned function.
 */
async function freshPostgresDatabase(empty: boolean): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = new URL(process.env.TEST_DATABASE_URL!);
  const name = `mediaplane_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const template = empty ? '' : inject('postgresTemplate');
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`create database ${name}${template ? ` template ${template}` : ''}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: admin.toString() });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

export interface TestPlatform extends Platform {
  kind: DbKind;
  /** Where the platform answers: its port, or (in process) its public URL, which only `fetch` below reaches. */
  baseUrl: string;
  config: Config;
  /** `fetch` to this platform: over its port, or through app.inject() when it has none. Other URLs go to `fetch`. */
  fetch: Fetch;
  /** A tenant's developer holding this key, calling this platform. */
  client(id: string, name: string, key: string): TestTenant;
  /** Creates a tenant through the admin API; returns what a tenant's developer holds. */
  createTenant(name?: string): Promise<TestTenant>;
  admin(method: string, path: string, body?: unknown): Promise<Response>;
  stop(): Promise<void>;
}

let tenantCounter = 0;

/** Where a platform keeps its state: a data directory and, on PostgreSQL, a database. */
export interface TestStorage {
  dataDir: string;
  /** Empty on PGlite. */
  databaseUrl: string;
  drop(): Promise<void>;
}

/**
 * A fresh data directory (and PostgreSQL database), for platforms that must outlive one another (restart tests).
 * `empty`: a PostgreSQL database no platform has migrated yet (a test of the migration).
 */
export async function freshStorage(kind: DbKind, { empty = false }: { empty?: boolean } = {}): Promise<TestStorage> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mediaplane-test-'));
  const pgdb = kind === 'postgres' ? await freshPostgresDatabase(empty) : undefined;
  if (kind === 'pglite') await pgliteCopyInto(join(dataDir, 'pglite'));
  return {
    dataDir,
    databaseUrl: pgdb?.url ?? '',
    drop: async () => {
      await pgdb?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A copy of the run's initialised and migrated PGlite database (test/setup/globalSetup.ts), not initdb again: 42 MB
 * in 1,300 files, most of a second to copy. The next copy is made in the background as soon as one is taken (a
 * worker's files share this module), so a platform's start seldom waits for it. Copies are made beside the template,
 * whose folder the run removes at its end (with a copy made for a file that never came).
 */
let nextCopy: { dir: string; ready: Promise<Error | undefined> } | undefined;
function copyTemplate(): { dir: string; ready: Promise<Error | undefined> } {
  const template = inject('pgliteTemplate');
  const dir = mkdtempSync(join(dirname(template), 'copy-'));
  // A failure is kept for the file that takes the copy (a copy nobody takes must not be an unhandled rejection).
  const ready = promisify(execFile)('cp', ['-r', template, join(dir, 'pglite')]).then(
    () => undefined,
    (e: Error) => e,
  );
  return { dir, ready };
}

async function pgliteCopyInto(target: string): Promise<void> {
  if (!inject('pgliteTemplate')) return;
  const copy = nextCopy ?? copyTemplate();
  nextCopy = copyTemplate();
  const failed = await copy.ready;
  if (failed) throw failed;
  renameSync(join(copy.dir, 'pglite'), target);
  rmSync(copy.dir, { recursive: true, force: true });
}

/**
 * Starts the whole platform on a real port, on a fresh database and data directory, or on `storage` when given
 * (which `stop` then leaves in place).
 */
export function startPlatform(
  kind: DbKind,
  env: Record<string, string> = {},
  storage?: TestStorage,
  opts: { logger?: LoggerSetting } = {},
): Promise<TestPlatform> {
  return start(kind, env, storage, true, opts);
}

/**
 * The whole platform (database, queues, workers) without a port: `p.fetch` and its tenants' calls go through
 * app.inject(). For tests of what the routes answer; a test of the HTTP server itself (Node's parser, sockets,
 * streaming uploads, another process) needs `startPlatform`.
 */
export function startInProcess(kind: DbKind, env: Record<string, string> = {}, opts: { logger?: LoggerSetting } = {}): Promise<TestPlatform> {
  return start(kind, env, undefined, false, opts);
}

async function start(
  kind: DbKind,
  env: Record<string, string>,
  storage: TestStorage | undefined,
  listen: boolean,
  opts: { logger?: LoggerSetting },
): Promise<TestPlatform> {
  const own = storage ?? (await freshStorage(kind));
  const config = loadConfig({
    ...process.env,
    DATABASE_URL: own.databaseUrl,
    MEDIAPLANE_DATA_DIR: own.dataDir,
    MEDIAPLANE_ADMIN_TOKEN: 'test-admin-token',
    // The live role opens its RTMP port at start: test platforms take any free one unless a test names its own.
    MEDIAPLANE_RTMP_PORT: process.env.MEDIAPLANE_RTMP_PORT ?? '0',
    // Every answer of a documented operation is checked against the OpenAPI document (src/platform/responseCheck.ts).
    MEDIAPLANE_RESPONSE_CHECK: 'true',
    ...env,
  });
  const platform = await openPlatform(config, opts);
  let baseUrl: string;
  let send: Fetch;
  if (listen) {
    const address = await platform.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = address.replace('127.0.0.1', 'localhost');
    config.publicUrl = new URL(baseUrl);
    send = fetch;
  } else {
    baseUrl = config.publicUrl.origin;
    send = injectFetch(platform.app, baseUrl);
  }

  const admin = (method: string, path: string, body?: unknown) =>
    send(baseUrl + path, {
      method,
      headers: { authorization: `Bearer ${platform.adminToken}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
  const client = (id: string, name: string, key: string) => tenantClient(baseUrl, id, name, key, send);

  return {
    ...platform,
    kind,
    baseUrl,
    config,
    fetch: send,
    client,
    admin,
    async createTenant(name = `tenant-${process.pid}-${++tenantCounter}`) {
      const res = await admin('POST', '/admin/v1/tenants', { name });
      if (res.status !== 201) throw new Error(`tenant create failed: ${res.status} ${await res.text()}`);
      const t = (await res.json()) as any;
      return client(t.id, t.name, t.apiKey.key);
    },
    async stop() {
      await platform.close();
      if (!storage) await own.drop();
    },
  };
}
