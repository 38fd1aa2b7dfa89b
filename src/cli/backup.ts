import { execFile } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Config } from '../config.ts';
import { lockDataDir } from '../db/lock.ts';
import { copySecrets, linkTree, newBackupName, readBackup, removeTree, writeBackup, type BackupSummary } from '../platform/backup.ts';
import { locate } from './locate.ts';

const run = promisify(execFile);
/** A target with one of these endings is written as one gzipped tar file; anything else as a directory. */
const ARCHIVE = /\.(tar\.gz|tgz|tar)$/;

function embeddedOnly(config: Config): void {
  if (config.databaseUrl) throw new Error('backup and restore cover the embedded install (PGlite); back up PostgreSQL with pg_dump and pg_restore.');
  if (config.storageUrl)
    throw new Error(
      "backup and restore cover the embedded install (files under the data directory); S3 keeps its objects itself: use the bucket's versioning or replication, and pg_dump for the database.",
    );
}

/** `mediaplane backup <dir|file>`: asks the running server for a backup, or makes it directly when none runs. */
export async function backup(config: Config, targetArg: string): Promise<void> {
  embeddedOnly(config);
  const target = resolve(targetArg);
  if (existsSync(target)) throw new Error(`${target} already exists; name a new directory or file.`);
  const route = await locate(config);
  let made: BackupSummary;
  if (route.how === 'http') {
    if (!route.why.includes(config.dataDir)) throw new Error(`${route.why}\nRun backup with MEDIAPLANE_DATA_DIR set to that server's data directory.`);
    const res = await fetch(`${route.base}/admin/v1/backups`, { method: 'POST', headers: { authorization: `Bearer ${route.token}` } });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the admin API answers a BackupSummary or an error body
    const body = (await res.json().catch(() => undefined)) as any;
    if (res.status !== 201) throw new Error(body?.status?.message ?? `The admin API answered HTTP ${res.status}`);
    made = body;
  } else {
    if (route.newDatabase) throw new Error(`${config.dataDir} holds no Mediaplane database: nothing to back up.`);
    const release = lockDataDir(config.dataDir);
    try {
      const { openDatabase } = await import('../db/client.ts');
      const database = await openDatabase(config);
      try {
        made = await writeBackup(config.dataDir, () => database.dumpDataDir!(), join(config.dataDir, 'backups', newBackupName()));
      } finally {
        await database.close();
      }
    } finally {
      release();
    }
  }
  const madeDir = join(config.dataDir, 'backups', made.name);
  try {
    if (ARCHIVE.test(target)) {
      await run('tar', [target.endsWith('.tar') ? '-cf' : '-czf', target, '-C', madeDir, '.']);
    } else {
      await rename(madeDir, target).catch(async (e: NodeJS.ErrnoException) => {
        if (e.code !== 'EXDEV') throw e;
        await linkTree(madeDir, target);
      });
    }
  } finally {
    await removeTree(madeDir);
  }
  console.log(`Backup written to ${target} (database ${(made.databaseBytes / 1e6).toFixed(1)} MB, ${made.objects} stored files)`);
}

/** `mediaplane restore <dir|file>`: into the data directory, which no server may hold and which must be empty unless forced. */
export async function restore(config: Config, sourceArg: string, opts: { force?: boolean }): Promise<void> {
  embeddedOnly(config);
  const source = resolve(sourceArg);
  if (!existsSync(source)) throw new Error(`${source} does not exist.`);
  const release = lockDataDir(config.dataDir);
  let unpacked: string | undefined;
  try {
    const pglite = join(config.dataDir, 'pglite');
    const objects = join(config.dataDir, 'objects');
    const occupied = existsSync(join(pglite, 'PG_VERSION')) || (existsSync(objects) && readdirSync(objects).length > 0);
    if (occupied && !opts.force) {
      throw new Error(
        `${config.dataDir} already holds a Mediaplane database or stored files. Restore into a new data directory (MEDIAPLANE_DATA_DIR), or add --force to replace what is there.`,
      );
    }
    let dir = source;
    if (statSync(source).isFile()) {
      unpacked = await mkdtemp(join(config.dataDir, 'restoring-'));
      await run('tar', ['-xf', source, '-C', unpacked]);
      dir = unpacked;
    }
    const found = await readBackup(dir);
    for (const path of [pglite, objects, join(config.dataDir, 'uploads'), join(config.dataDir, 'work')]) await rm(path, { recursive: true, force: true });
    const { loadPglite } = await import('../db/pgliteBackup.ts');
    await loadPglite(pglite, found.database);
    const count = await linkTree(found.objectsDir, objects);
    await copySecrets(dir, config.dataDir);
    console.log(
      `Restored ${source} into ${config.dataDir} (${count} stored files). Start the platform on it: MEDIAPLANE_DATA_DIR=${config.dataDir} mediaplane serve`,
    );
  } finally {
    if (unpacked) await rm(unpacked, { recursive: true, force: true });
    release();
  }
}
