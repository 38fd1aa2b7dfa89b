import { Command } from 'commander';
import { environmentWith, loadConfig } from './config.ts';
import { DataDirLockedError } from './db/lock.ts';
import { openPlatform } from './server.ts';
import { adminClient } from './cli/adminClient.ts';
import { withDatabase } from './cli/database.ts';

const program = new Command('mediaplane').description('Mediaplane: a self-hostable, multi-tenant video platform');

program
  .command('serve', { isDefault: true })
  .description('start the platform (API on PORT, default 8080)')
  .option('--role <role>', 'all (default), api, worker or live; overrides MEDIAPLANE_ROLE')
  .action(async (opts: { role?: string }) => {
    const config = loadConfig(opts.role ? environmentWith({ MEDIAPLANE_ROLE: opts.role }) : undefined);
    const platform = await openPlatform(config, {
      logger: { level: config.logLevel },
      onAdminTokenCreated: (token, path) =>
        console.log(`\nGenerated the admin token (stored in ${path}; shown only this once):\n\n  ${token}\n`),
    });
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      platform.app.log.info({ signal }, 'shutting down');
      await platform.close();
      process.exit(0);
    };
    process.on('SIGINT', () => void stop('SIGINT'));
    process.on('SIGTERM', () => void stop('SIGTERM'));
    if (config.role === 'worker') {
      platform.app.log.info(`Mediaplane worker running (database: ${platform.database.kind})`);
      return;
    }
    await platform.app.listen({ port: config.port, host: config.host });
    platform.app.log.info(`Mediaplane ${config.role} on ${config.publicUrl.origin} (database: ${platform.database.kind}, data: ${config.dataDir})`);
  });

program
  .command('migrate')
  .description('apply database migrations and exit')
  .action(async () => {
    await withDatabase(loadConfig(), async () => {});
    console.log('migrations applied');
  });

const tenant = program.command('tenant').description('manage tenants (as the operator)');

tenant
  .command('create <name>')
  .description('create a tenant and print its first Admin API key')
  .action(async (name: string) => {
    await adminClient(loadConfig(), async (c) => {
      const t = await c.createTenant(name);
      console.log(`tenant ${t.name} created\n  X-Tenant-Id: ${t.id}\n  X-Api-Key:   ${t.apiKey.key}   (shown once)`);
    });
  });

tenant
  .command('list')
  .description('list tenants')
  .action(async () => {
    await adminClient(loadConfig(), async (c) => {
      for (const t of await c.listTenants()) console.log(`${t.id}  ${t.name.padEnd(24)} ${t.status}`);
    });
  });

for (const [command, status] of [['block', 'Blocked'], ['unblock', 'Active']] as const) {
  tenant
    .command(`${command} <idOrName>`)
    .description(`set a tenant's status to ${status}`)
    .action(async (idOrName: string) => {
      await adminClient(loadConfig(), async (c) => {
        const t = await c.updateTenant(idOrName, { status });
        console.log(`tenant ${t.name} is ${t.status}`);
      });
    });
}

program.parseAsync().catch((e) => {
  console.error(e instanceof DataDirLockedError ? e.message : e instanceof Error ? e.message : e);
  process.exit(1);
});
