import { randomBytes } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { chmod, copyFile, link, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * Backups of the embedded install: the PGlite database and the file object store of one data directory.
 *
 * A backup is a directory (mode 700: it holds the admin token and the URL signing secret):
 *   manifest.json        what it is and when it was taken
 *   database.tar.gz      the PGlite data directory (pgliteBackup.ts)
 *   objects/             the object store's files, hard-linked when on the same file system (objects are written
 *                        once, through a rename, and never changed in place, so a link is a snapshot)
 *   admin-token, url-signing-secret   when the data directory holds them
 *
 * Consistency while the platform runs: the objects are linked once before the database is dumped (an object deleted
 * meanwhile is still in the backup) and once after (an object written meanwhile, which the dumped rows may already
 * name, is in it too). Uploads in progress (`uploads/`) and transcoding scratch (`work/`) are not kept: a restored
 * platform sees those uploads expire and takes the transcodes up again.
 */
const BACKUP_FORMAT = 1;
const SECRETS = ['admin-token', 'url-signing-secret'];

export interface BackupSummary {
  name: string;
  createdAt: string;
  databaseBytes: number;
  objects: number;
}

export function newBackupName(): string {
  return `backup-${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}`;
}

/** Writes a backup of `dataDir` into the new directory `dest`. */
export async function writeBackup(dataDir: string, dumpDatabase: () => Promise<Buffer>, dest: string): Promise<BackupSummary> {
  await mkdir(dirname(dest), { recursive: true, mode: 0o700 });
  await mkdir(dest, { mode: 0o700 });
  const objects = join(dataDir, 'objects');
  await linkTree(objects, join(dest, 'objects'));
  const database = await dumpDatabase();
  await writeFile(join(dest, 'database.tar.gz'), database, { mode: 0o600 });
  const count = await linkTree(objects, join(dest, 'objects'));
  await copySecrets(dataDir, dest);
  const summary: BackupSummary = { name: dest.split('/').pop()!, createdAt: new Date().toISOString(), databaseBytes: database.length, objects: count };
  await writeFile(join(dest, 'manifest.json'), `${JSON.stringify({ format: BACKUP_FORMAT, kind: 'mediaplane-embedded', ...summary }, null, 2)}\n`, {
    mode: 0o600,
  });
  return summary;
}

/** Reads a backup directory written by writeBackup; throws a message for the operator when it is not one. */
export async function readBackup(dir: string): Promise<{ database: Buffer; objectsDir: string }> {
  let manifest: { format?: number; kind?: string };
  try {
    manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
  } catch {
    throw new Error(`${dir} is not a Mediaplane backup (no readable manifest.json)`);
  }
  if (manifest.kind !== 'mediaplane-embedded' || manifest.format !== BACKUP_FORMAT) {
    throw new Error(`${dir} is a backup of a format this version cannot restore (${manifest.kind} ${manifest.format})`);
  }
  return { database: await readFile(join(dir, 'database.tar.gz')), objectsDir: join(dir, 'objects') };
}

/**
 * Hard-links (or, across file systems, copies) every file of `from` into `to`, keeping what is already there.
 * Files an object store is still writing (`*.tmp`) are skipped. Returns the number of files in `to`'s tree.
 */
export async function linkTree(from: string, to: string): Promise<number> {
  let entries: Dirent[];
  try {
    entries = await readdir(from, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw e;
  }
  await mkdir(to, { recursive: true });
  let count = 0;
  for (const entry of entries) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) {
      count += await linkTree(source, target);
    } else if (entry.isFile() && !entry.name.endsWith('.tmp')) {
      try {
        await link(source, target);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EXDEV' || code === 'EPERM') await copyFile(source, target);
        else if (code === 'ENOENT')
          continue; // deleted since readdir
        else if (code !== 'EEXIST') throw e;
      }
      count++;
    }
  }
  return count;
}

/** Copies the data directory's generated secrets (admin token, URL signing secret) that `from` holds into `to`. */
export async function copySecrets(from: string, to: string): Promise<void> {
  for (const name of SECRETS) {
    if (!(await exists(join(from, name)))) continue;
    await copyFile(join(from, name), join(to, name));
    await chmod(join(to, name), 0o600);
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

export async function removeTree(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true });
}
