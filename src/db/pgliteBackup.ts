import { PGlite } from '@electric-sql/pglite';

/**
 * A consistent copy of a running PGlite database: PGlite runs one statement at a time, and dumpDataDir tars the data
 * directory between two of them, so the tar is what a crash at that instant would leave (committed transactions in
 * the WAL, which the next open replays). The checkpoint before it keeps that replay short.
 */
export async function dumpPglite(client: PGlite): Promise<Buffer> {
  await client.query('checkpoint');
  const tar = await client.dumpDataDir('gzip');
  return Buffer.from(await tar.arrayBuffer());
}

/** Creates a PGlite data directory from a dumpPglite() tarball. */
export async function loadPglite(dir: string, tarball: Buffer): Promise<void> {
  const client = await PGlite.create(dir, { loadDataDir: new Blob([new Uint8Array(tarball)]) });
  await client.query('select 1');
  await client.close();
}
