import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASES } from './helpers/platform.ts';
import { cli as processCli, freePort, mediaplane, waitReady, type Run } from './helpers/process.ts';
import { PROCESS_START_TIMEOUT_MS } from './helpers/until.ts';

/** Time for a hook or test that starts the server once (it waits up to PROCESS_START_TIMEOUT_MS) and runs CLI commands. */
const ONE_START_MS = PROCESS_START_TIMEOUT_MS + 60_000;

const run = mediaplane;
const cli = (args: string[], env: Record<string, string>) => processCli(args, env, undefined, 20_000);

async function stop(server: Run): Promise<number | null> {
  server.child.kill('SIGTERM');
  return (await server.exit).code;
}

const createdTenant = /tenant (\S+) created\n {2}X-Tenant-Id: (\S+)\n {2}X-Api-Key: {3}(\S+) {3}\(shown once\)/;

describe('process: serve, restart, lock and CLI on one PGlite data directory', () => {
  let dataDir: string;
  let port: number;
  let base: string;
  let env: Record<string, string>;
  let server: Run;
  let adminToken: string;
  let tenant: { id: string; key: string };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'mediaplane-proc-'));
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    env = { PORT: String(port), HOST: '127.0.0.1', MEDIAPLANE_DATA_DIR: dataDir };
    server = run(['serve'], env);
    await waitReady(base, server);
  }, ONE_START_MS);
  afterAll(async () => {
    if (server.child.exitCode === null) await stop(server);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints a generated admin token once and stores it (mode 600) in the data directory', async () => {
    const stored = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    expect(stored).toMatch(/^mpa_[A-Za-z0-9_-]{43}$/);
    expect(statSync(join(dataDir, 'admin-token')).mode & 0o777).toBe(0o600);
    expect(server.output()).toContain(`Generated the admin token (stored in ${join(dataDir, 'admin-token')}; shown only this once):\n\n  ${stored}\n`);
    adminToken = stored;
    const res = await fetch(`${base}/admin/v1/tenants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'first' }),
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as any;
    tenant = { id: body.id, key: body.apiKey.key };
  });

  it('serves /healthz, /readyz, /openapi.json (3.1, every tenant operation) and /docs', async () => {
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: 'ok', database: 'ok' });
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as any;
    expect(doc.openapi).toBe('3.1.0');
    const operations = Object.entries(doc.paths).flatMap(([path, ops]: [string, any]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect(operations).toEqual(
      expect.arrayContaining([
        'GET /core/v1/settings/tenant/{id}/status',
        'GET /core/v1/api-key',
        'POST /core/v1/api-key',
        'GET /core/v1/api-key/{id}',
        'PUT /core/v1/api-key/{id}',
        'DELETE /core/v1/api-key/{id}',
        'GET /transcoder/v1/presets',
        'POST /oauth/token',
        'POST /admin/v1/tenants',
        'GET /admin/v1/tenants',
        'GET /admin/v1/tenants/{id}',
        'PATCH /admin/v1/tenants/{id}',
        'POST /admin/v1/tenants/{id}/oauth-clients',
      ]),
    );
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['adminToken', 'apiKey', 'bearer', 'tenantId']);
    expect(doc.paths['/core/v1/api-key'].get.responses['200']).toBeDefined();
    const docs = await fetch(`${base}/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toContain('text/html');
    expect(await docs.text()).toContain('swagger-ui');
  });

  it('a second process on the same data directory refuses to start, with a clear message and a non-zero exit', async () => {
    const other = await freePort();
    const { code, out } = await cli(['serve'], { ...env, PORT: String(other) });
    expect(code).not.toBe(0);
    expect(out).toContain(`Data directory ${dataDir} is in use by another Mediaplane process (pid ${server.child.pid}).`);
    // The first one is unharmed.
    expect((await fetch(`${base}/core/v1/api-key`, { headers: { 'x-api-key': tenant.key, 'x-tenant-id': tenant.id } })).status).toBe(200);
  });

  it('`tenant create` while the server holds the data directory goes through its admin API', async () => {
    const { code, out } = await cli(['tenant', 'create', 'viacli'], env);
    expect(code, out).toBe(0);
    const m = createdTenant.exec(out);
    expect(m, out).not.toBeNull();
    const [, name, id, key] = m!;
    expect(name).toBe('viacli');
    const keys = await fetch(`${base}/core/v1/api-key`, { headers: { 'x-api-key': key, 'x-tenant-id': id } });
    expect(keys.status).toBe(200);
    const dup = await cli(['tenant', 'create', 'viacli'], env);
    expect(dup.code).toBe(1);
    expect(dup.out).toContain('A tenant named "viacli" already exists');
  });

  it(
    'stops on SIGTERM (exit 0, lock released), keeps everything across a restart, and does not print the token again',
    async () => {
      expect(await stop(server)).toBe(0);
      expect(existsSync(join(dataDir, 'mediaplane.lock'))).toBe(false);

      // With no server running, the CLI works on the database directly.
      const direct = await cli(['tenant', 'create', 'offline'], env);
      expect(direct.code, direct.out).toBe(0);
      expect(direct.out).toMatch(createdTenant);
      const list = await cli(['tenant', 'list'], env);
      expect(list.code).toBe(0);
      expect(list.out.match(/^\S{36} {2}(\S+)/gm)?.map((l) => l.slice(38))).toEqual(['first', 'viacli', 'offline']);
      expect(existsSync(join(dataDir, 'mediaplane.lock'))).toBe(false);

      server = run(['serve'], env);
      await waitReady(base, server);
      expect(server.output()).not.toContain('Generated the admin token');
      const keys = await fetch(`${base}/core/v1/api-key`, { headers: { 'x-api-key': tenant.key, 'x-tenant-id': tenant.id } });
      expect(keys.status).toBe(200);
      expect(((await keys.json()) as any).totalCount).toBe(1);
      const tenants = (await (await fetch(`${base}/admin/v1/tenants?sort=CreateDate`, { headers: { authorization: `Bearer ${adminToken}` } })).json()) as any;
      expect(tenants.items.map((t: any) => t.name)).toEqual(['first', 'viacli', 'offline']);
    },
    ONE_START_MS,
  );

  it(
    'takes over the lock of a killed server (kill -9) and keeps the data',
    async () => {
      server.child.kill('SIGKILL');
      await server.exit;
      expect(existsSync(join(dataDir, 'mediaplane.lock'))).toBe(true);
      server = run(['serve'], env);
      await waitReady(base, server);
      const keys = await fetch(`${base}/core/v1/api-key`, { headers: { 'x-api-key': tenant.key, 'x-tenant-id': tenant.id } });
      expect(keys.status).toBe(200);
    },
    ONE_START_MS,
  );
});

