import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshStorage, type TestStorage } from './helpers/platform.ts';
import { freePort, listening, mediaplane, ROOT, waitReady, type Run } from './helpers/process.ts';
import { PROCESS_START_TIMEOUT_MS } from './helpers/until.ts';

const execute = promisify(execFile);

/** The container image's HEALTHCHECK (scripts/healthcheck.mjs) with this environment: its exit code. */
const healthcheck = (env: Record<string, string>) =>
  execute(process.execPath, [join(ROOT, 'scripts/healthcheck.mjs')], { env: { PATH: process.env.PATH ?? '', ...env } }).then(
    () => 0,
    (e: { code?: number }) => e.code ?? -1,
  );

// A worker or live process serves no API; a container runtime and a scraper still ask it whether it is up.
describe('a worker process: health and metrics on MEDIAPLANE_HEALTH_PORT', () => {
  let storage: TestStorage;
  let worker: Run | undefined;
  beforeAll(async () => {
    // A copy of the run's migrated database: no first start to wait for.
    storage = await freshStorage('pglite');
  });
  afterAll(async () => {
    if (worker && worker.child.exitCode === null) {
      worker.child.kill('SIGTERM');
      await worker.exit;
    }
    await storage?.drop();
  });

  it(
    'answers /healthz, /readyz and /metrics (with a token) there and nothing else; the image healthcheck passes on it',
    async () => {
      const [port, healthPort] = [await freePort(), await freePort()];
      const env = {
        PORT: String(port),
        HOST: '127.0.0.1',
        MEDIAPLANE_DATA_DIR: storage.dataDir,
        MEDIAPLANE_ADMIN_TOKEN: 'health-admin',
        MEDIAPLANE_METRICS_TOKEN: 'scraper',
      };
      worker = mediaplane(['serve'], { ...env, MEDIAPLANE_ROLE: 'worker', MEDIAPLANE_HEALTH_PORT: String(healthPort) });
      const base = `http://127.0.0.1:${healthPort}`;
      await waitReady(base, worker, PROCESS_START_TIMEOUT_MS);
      expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
      expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: 'ok', database: 'ok' });
      expect((await fetch(`${base}/metrics`)).status).toBe(401);
      const metrics = await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer scraper' } });
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toMatch(/^# TYPE mediaplane_jobs_run_total counter$/m);
      const api = await fetch(`${base}/admin/v1/tenants`, { headers: { authorization: 'Bearer health-admin' } });
      expect(api.status).toBe(404);
      expect((await api.json()).status.code).toBe('route_not_found');
      // PORT stays closed: a worker serves no API.
      expect(await listening(port)).toBe(false);

      expect(await healthcheck({ MEDIAPLANE_ROLE: 'worker', MEDIAPLANE_HEALTH_PORT: String(healthPort) })).toBe(0);
      // The same check on a role whose port does not answer fails, as on an api process that is not listening.
      expect(await healthcheck({ MEDIAPLANE_ROLE: 'api', PORT: String(port) })).toBe(1);
      expect(await healthcheck({ MEDIAPLANE_ROLE: 'live' })).toBe(1);
    },
    PROCESS_START_TIMEOUT_MS + 60_000,
  );

  it('refuses a health port that is not a port number', async () => {
    const bad = mediaplane(['serve'], { MEDIAPLANE_DATA_DIR: storage.dataDir, MEDIAPLANE_ROLE: 'worker', MEDIAPLANE_HEALTH_PORT: 'http' });
    expect((await bad.exit).code).toBe(1);
    expect(bad.output()).toContain('MEDIAPLANE_HEALTH_PORT must be a non-negative integer, got "http"');
  });
});
