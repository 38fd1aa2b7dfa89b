import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, expect, it } from 'vitest';
import { describeEachDb, freshStorage, startPlatform, tenantClient, type TestPlatform, type TestStorage } from './helpers/platform.ts';
import { PROCESS_START_TIMEOUT_MS, until } from './helpers/until.ts';
import { WebhookReceiver } from './helpers/webhookReceiver.ts';
import { BIN, freePort } from './helpers/process.ts';

const ADMIN_TOKEN = 'restart-admin-token';
const ENV = { MEDIAPLANE_WEBHOOK_ALLOW_PRIVATE: 'true', MEDIAPLANE_WEBHOOK_RETRY_BASE_MS: '100', MEDIAPLANE_ADMIN_TOKEN: ADMIN_TOKEN };

/** The real server (`mediaplane serve`) as its own process, so that it can be killed without warning. */
async function serveInChild(storage: TestStorage, env: Record<string, string>): Promise<{ child: ChildProcess; baseUrl: string }> {
  const port = await freePort();
  // bin/mediaplane.js: the compiled CLI when dist/ is current (CI, after `npm ci`), which starts in a fraction of the
  // time tsx takes to compile the sources on a loaded machine.
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: storage.databaseUrl,
      MEDIAPLANE_DATA_DIR: storage.dataDir,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  const ready = async () => {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`server exited (${child.exitCode ?? child.signalCode})`);
    return fetch(`${baseUrl}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
  };
  await until(ready, (up) => up, { timeoutMs: PROCESS_START_TIMEOUT_MS, everyMs: 200, what: `${baseUrl}/readyz` });
  return { child, baseUrl };
}

describeEachDb('webhook delivery across a crash', (kind) => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => {});
  });

  it('delivers events committed before the server was killed once it runs again on the same database', async () => {
    const storage = await freshStorage(kind);
    cleanup.push(() => storage.drop());
    const r = await WebhookReceiver.start();
    cleanup.push(() => r.close());
    r.behaviour = (_req, n) => (n === 0 ? 'hang' : { status: 200, body: 'ok' });

    // First life: a separate process with a long timeout, so that it dies in the middle of the first attempt.
    const { child, baseUrl } = await serveInChild(storage, { ...ENV, MEDIAPLANE_WEBHOOK_TIMEOUT_MS: '3000' });
    cleanup.push(async () => child.kill('SIGKILL'));
    const res = await fetch(`${baseUrl}/admin/v1/tenants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `crash-${kind}` }),
    });
    const created = (await res.json()) as any;
    const t = tenantClient(baseUrl, created.id, created.name, created.apiKey.key);
    const hook = await t.json('POST', '/notifications/v1/webhook', { name: 'crash', url: r.url, eventTypes: ['core.apikey.created'] });
    expect(hook.status).toBe(200);
    const first = (await t.json('POST', '/core/v1/api-key', { name: 'first', roleType: 'Viewer' })).body.id;
    await r.waitFor((all) => all.length === 1);
    const second = (await t.json('POST', '/core/v1/api-key', { name: 'second', roleType: 'Viewer' })).body.id;
    child.kill('SIGKILL');
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
    expect(r.received).toHaveLength(1);

    // Second life: the platform again, on the same data directory or database.
    const p: TestPlatform = await startPlatform(kind, ENV, storage);
    cleanup.push(() => p.stop());
    const again = tenantClient(p.baseUrl, t.id, t.name, t.key);
    // PostgreSQL: the dead process's lease on the webhook must expire first (4 × its 3 s timeout).
    await r.waitFor((all) => all.some((x) => x.json.data.id === second), 25_000);
    // In order: first (again), then second. An attempt that outlives the platform's timeout on a loaded machine is
    // sent again, so a repeat of the same event is allowed; a reorder is not.
    const ids = r.received.map((x) => x.json.data.id);
    expect(ids.filter((id, i) => id !== ids[i - 1])).toEqual([first, second]);
    expect(ids.length).toBeGreaterThanOrEqual(3);

    const items: any[] = await until(
      async () => (await again.json('GET', '/notifications/v1/webhook-events?sort=OccuredAt')).body.items,
      (items) => items.length === 2 && items.every((x: any) => x.status === 'Delivered'),
    );
    // One successful attempt each, the last. The first life may have recorded the hung attempt's timeout (0) if the
    // kill came after it, on a loaded machine.
    expect(items.map((i: any) => [i.payload.data.id, i.status, i.sendAttempts.map((a: any) => a.responseCode).filter((c: number) => c !== 0)])).toEqual([
      [first, 'Delivered', [200]],
      [second, 'Delivered', [200]],
    ]);
    for (const i of items) expect(i.sendAttempts.at(-1).responseCode).toBe(200);
  }, 300_000); // a process start on a loaded machine (PROCESS_START_TIMEOUT_MS), then the dead owner's lease to expire
});
