import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, inject } from 'vitest';
import { tenantClient, type TestTenant } from './client.ts';

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

/** A fresh, empty PostgreSQL database on the TEST_DATABASE_URL server; dropped by the returned function. */
async function freshPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = new URL(process.env.TEST_DATABASE_URL!);
  const name = `mediaplane_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`create database ${name}`);
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
  baseUrl: string;
  config: Config;
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

/** A fresh data directory (and PostgreSQL database), for platforms that must outlive one another (restart tests). */
export async function freshStorage(kind: DbKind): Promise<TestStorage> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mediaplane-test-'));
  const pgdb = kind === 'postgres' ? await freshPostgresDatabase() : undefined;
  // A copy of the run's initialised and migrated database (test/setup/globalSetup.ts), not initdb again.
  const template = inject('pgliteTemplate');
  if (kind === 'pglite' && template) cpSync(template, join(dataDir, 'pglite'), { recursive: true });
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
 * Starts the whole platform on a real port, on a fresh database and data directory, or on `storage` when given
 * (which `stop` then leaves in place).
 */
export async function startPlatform(
  kind: DbKind,
  env: Record<string, string> = {},
  storage?: TestStorage,
  opts: { logger?: LoggerSetting } = {},
): Promise<TestPlatform> {
  const own = storage ?? (await freshStorage(kind));
  const config = loadConfig({ ...process.env, DATABASE_URL: own.databaseUrl, MEDIAPLANE_DATA_DIR: own.dataDir, MEDIAPLANE_ADMIN_TOKEN: 'test-admin-token', ...env });
  const platform = await openPlatform(config, opts);
  const address = await platform.app.listen({ port: 0, host: '127.0.0.1' });
  const baseUrl = address.replace('127.0.0.1', 'localhost');
  config.publicUrl = new URL(baseUrl);

  const admin = (method: string, path: string, body?: unknown) =>
    fetch(baseUrl + path, {
      method,
      headers: { authorization: `Bearer ${platform.adminToken}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });

  return {
    ...platform,
    kind,
    baseUrl,
    config,
    admin,
    async createTenant(name = `tenant-${process.pid}-${++tenantCounter}`) {
      const res = await admin('POST', '/admin/v1/tenants', { name });
      if (res.status !== 201) throw new Error(`tenant create failed: ${res.status} ${await res.text()}`);
      const t = (await res.json()) as any;
      return tenantClient(baseUrl, t.id, t.name, t.apiKey.key);
    },
    async stop() {
      await platform.close();
      if (!storage) await own.drop();
    },
  };
}
