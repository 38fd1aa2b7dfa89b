import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { initPgliteDir } from '../../src/db/pgliteInit.ts';

describe('a new PGlite data directory', () => {
  const root = mkdtempSync(join(tmpdir(), 'mediaplane-pglite-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('is created by a child process, opens as a database, and is left alone once it exists', async () => {
    const dir = join(root, 'db');
    mkdirSync(dir);
    await initPgliteDir(dir);
    const created = statSync(join(dir, 'PG_VERSION')).mtimeMs;
    const db = await PGlite.create(dir);
    expect((await db.query<{ n: number }>('select 1 + 1 as n')).rows[0].n).toBe(2);
    await db.exec('create table kept (id int); insert into kept values (7)');
    await db.close();
    await initPgliteDir(dir);
    expect(statSync(join(dir, 'PG_VERSION')).mtimeMs).toBe(created);
    const again = await PGlite.create(dir);
    expect((await again.query<{ id: number }>('select id from kept')).rows).toEqual([{ id: 7 }]);
    await again.close();
  });

  it('says which directory it could not create', async () => {
    writeFileSync(join(root, 'a-file'), '');
    const dir = join(root, 'a-file', 'db'); // below a file: no directory can be made there
    await expect(initPgliteDir(dir)).rejects.toThrow(`could not create the embedded database in ${dir}`);
  });
});
