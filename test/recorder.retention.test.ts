import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { liveChannels } from '../src/modules/live/tables.ts';
import { describeEachDb, startInProcess, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { freePort } from './helpers/process.ts';
import { until } from './helpers/until.ts';

/**
 * A recording of a range the channel no longer holds (it ended before the channel's retained timeline begins) is
 * refused at creation with `range_not_retained`, naming the retention setting, instead of being accepted and turning
 * `Error` later. Ranges that reach into the retained timeline, and future ranges, are accepted.
 */
describeEachDb('Recorder: ranges the channel no longer holds', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;

  beforeAll(async () => {
    p = await startInProcess(kind, {
      MEDIAPLANE_RTMP_HOST: '127.0.0.1',
      MEDIAPLANE_RTMP_PORT: String(await freePort()),
      MEDIAPLANE_LIVE_SEGMENT_SECONDS: '1',
      MEDIAPLANE_LIVE_POLL_MS: '200',
    });
    t = await p.createTenant();
  });
  afterAll(async () => {
    await p?.stop();
  });

  const channel = async (name: string) =>
    (
      await t.json('POST', '/live/v1/channels', {
        name,
        input: { inputLoss: { type: 'COLOR', color: '#1060C0' } },
        qualities: [{ resolution: '144p', frameRate: 25 }],
      })
    ).body.id as string;
  const record = (channelId: string, start: Date | string, end: Date | string) =>
    t.json('POST', '/cvr/v1/recordings', {
      source: { type: 'LiveChannel', liveChannelDetails: { channelId, start: new Date(start).toISOString(), end: new Date(end).toISOString() } },
    });
  const expectNotRetained = (res: { status: number; body: any }) => {
    expect([res.status, res.body.status?.code], JSON.stringify(res.body)).toEqual([400, 'range_not_retained']);
    expect(res.body.status.message).toContain('MEDIAPLANE_LIVE_RETENTION_SECONDS = 3600 s');
    expect(res.body.errors).toEqual([{ field: 'source.liveChannelDetails.end', message: expect.stringContaining('MEDIAPLANE_LIVE_RETENTION_SECONDS') }]);
  };

  it('refuses a range that ended before the retained timeline, and takes one inside it and a future one', async () => {
    // A channel that never ran holds nothing: a past range of it has nothing to record.
    const idle = await channel('idle');
    const never = await record(idle, '2020-01-01T00:00:00Z', '2020-01-01T00:01:00Z');
    expectNotRetained(never);
    expect(never.body.status.message).toContain('holds no segments');
    const hourAhead = Date.now() + 3600_000;
    expect((await record(idle, new Date(hourAhead), new Date(hourAhead + 60_000))).status).toBe(200);

    // A channel that ran: its timeline begins at its first segment.
    const id = await channel('ran');
    const before = Date.now();
    expect((await t.call('POST', `/live/v1/channels/${id}/start`)).status).toBe(200);
    const status = async () => (await t.json('GET', `/live/v1/channels/${id}/status`)).body.status as string;
    await until(status, (s) => s === 'On', { timeoutMs: 60_000 });
    // Rows of the timeline are written in batches: wait for a recording of the last seconds to be accepted.
    await until(
      async () => (await record(id, new Date(before - 60_000), new Date())).status,
      (s) => s === 200,
      { timeoutMs: 30_000, everyMs: 500 },
    );
    expect((await t.call('POST', `/live/v1/channels/${id}/stop`)).status).toBe(200);
    await until(status, (s) => s === 'Off', { timeoutMs: 60_000 });

    const gone = await record(id, '2020-01-01T00:00:00Z', '2020-01-01T00:01:00Z');
    expectNotRetained(gone);
    expect(gone.body.status.message).toMatch(/before the channel's retained timeline begins at \d{4}-\d\d-\d\dT/);
    // Ended a minute before the channel's first segment: refused too; so is a PATCH of a recording's source to it.
    expectNotRetained(await record(id, new Date(before - 120_000), new Date(before - 60_000)));
    const pending = await record(id, new Date(hourAhead), new Date(hourAhead + 60_000));
    expect(pending.status).toBe(200);
    const patched = await t.json('PATCH', `/cvr/v1/recordings/${pending.body.id}`, {
      source: { type: 'LiveChannel', liveChannelDetails: { channelId: id, start: '2020-01-01T00:00:00Z', end: '2020-01-01T00:01:00Z' } },
    });
    expectNotRetained(patched);
    // A range that began before the timeline and ends inside it records what is kept.
    expect((await record(id, new Date(before - 60_000), new Date())).status).toBe(200);
  }, 180_000);

  it('ends an open range whose channel stopped before it made anything of it: Error, not Live for good', async () => {
    // On, held by an owner that makes nothing (a loaded encoder that had not finished a segment of the range yet).
    const id = await channel('slow');
    const held = { status: 'On' as const, leaseOwner: 'elsewhere', leaseUntil: new Date(Date.now() + 600_000) };
    await p.ctx.db.update(liveChannels).set(held).where(eq(liveChannels.id, id));
    const rec = await t.json('POST', '/cvr/v1/recordings', { source: { type: 'LiveChannel', liveChannelDetails: { channelId: id } } });
    expect(rec.status, JSON.stringify(rec.body)).toBe(200);
    const recording = async () => (await t.json('GET', `/cvr/v1/recordings/${rec.body.id}`)).body;
    await until(recording, (r) => r.status === 'Live', { timeoutMs: 30_000 });
    await new Promise((r) => setTimeout(r, 2000));
    await p.ctx.db.update(liveChannels).set({ status: 'Off', leaseOwner: null, leaseUntil: null }).where(eq(liveChannels.id, id));
    const ended = await until(recording, (r) => r.status !== 'Live', { timeoutMs: 30_000 });
    expect(ended).toMatchObject({ status: 'Error', errorMessage: expect.stringContaining('Nothing was recorded') });
  }, 60_000);
});
