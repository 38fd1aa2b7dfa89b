import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startPlatform, type TestPlatform } from './helpers/platform.ts';

describeEachDb('platform smoke', (kind) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startPlatform(kind);
  });
  afterAll(() => p.stop());

  it('answers health and readiness with the database reachable', async () => {
    expect((await fetch(`${p.baseUrl}/healthz`)).status).toBe(200);
    const ready = await fetch(`${p.baseUrl}/readyz`);
    expect(await ready.json()).toEqual({ status: 'ok', database: 'ok' });
  });

  it('lets a new tenant list its keys with the key it was given', async () => {
    const t = await p.createTenant();
    const { status, body } = await t.json('GET', '/core/v1/api-key');
    expect(status).toBe(200);
    expect(body.totalCount).toBe(1);
    expect(body.items[0].roleName).toBe('Admin');
  });
});
