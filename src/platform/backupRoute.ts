import type { FastifyInstance } from 'fastify';
import { join } from 'node:path';
import { Type } from 'typebox';
import type { PlatformContext } from '../context.ts';
import { newBackupName, writeBackup } from './backup.ts';
import { ApiError } from './errors.ts';

const Backup = Type.Object({
  name: Type.String({ description: 'The backup directory, under `backups/` in the data directory' }),
  createdAt: Type.String({ format: 'date-time' }),
  databaseBytes: Type.Integer(),
  objects: Type.Integer({ description: 'Files of the object store in the backup' }),
});

/**
 * `POST /admin/v1/backups`: the running server backs up its own embedded database and store into
 * `<data dir>/backups/<name>` (same file system: the objects are hard links), for `mediaplane backup` to move where the
 * operator asked. The server does it because PGlite lets no other process open the database while it runs.
 */
export function registerBackup(app: FastifyInstance, ctx: PlatformContext): void {
  const ref = Type.Ref('Error');
  app.post(
    '/admin/v1/backups',
    {
      config: { admin: true },
      schema: {
        tags: ['Admin'],
        security: [{ adminToken: [] }],
        operationId: 'create_backup',
        summary: 'Back up the embedded database and object store',
        description: 'Writes a consistent copy of the PGlite database and the file store under `backups/` in the data directory, for `mediaplane backup`.',
        response: { 201: Backup, 401: ref, 409: ref },
      },
    },
    async (_req, reply) => {
      const { database, config } = ctx;
      if (!database.dumpDataDir || ctx.store.kind !== 'fs') {
        throw new ApiError(
          409,
          'backup_unsupported',
          "Backups cover the embedded install (PGlite and the file store); back up PostgreSQL with pg_dump and S3 with the bucket's own versioning or replication",
        );
      }
      const summary = await writeBackup(config.dataDir, () => database.dumpDataDir!(), join(config.dataDir, 'backups', newBackupName()));
      return reply.status(201).send(summary);
    },
  );
}
