import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startInProcess, type TestPlatform, type TestTenant } from './helpers/platform.ts';

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';

describeEachDb('Streaming analytics: beacons in, the nine operations out', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let other: TestTenant;
  const A = randomUUID();
  const B = randomUUID();
  const C = randomUUID();
  const D = randomUUID();

  const send = (tenantId: string, beacons: unknown[], headers: Record<string, string> = {}) =>
    p.fetch(`${p.baseUrl}/player/v1/${tenantId}/beacons`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': CHROME, origin: 'https://news.example.com', ...headers },
      body: JSON.stringify({ beacons }),
    });
  const sent = async (tenantId: string, beacons: unknown[], headers?: Record<string, string>) => {
    const res = await send(tenantId, beacons, headers);
    expect(res.status, await res.clone().text()).toBe(204);
  };
  const query = (who: TestTenant, path: string, body: unknown) => who.json('POST', `/streaming/v1/analytics/${path}`, body);
  const rows = async (who: TestTenant, path: string, body: unknown) => {
    const r = await query(who, path, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.rows;
  };

  beforeAll(async () => {
    p = await startInProcess(kind, { MEDIAPLANE_BEACON_RATE_LIMIT_PER_MINUTE: '60' });
    t = await p.createTenant();
    other = await p.createTenant();
    const a1 = { assetId: 'a1', assetType: 'Vod', playerTech: 'hls.js' };
    const a2 = { assetId: 'a2', assetType: 'LiveChannel', playerTech: 'dash.js' };
    // A and B overlap; C starts after both ended: two viewers at most at once.
    await sent(t.id, [{ impressionId: A, kind: 'start', startupTimeMs: 500, ...a1 }]);
    await sent(t.id, [{ impressionId: B, kind: 'start', startupTimeMs: 1500, ...a2 }], { 'user-agent': IPHONE });
    await sent(t.id, [
      { impressionId: A, kind: 'heartbeat', playedSeconds: 5, videoBitrate: 1_000_000, ...a1 },
      { impressionId: A, kind: 'buffering', bufferingMs: 1000, ...a1 },
      { impressionId: A, kind: 'heartbeat', playedSeconds: 5, videoBitrate: 2_000_000, ...a1 },
      { impressionId: A, kind: 'adStart', adId: 'ad1', adPosition: 'preroll', ...a1 },
      { impressionId: A, kind: 'adClick', adId: 'ad1', adPosition: 'preroll', ...a1 },
      { impressionId: A, kind: 'adEnd', adId: 'ad1', adPosition: 'preroll', adPlayedSeconds: 10, ...a1 },
    ]);
    await sent(t.id, [{ impressionId: B, kind: 'heartbeat', playedSeconds: 3, videoBitrate: 1_000_000, ...a2 }], { 'user-agent': IPHONE });
    await sent(t.id, [{ impressionId: A, kind: 'end', videoStarted: true, ...a1 }]);
    await sent(
      t.id,
      [
        { impressionId: B, kind: 'error', errorCode: 'manifestLoadError', ...a2 },
        { impressionId: B, kind: 'end', videoStarted: true, failed: true, ...a2 },
      ],
      { 'user-agent': IPHONE },
    );
    await sent(t.id, [
      { impressionId: C, kind: 'start', ...a1 },
      { impressionId: C, kind: 'end', videoStarted: false, ...a1 },
    ]);
    await sent(other.id, [{ impressionId: D, kind: 'heartbeat', playedSeconds: 100, assetId: 'a1' }]);
  });
  afterAll(() => p.stop());

  it('counts impressions and sums played seconds per asset; other beacons and tenants stay out', async () => {
    expect(await rows(t, 'queries/count', { dimension: 'IMPRESSION_ID', groupBy: ['ASSET_ID'] })).toEqual([
      ['a1', 2],
      ['a2', 1],
    ]);
    const sum = await query(t, 'queries/sum', { dimension: 'PLAYED_SECONDS', groupBy: ['ASSET_ID'], includeContext: true });
    expect(sum.body.rows).toEqual([
      ['a1', 10],
      ['a2', 3],
    ]);
    expect(sum.body.rowCount).toBe(2);
    expect(sum.body.columnLabels).toEqual([
      { key: 'ASSET_ID', label: 'Asset id' },
      { key: 'SUM', label: 'sum of Played seconds' },
    ]);
    expect(sum.body.contextDescription).toContainEqual({ label: 'Query', description: 'sum of Played seconds' });
    expect(await rows(other, 'queries/sum', { dimension: 'PLAYED_SECONDS' })).toEqual([[100]]);
    expect(await rows(other, 'queries/count', { dimension: 'IMPRESSION_ID', groupBy: ['ASSET_ID'] })).toEqual([['a1', 1]]);
  });

  it('answers the quality-of-experience figures', async () => {
    expect(await rows(t, 'queries/avg', { dimension: 'VIDEO_BITRATE' })).toEqual([[(4_000_000 / 3) as number]]);
    expect(await rows(t, 'queries/median', { dimension: 'STARTUP_TIME_MS' })).toEqual([[1000]]);
    expect(await rows(t, 'queries/count', { dimension: 'BUFFERING_MS' })).toEqual([[1]]);
    const [[rebuffer]] = await rows(t, 'queries/avg', { dimension: 'REBUFFER_PERCENTAGE' });
    expect(rebuffer).toBeCloseTo((100 * 1000) / (1000 + 13_000), 6);
    const [[failures]] = await rows(t, 'queries/avg', { dimension: 'PLAYBACK_FAILURE_PERCENTAGE' });
    expect(failures).toBeCloseTo(100 / 3, 6);
    const [[exits]] = await rows(t, 'queries/avg', { dimension: 'EXIT_BEFORE_START_PERCENTAGE' });
    expect(exits).toBeCloseTo(100 / 3, 6);
    expect(
      await rows(t, 'queries/count', {
        dimension: 'IMPRESSION_ID',
        groupBy: ['ERROR_CODE'],
        filters: [{ name: 'BEACON_TYPE', operator: 'EQ', value: 'error' }],
      }),
    ).toEqual([['manifestLoadError', 1]]);
    expect(await rows(t, 'metrics/max_concurrentviewers', {})).toEqual([[2]]);
    expect(await rows(t, 'metrics/max_concurrentviewers', { groupBy: ['ASSET_ID'] })).toEqual([
      ['a1', 1],
      ['a2', 1],
    ]);
    expect(await rows(other, 'metrics/max_concurrentviewers', {})).toEqual([[1]]);
  });

  it('filters, groups by context from the User-Agent and the page, buckets by interval, orders and pages', async () => {
    expect(await rows(t, 'queries/count', { dimension: 'IMPRESSION_ID', filters: [{ name: 'ASSET_ID', operator: 'EQ', value: 'a2' }] })).toEqual([[1]]);
    expect(await rows(t, 'queries/count', { dimension: 'IMPRESSION_ID', filters: [{ name: 'ASSET_ID', operator: 'IN', value: ['a1', 'zz'] }] })).toEqual([[2]]);
    expect(await rows(t, 'queries/count', { dimension: 'IMPRESSION_ID', filters: [{ name: 'ASSET_TYPE', operator: 'CONTAINS', value: 'Live' }] })).toEqual([
      [1],
    ]);
    expect(await rows(t, 'queries/sum', { dimension: 'PLAYED_SECONDS', filters: [{ name: 'VIDEO_BITRATE', operator: 'GT', value: 1_500_000 }] })).toEqual([
      [5],
    ]);
    expect(await rows(t, 'queries/count', { dimension: 'IMPRESSION_ID', filters: [{ name: 'PLAYER_TECH', operator: 'NE', value: 'hls.js' }] })).toEqual([[1]]);
    expect(
      await rows(t, 'queries/count', {
        dimension: 'IMPRESSION_ID',
        groupBy: ['OS', 'DEVICE_TYPE', 'BROWSER', 'DOMAIN'],
        orderBy: [{ name: 'FUNCTION', order: 'DESC' }],
      }),
    ).toEqual([
      ['Linux', 'Desktop', 'Chrome', 'news.example.com', 2],
      ['iOS', 'Mobile', 'Safari', 'news.example.com', 1],
    ]);
    const byMinute = await rows(t, 'queries/count', { dimension: 'IMPRESSION_ID', interval: 'MINUTE' });
    expect(byMinute[0][0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/);
    expect(byMinute.reduce((n: number, r: any[]) => n + r[1], 0)).toBeGreaterThanOrEqual(3);
    const ordered = await rows(t, 'queries/sum', { dimension: 'PLAYED_SECONDS', groupBy: ['ASSET_ID'], orderBy: [{ name: 'FUNCTION', order: 'ASC' }] });
    expect(ordered.map((r: any[]) => r[0])).toEqual(['a2', 'a1']);
    expect(await rows(t, 'queries/sum', { dimension: 'PLAYED_SECONDS', groupBy: ['ASSET_ID'], limit: 1, offset: 1 })).toEqual([['a2', 3]]);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(await rows(t, 'queries/count', { dimension: 'IMPRESSION_ID', start: future })).toEqual([[0]]);
    expect(await rows(t, 'metrics/max_concurrentviewers', { start: future })).toEqual([[0]]);
  });

  it('answers ad figures from ad beacons only, and lists impressions, the most recent first', async () => {
    expect(await rows(t, 'ads/queries/count', { dimension: 'AD_CLICKED' })).toEqual([[1]]);
    expect(await rows(t, 'ads/queries/sum', { dimension: 'AD_PLAYED_SECONDS', groupBy: ['AD_ID'] })).toEqual([['ad1', 10]]);
    expect(await rows(t, 'ads/queries/count', { dimension: 'IMPRESSION_ID' })).toEqual([[1]]);
    expect(await rows(t, 'ads/queries/avg', { dimension: 'AD_SKIPPED' })).toEqual([[0]]);
    const list = await query(t, 'impressions', { limit: 10 });
    expect(list.body).toEqual({ impressions: [{ impressionId: C }, { impressionId: B }, { impressionId: A }] });
    const filtered = await query(t, 'impressions', { filters: [{ name: 'ASSET_ID', operator: 'EQ', value: 'a2' }] });
    expect(filtered.body).toEqual({ impressions: [{ impressionId: B }] });
    expect((await query(other, 'impressions', {})).body).toEqual({ impressions: [{ impressionId: D }] });
  });

  it('refuses unknown names, mistyped values and hostile input with a 400 that says what is allowed', async () => {
    const refused = async (path: string, body: unknown, field: string, message: RegExp) => {
      const r = await query(t, path, body);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.status.code).toBe('validation_failed');
      expect(r.body.errors).toContainEqual({ field, message: expect.stringMatching(message) });
    };
    await refused('queries/count', { dimension: 'NOPE' }, 'dimension', /ASSET_ID.*PLAYED_SECONDS/);
    await refused('queries/count', {}, 'dimension', /required/);
    await refused('queries/sum', { dimension: 'AD_PLAYED_SECONDS' }, 'dimension', /must be one of IMPRESSION_ID, ASSET_ID/);
    await refused('ads/queries/sum', { dimension: 'PLAYED_SECONDS' }, 'dimension', /AD_PLAYED_SECONDS/);
    await refused(
      'queries/count',
      { dimension: 'ASSET_ID', filters: [{ name: 'ASSET_ID', operator: 'LIKE', value: 'a' }] },
      'filters[0].operator',
      /EQ.*CONTAINS/,
    );
    await refused('queries/count', { dimension: 'ASSET_ID', interval: 'FORTNIGHT' }, 'interval', /MINUTE.*HOUR.*DAY/);
    await refused(
      'queries/count',
      { dimension: 'ASSET_ID', filters: [{ name: 'PLAYED_SECONDS', operator: 'GT', value: '1 or 1=1' }] },
      'filters[0].value',
      /number/,
    );
    await refused(
      'queries/count',
      { dimension: 'ASSET_ID', filters: [{ name: 'PLAYED_SECONDS', operator: 'CONTAINS', value: 1 }] },
      'filters[0].operator',
      /text/,
    );
    await refused('queries/count', { dimension: 'ASSET_ID', filters: [{ name: 'ASSET_ID', operator: 'IN', value: [] }] }, 'filters[0].value', /array/);
    await refused('queries/count', { dimension: 'ASSET_ID', filters: [{ name: 'ASSET_ID', operator: 'EQ', value: { $ne: 1 } }] }, 'filters[0].value', /string/);
    await refused('queries/sum', { dimension: 'ASSET_ID' }, 'dimension', /numeric/);
    await refused('queries/sum', { dimension: 'REBUFFER_PERCENTAGE' }, 'dimension', /only avg/);
    await refused('queries/avg', { dimension: 'PLAYED_SECONDS', groupBy: ['REBUFFER_PERCENTAGE'] }, 'groupBy[0]', /ratio/);
    await refused('queries/count', { dimension: 'ASSET_ID', orderBy: [{ name: 'OS', order: 'ASC' }] }, 'orderBy[0].name', /FUNCTION/);
    await refused('queries/count', { dimension: 'ASSET_ID', limit: 201 }, 'limit', /at most 200/);
    await refused('queries/count', { dimension: 'ASSET_ID', start: '2025-02-01T00:00:00Z', end: '2025-01-01T00:00:00Z' }, 'end', /before start/);
    // A value is a parameter, never SQL: this one matches nothing and drops nothing.
    expect(
      await rows(t, 'queries/count', {
        dimension: 'IMPRESSION_ID',
        filters: [{ name: 'ASSET_ID', operator: 'EQ', value: "a1'; drop table analytics_beacons; --" }],
      }),
    ).toEqual([[0]]);
    expect(await rows(t, 'queries/count', { dimension: 'IMPRESSION_ID' })).toEqual([[3]]);
    const anonymous = await p.fetch(`${p.baseUrl}/streaming/v1/analytics/queries/count`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ dimension: 'ASSET_ID' }),
    });
    expect(anonymous.status).toBe(401);
  });

  it('refuses malformed beacons, unknown tenants, and a tenant over its beacon rate', async () => {
    const bad = await send(t.id, [{ impressionId: 'not-a-uuid', kind: 'start' }]);
    expect(bad.status).toBe(400);
    expect((await bad.json()).errors[0].field).toBe('beacons[0].impressionId');
    expect((await send(t.id, [{ impressionId: A, kind: 'teleport' }])).status).toBe(400);
    expect((await send(t.id, [{ impressionId: A, kind: 'heartbeat', playedSeconds: -1 }])).status).toBe(400);
    expect((await send(t.id, [])).status).toBe(400);
    expect(
      (
        await send(
          t.id,
          Array.from({ length: 101 }, () => ({ impressionId: A, kind: 'heartbeat' })),
        )
      ).status,
    ).toBe(400);
    expect((await send(randomUUID(), [{ impressionId: A, kind: 'start' }])).status).toBe(404);
    expect((await send('not-a-tenant', [{ impressionId: A, kind: 'start' }])).status).toBe(400);
    // Spent by `other` (60 a minute): `t` still sends.
    let last = 0;
    for (let i = 0; i < 61 && last !== 429; i++) last = (await send(other.id, [{ impressionId: D, kind: 'heartbeat', playedSeconds: 0 }])).status;
    expect(last).toBe(429);
    await sent(t.id, [{ impressionId: A, kind: 'heartbeat', playedSeconds: 0, assetId: 'a1' }]);
  });
});
