import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PGlite directory initialised and migrated once per run; freshStorage copies it (test/helpers/platform.ts). */
    pgliteTemplate: string;
    /** A PostgreSQL database migrated once per run (empty without TEST_DATABASE_URL); freshStorage creates copies. */
    postgresTemplate: string;
  }
}

/**
 * PGlite's initdb and the migrations take 10 s on an idle machine and over 40 s on a loaded one, for every platform a
 * test starts. They run once here (in a child: vitest's module runner cannot run the platform's start); each test
 * platform starts on a copy. Tests of the start itself (the CLI's serve, db.pgliteInit) make their own directories.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mediaplane-template-'));
  const script = new URL('./pgliteTemplate.ts', import.meta.url).pathname;
  const postgres = process.env.TEST_DATABASE_URL ? postgresTemplate(process.env.TEST_DATABASE_URL) : undefined;
  await Promise.all([promisify(execFile)(process.execPath, ['--import', 'tsx', script, dataDir], { maxBuffer: 16 * 1024 * 1024 }), postgres?.ready]);
  project.provide('pgliteTemplate', join(dataDir, 'pglite'));
  project.provide('postgresTemplate', postgres?.name ?? '');
  return async () => {
    rmSync(dataDir, { recursive: true, force: true });
    await postgres?.drop();
  };
}

/**
 * The same for PostgreSQL: a database migrated once per run, which each test's database is created from
 * (`create database … template`, test/helpers/platform.ts) instead of migrating its own, seconds a start on a loaded
 * machine. A test of the migration itself asks for an empty database.
 */
function postgresTemplate(serverUrl: string): { name: string; ready: Promise<void>; drop: () => Promise<void> } {
  const name = `mediaplane_template_${process.pid}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    await client.query(sql).finally(() => client.end());
  };
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const script = new URL('./postgresTemplate.ts', import.meta.url).pathname;
  const ready = (async () => {
    await admin(`create database ${name}`);
    await promisify(execFile)(process.execPath, ['--import', 'tsx', script, url.toString()], { maxBuffer: 16 * 1024 * 1024 });
  })();
  return { name, ready, drop: () => admin(`drop database if exists ${name} with (force)`) };
}
