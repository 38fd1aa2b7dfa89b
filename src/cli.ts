import { Command } from 'commander';
import { registerTenantCommands } from './cli/tenant/commands.ts';
import { environmentWith, loadConfig } from './config.ts';

// Each command imports what it needs when it runs: `--help`, or `tenant list` beside a running server, loads neither
// Fastify, the database nor the media code.

const program = new Command('mediaplane').description('Mediaplane: a self-hostable, multi-tenant video platform');

program
  .command('serve', { isDefault: true })
  .description('start the platform (API on PORT, default 8080)')
  .option('--role <role>', 'all (default), api, worker or live; overrides MEDIAPLANE_ROLE')
  .action(async (opts: { role?: string }) => {
    const { serve } = await import('./cli/serve.ts');
    await serve(loadConfig(opts.role ? environmentWith({ MEDIAPLANE_ROLE: opts.role }) : undefined));
  });

program
  .command('migrate')
  .description('apply database migrations and exit')
  .action(async () => {
    const { withDatabase } = await import('./cli/database.ts');
    await withDatabase(loadConfig(), async () => {});
    console.log('migrations applied');
  });

const tenant = program.command('tenant').description('manage tenants (as the operator)');

tenant
  .command('create <name>')
  .description('create a tenant and print its id and first Admin API key')
  .option('--json', 'print the created tenant as JSON (with apiKey.key)')
  .option('--export', 'print `export TENANT_ID=... KEY=...` for a shell to eval')
  .action(async (name: string, opts: { json?: boolean; export?: boolean }) => {
    const { adminClient } = await import('./cli/adminClient.ts');
    await adminClient(loadConfig(), async (c) => {
      const t = await c.createTenant(name);
      if (opts.json) console.log(JSON.stringify(t, null, 2));
      else if (opts.export) console.log(`export TENANT_ID=${t.id} KEY=${t.apiKey.key}`);
      else console.log(`tenant ${t.name} created\n  X-Tenant-Id: ${t.id}\n  X-Api-Key:   ${t.apiKey.key}   (shown once)`);
    });
  });

tenant
  .command('list')
  .description('list tenants')
  .option('--json', 'print the tenants as JSON')
  .action(async (opts: { json?: boolean }) => {
    const { adminClient } = await import('./cli/adminClient.ts');
    await adminClient(loadConfig(), async (c) => {
      const tenants = await c.listTenants();
      if (opts.json) console.log(JSON.stringify(tenants, null, 2));
      else for (const t of tenants) console.log(`${t.id}  ${t.name.padEnd(24)} ${t.status}`);
    });
  });

for (const [command, status] of [
  ['block', 'Blocked'],
  ['unblock', 'Active'],
] as const) {
  tenant
    .command(`${command} <idOrName>`)
    .description(`set a tenant's status to ${status}`)
    .action(async (idOrName: string) => {
      const { adminClient } = await import('./cli/adminClient.ts');
      await adminClient(loadConfig(), async (c) => {
        const t = await c.updateTenant(idOrName, { status });
        console.log(`tenant ${t.name} is ${t.status}`);
      });
    });
}

program
  .command('backup <target>')
  .description('back up the embedded database and object store, while the platform runs or not, into a new directory (or a .tar.gz file)')
  .action(async (target: string) => {
    const { backup } = await import('./cli/backup.ts');
    await backup(loadConfig(), target);
  });

program
  .command('restore <source>')
  .description('restore a backup (directory or .tar.gz) into the data directory; the platform must not be running on it')
  .option('--force', 'replace the database and stored files the data directory already holds')
  .action(async (source: string, opts: { force?: boolean }) => {
    const { restore } = await import('./cli/backup.ts');
    await restore(loadConfig(), source, opts);
  });

// A tenant's commands, through the API with the SDK: login, upload, assets, files, channels, webhooks, keys, completion.
registerTenantCommands(program);

program.parseAsync().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
