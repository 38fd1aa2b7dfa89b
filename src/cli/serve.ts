import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.ts';
import { recordServerPort } from '../platform/serverPort.ts';

/**
 * `mediaplane serve`: this process is the one a user, systemd or a container runtime starts and signals. On SIGTERM or
 * SIGINT it stops taking requests, lets those in flight finish, hands its jobs back, closes the database and releases
 * the data directory; if that takes longer than MEDIAPLANE_SHUTDOWN_TIMEOUT_SECONDS it exits anyway (the lock of a
 * process that is gone is taken over by the next start, and unfinished jobs are taken up again).
 */
export async function serve(config: Config): Promise<void> {
  const firstStart = !config.databaseUrl && !existsSync(join(config.dataDir, 'pglite', 'PG_VERSION'));
  const say = (message: string) => console.log(message);
  if (firstStart)
    say(`First start: creating the embedded database in ${join(config.dataDir, 'pglite')} (this takes a while once; later starts take seconds)...`);
  const { openPlatform } = await import('../server.ts');
  const opening = openPlatform(config, {
    logger: { level: config.logLevel },
    onAdminTokenCreated: (token, path) => say(`\nGenerated the admin token (stored in ${path}; shown only this once):\n\n  ${token}\n`),
    onProgress: firstStart ? say : undefined,
  });

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return; // a terminal's Ctrl-C reaches both npm and us, and npm passes it on too
    stopping = true;
    const timer = setTimeout(() => {
      console.error(`Shutdown took longer than ${config.shutdownTimeoutSeconds} s: exiting without waiting further.`);
      process.exit(1);
    }, config.shutdownTimeoutSeconds * 1000);
    timer.unref();
    try {
      const platform = await opening;
      platform.app.log.info({ signal }, 'shutting down');
      await platform.close();
    } catch {
      // a failed start has already cleaned up and reports its own error
    }
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  const platform = await opening;
  if (stopping) return;
  if (config.role === 'worker' || config.role === 'live') {
    platform.app.log.info(`Mediaplane ${config.role} running (database: ${platform.database.kind})`);
    return;
  }
  await platform.app.listen({ port: config.port, host: config.host });
  const address = platform.app.server.address();
  if (address && typeof address === 'object') recordServerPort(config.dataDir, address.port);
  const ready = `Mediaplane ${config.role} on ${config.publicUrl.origin} (database: ${platform.database.kind}, data: ${config.dataDir})`;
  if (firstStart) say(ready);
  else platform.app.log.info(ready);
}
