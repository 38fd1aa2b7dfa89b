import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import type { Platform } from '../server.ts';
import { recordServerPort } from '../platform/serverPort.ts';

/**
 * `mediaplane serve`: this process is the one a user, systemd or a container runtime starts and signals. On SIGTERM or
 * SIGINT it stops taking requests, lets those in flight finish, hands its jobs back, closes the database and releases
 * the data directory; if that takes longer than MEDIAPLANE_SHUTDOWN_TIMEOUT_SECONDS it exits anyway (the lock of a
 * process that is gone is taken over by the next start, and unfinished jobs are taken up again).
 */
export async function serve(config: Config): Promise<void> {
  // The signals are handled from the first moment, before the platform's modules load: as a container's PID 1, a
  // process without a handler would ignore SIGTERM (the kernel applies no default action to PID 1) and wait for SIGKILL.
  let opening: Promise<Platform> | undefined = undefined; // set once the modules are loaded
  let health: FastifyInstance | undefined;
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
      // Not opening yet: nothing was taken (the data directory lock is taken by openPlatform).
      const platform = await opening;
      platform?.app.log.info({ signal }, 'shutting down');
      await health?.close();
      await platform?.close();
    } catch {
      // a failed start has already cleaned up and reports its own error
    }
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  const firstStart = !config.databaseUrl && !existsSync(join(config.dataDir, 'pglite', 'PG_VERSION'));
  const say = (message: string) => console.log(message);
  if (firstStart)
    say(`First start: creating the embedded database in ${join(config.dataDir, 'pglite')} (this takes a while once; later starts take seconds)...`);
  const { openPlatform } = await import('../server.ts');
  if (stopping) return;
  opening = openPlatform(config, {
    logger: { level: config.logLevel },
    onAdminTokenCreated: (token, path) => say(`\nGenerated the admin token (stored in ${path}; shown only this once):\n\n  ${token}\n`),
    onProgress: firstStart ? say : undefined,
  });

  const platform = await opening;
  if (stopping) return;
  if (config.role === 'worker' || config.role === 'live') {
    if (config.healthPort !== undefined) {
      const { listenForHealth } = await import('../platform/healthServer.ts');
      const { ctx } = platform;
      health = await listenForHealth({
        port: config.healthPort,
        host: config.host,
        ping: ctx.database.ping,
        metrics: ctx.metrics,
        adminToken: platform.adminToken,
        metricsToken: config.metricsToken,
      });
    }
    const on = health ? `, health on port ${config.healthPort}` : '';
    platform.app.log.info(`Mediaplane ${config.role} running (database: ${platform.database.kind}${on})`);
    return;
  }
  await platform.app.listen({ port: config.port, host: config.host });
  const address = platform.app.server.address();
  if (address && typeof address === 'object') recordServerPort(config.dataDir, address.port);
  const ready = `Mediaplane ${config.role} on ${config.publicUrl.origin} (database: ${platform.database.kind}, data: ${config.dataDir})`;
  if (firstStart) say(ready);
  else platform.app.log.info(ready);
}
