import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PGlite directory initialised and migrated once per run; freshStorage copies it (test/helpers/platform.ts). */
    pgliteTemplate: string;
  }
}

/**
 * PGlite's initdb and the migrations take 10 s on an idle machine and over 40 s on a loaded one, for every platform a
 * test starts. They run once here (in a child: vitest's module runner cannot run the platform's start); each test
 * platform starts on a copy. Tests of the start itself (the CLI's serve, db.pgliteInit) make their own directories.
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mediaplane-template-'));
  const script = new URL('./pgliteTemplate.ts', import.meta.url).pathname;
  await promisify(execFile)(process.execPath, ['--import', 'tsx', script, dataDir], { maxBuffer: 16 * 1024 * 1024 });
  project.provide('pgliteTemplate', join(dataDir, 'pglite'));
  return () => rmSync(dataDir, { recursive: true, force: true });
}