describe.skipIf(!DATABASES.includes('postgres'))('process: restart on PostgreSQL', () => {
  const admin = process.env.TEST_DATABASE_URL!;
  const dbName = `mediaplane_proc_${process.pid}`;
  let url: string;
  let dataDir: string;

  beforeAll(async () => {
    const c = new pg.Client({ connectionString: admin });
    await c.connect();
    await c.query(`drop database if exists ${dbName} with (force)`);
    await c.query(`create database ${dbName}`);
    await c.end();
    const u = new URL(admin);
    u.pathname = `/${dbName}`;
    url = u.toString();
    dataDir = mkdtempSync(join(tmpdir(), 'mediaplane-proc-pg-'));
  });
  afterAll(async () => {
    const c = new pg.Client({ connectionString: admin });
    await c.connect();
    await c.query(`drop database if exists ${dbName} with (force)`);
    await c.end();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(
    'keeps tenants across a restart; the CLI works beside a running server',
    async () => {
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const env = { PORT: String(port), HOST: '127.0.0.1', MEDIAPLANE_DATA_DIR: dataDir, DATABASE_URL: url, MEDIAPLANE_ADMIN_TOKEN: 'pg-admin' };
      let server = run(['serve'], env);
      await waitReady(base, server);
      const created = await cli(['tenant', 'create', 'pgtenant'], env);
      expect(created.code, created.out).toBe(0);
      const [, , id, key] = createdTenant.exec(created.out)!;
      expect(await stop(server)).toBe(0);
      server = run(['serve'], env);
      await waitReady(base, server);
      const keys = await fetch(`${base}/core/v1/api-key`, { headers: { 'x-api-key': key, 'x-tenant-id': id } });
      expect(keys.status).toBe(200);
      expect(await stop(server)).toBe(0);
    },
    2 * ONE_START_MS,
  );
});
