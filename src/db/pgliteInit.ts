import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Creates a new PGlite data directory (initdb) in a short-lived child process. PGlite's WebAssembly memory grows to
 * about 850 MB during initdb and never shrinks, so a platform that ran initdb itself kept that for its whole life
 * (about 900 MB RSS after a first start, against 470 MB once restarted on the same directory); the child gives it back
 * to the system when it exits. A directory that already holds a database is left alone.
 */
export async function initPgliteDir(dir: string): Promise<void> {
  if (existsSync(join(dir, 'PG_VERSION'))) return;
  const pglite = import.meta.resolve('@electric-sql/pglite');
  const script = `const { PGlite } = await import(${JSON.stringify(pglite)}); const db = await PGlite.create(${JSON.stringify(dir)}); await db.close();`;
  await new Promise<void>((resolve, reject) => {
    execFile(process.execPath, ['--input-type=module', '-e', script], { maxBuffer: 16 * 1024 * 1024 }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`could not create the embedded database in ${dir}: ${stderr.trim() || error.message}`));
      else resolve();
    });
  });
}
