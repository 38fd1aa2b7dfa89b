import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/client.ts';
import { JobQueue } from '../../src/jobs/queue.ts';
import { MODULES } from '../../src/modules/index.ts';
import { platformLogger } from '../../src/platform/logger.ts';
import { Metrics } from '../../src/platform/metrics.ts';

/**
 * Migrates the PostgreSQL database given as the argument and creates the job queue's schema and queues, as a
 * platform's start does before anything else (src/server.ts), and nothing more: no worker has run, no row of a
 * process is left behind (see globalSetup.ts).
 */
const databaseUrl = process.argv[2]!;
const config = loadConfig({ ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' });
const database = await openDatabase(config);
await database.migrate();
const queue = await JobQueue.start(database, platformLogger(false, 'warn').log, new Metrics());
for (const job of MODULES.flatMap((m) => m.jobs ?? [])) await queue.create(job);
await queue.stop();
await database.close();
