import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { events } from '../src/db/events.ts';
import { eventsPass } from '../src/modules/live/events/scheduler.ts';
import { describeEachDb, startInProcess, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { until } from './helpers/until.ts';

/**
 * Live events through the API (`app.inject`), on the `api` role: no channel runner and no scheduler run here, the test
 * drives the scheduler's pass itself. Channels started by an event stay `Starting` (no live process takes them);
 * test/live.events.e2e.test.ts runs them for real.
 */
const errorBody = (code: string, status: number) => expect.objectContaining({ status: { code, status, message: expect.any(String) } });
const at = (ms: number) => new Date(Date.now() + ms).toISOString();
const MIN = 60_000;

describeEachDb('Live events API', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let other: TestTenant;
  let eventBased: string;
  let manual: string;

  const channel = async (tenant: TestTenant, name: string, extra: Record<string, unknown> = {}) => {
    const res = await tenant.json('POST', '/live/v1/channels', { name, input: { inputLoss: { type: 'COLOR' } }, ...extra });
    expect(res.status).toBe(200);
    return res.body.id as string;
  };
  const create = async (body: Record<string, unknown>, tenant = t) => {
    const res = await tenant.json('POST', '/live/v1/events', body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.id as string;
  };
  const channelStatus = async (id: string) => (await t.json('GET', `/live/v1/channels/${id}/status`)).body.status as string;
  const typesOf = async (id: string) =>
    (await p.ctx.db.select().from(events).where(eq(events.tenantId, t.id)).orderBy(asc(events.occuredAt), asc(events.id)))
      .filter((e) => (e.data as any).id === id)
      .map((e) => e.type);

  beforeAll(async () => {
    p = await startInProcess(kind, { MEDIAPLANE_ROLE: 'api', MEDIAPLANE_LIVE_EVENT_LEAD_SECONDS: '2', MEDIAPLANE_LIVE_SEGMENT_SECONDS: '1' });
    [t, other] = [await p.createTenant(), await p.createTenant()];
    expect((await p.admin('PATCH', `/admin/v1/tenants/${t.id}`, { channelsLimit: 20 })).status).toBe(200);
    eventBased = await channel(t, 'event based', { activationMode: 'EventBased' });
    manual = await channel(t, 'manual');
  });
  afterAll(() => p?.stop());

  it('creates, reads, updates and deletes an event with every field, and refuses what is wrong with a clear 4xx', async () => {
    const start = at(10 * MIN);
    // From the same clock reading: the event lasts exactly 60 minutes.
    const end = new Date(Date.parse(start) + 60 * MIN).toISOString();
    const id = await create({
      channelId: eventBased.toUpperCase(),
      start,
      end,
      title: 'Match',
      ensureChannel: true,
      metadata: { title: 'The match', lang: 'en' },
      tags: ['sport'],
      attributes: ['league=one'],
      distributionInfo: { accessPolicyId: '0190b0a0-0000-7000-8000-0000000000aa' },
    });
    expect(id).toMatch(/^[a-zA-Z0-9_-]{1,128}$/);
    const got = await t.json('GET', `/live/v1/events/${id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      id,
      channelId: eventBased,
      start: new Date(start).toISOString(),
      end: new Date(end).toISOString(),
      title: 'Match',
      ensureChannel: true,
      catchup: { endpoints: [] },
      metadata: { title: 'The match', lang: 'en' },
      tags: ['sport'],
      attributes: ['league=one'],
      createDate: expect.any(String),
      lastModificationDate: expect.any(String),
      status: 'Scheduled',
      distribution: { accessPolicyId: '0190b0a0-0000-7000-8000-0000000000aa', accessPolicyName: null },
    });

    // The streaming catalogue lists it as a LiveEvent of its channel (nothing to play before start), only to its tenant.
    const listed = await t.json('GET', `/streaming/v1/assets?types=LiveEvent&channelId=${eventBased}`);
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((a: any) => [a.id, a.type, a.status, a.durationMilliseconds])).toEqual([[id, 'LiveEvent', 'Scheduled', 60 * MIN]]);
    const asset = await t.json('GET', `/streaming/v1/assets/${id}`);
    expect(asset.body).toMatchObject({ id, type: 'LiveEvent', source: 'Live', channelId: eventBased, outputs: [{ id: 'catchup', endpoints: [] }] });
    expect((await other.json('GET', `/streaming/v1/assets/${id}`)).status).toBe(404);

    // PATCH answers the event; accessPolicyId null removes the policy, omitted fields stay.
    const patched = await t.json('PATCH', `/live/v1/events/${id}`, { title: 'Final', accessPolicyId: null, end: at(80 * MIN) });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id, title: 'Final', tags: ['sport'], ensureChannel: true, distribution: { accessPolicyId: null } });
    expect((await t.json('PATCH', `/live/v1/events/${id}`, { metadata: { a: 'b' } })).body.title).toBe('Final');

    // Bad input: each a 400 naming the field, never a 500 or a silent accept.
    const bad = async (body: Record<string, unknown>, field: string) => {
      const res = await t.json('POST', '/live/v1/events', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toEqual(errorBody('validation_failed', 400));
      expect(JSON.stringify(res.body.errors)).toContain(field);
    };
    await bad({ channelId: eventBased, start }, 'end');
    await bad({ channelId: eventBased, start, end: start }, 'end');
    await bad({ channelId: eventBased, start: end, end: start }, 'end');
    await bad({ channelId: 'not-a-uuid', start, end }, 'channelId');
    await bad({ channelId: eventBased, start: 'yesterday', end }, 'start');
    await bad({ channelId: eventBased, start: '0000-01-01T00:00:00Z', end }, 'start');
    await bad({ channelId: eventBased, start, end, tags: 'sport' }, 'tags');
    await bad({ channelId: eventBased, start, end, attributes: ['novalue'] }, 'attributes');
    await bad({ channelId: eventBased, start, end, title: 'x'.repeat(2000) }, 'title');
    const patchBad = await t.json('PATCH', `/live/v1/events/${id}`, { start: at(100 * MIN) });
    expect(patchBad.status).toBe(400);
    expect(patchBad.body.errors).toEqual([expect.objectContaining({ field: 'start' })]);

    // The channel must be the tenant's; ensureChannel needs an EventBased channel.
    const missing = await t.json('POST', '/live/v1/events', { channelId: '0190b0a0-0000-7000-8000-000000000001', start, end });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual(errorBody('channel_not_found', 404));
    expect((await other.json('POST', '/live/v1/events', { channelId: eventBased, start, end })).body).toEqual(errorBody('channel_not_found', 404));
    const notEventBased = await t.json('POST', '/live/v1/events', { channelId: manual, start, end, ensureChannel: true });
    expect(notEventBased.status).toBe(409);
    expect(notEventBased.body).toEqual(errorBody('channel_not_event_based', 409));
    const onManual = await create({ channelId: manual, start, end });
    expect((await t.json('PATCH', `/live/v1/events/${onManual}`, { ensureChannel: true })).body).toEqual(errorBody('channel_not_event_based', 409));

    // Ids: another pattern is a 400, an unknown id or another tenant's event a 404.
    for (const badId of ['bad.id', 'a%20b', '%E2%9C%93', 'x'.repeat(129), "1'or'1"]) {
      for (const [method, body] of [['GET'], ['PATCH', { title: 'x' }], ['DELETE']] as const) {
        const res = await t.json(method, `/live/v1/events/${badId}`, body);
        expect(res.status, `${method} ${badId}`).toBe(400);
        expect(res.body).toEqual(errorBody('validation_failed', 400));
      }
    }
    expect((await t.json('GET', '/live/v1/events/no_such-event')).body).toEqual(errorBody('event_not_found', 404));
    for (const [method, body] of [['GET'], ['PATCH', { title: 'x' }], ['DELETE']] as const) {
      expect((await other.json(method, `/live/v1/events/${id}`, body)).body, method).toEqual(errorBody('event_not_found', 404));
    }
    expect((await other.json('GET', '/live/v1/events')).body.totalCount).toBe(0);
    const viewer = await t.json('POST', '/core/v1/api-key', { name: 'viewer', roleType: 'Viewer' });
    const asViewer = p.client(t.id, t.name, viewer.body.key);
    expect((await asViewer.json('GET', `/live/v1/events/${id}`)).status).toBe(200);
    expect((await asViewer.json('DELETE', `/live/v1/events/${id}`)).status).toBe(403);

    // Delete: 200 with no body; deletemany answers one result per id and never fails as a whole.
    const del = await t.call('DELETE', `/live/v1/events/${id}`);
    expect(del.status).toBe(200);
    expect(await del.text()).toBe('');
    expect((await t.json('GET', `/live/v1/events/${id}`)).status).toBe(404);
    const many = await t.json('POST', '/live/v1/events/deletemany', [onManual, id, 'bad.id']);
    expect(many.status).toBe(200);
    expect(many.body[onManual]).toEqual({ status: { code: 'success', status: 200, message: expect.any(String) }, success: true });
    expect(many.body[id]).toEqual({ status: { code: 'event_not_found', status: 404, message: expect.any(String) }, success: false });
    expect(many.body['bad.id']).toMatchObject({ status: { status: 400 }, success: false });
    expect(await typesOf(id)).toEqual(['live.event.created', 'live.event.updated', 'live.event.updated', 'live.event.deleted']);
  });

  it('lists with the paging envelope, every filter of the spec and the sorts ChannelId, Start, Metadata.Title', async () => {
    const u = await p.createTenant();
    const [a, b] = [await channel(u, 'a'), await channel(u, 'b')];
    // Past (Finished), running (Live), future (Scheduled); b's titled so that the title sort differs from the time sort.
    const past = await create({ channelId: a, start: at(-60 * MIN), end: at(-30 * MIN), title: 'Zulu', tags: ['x', 'y'], attributes: ['k=1'] }, u);
    const live = await create({ channelId: b, start: at(-10 * MIN), end: at(50 * MIN), metadata: { title: 'Alpha' }, tags: ['x'] }, u);
    const next = await create({ channelId: a, start: at(120 * MIN), end: at(180 * MIN), title: 'Mike', attributes: ['k=2'] }, u);
    const list = async (query: string) => {
      const res = await u.json('GET', `/live/v1/events${query}`);
      expect(res.status, `${query}: ${JSON.stringify(res.body)}`).toBe(200);
      return res.body;
    };
    const ids = async (query: string) => (await list(query)).items.map((e: any) => e.id);

    expect(await list('?limit=2&page=2')).toEqual({
      items: [expect.objectContaining({ id: next })],
      pageCount: 2,
      pageSize: 2,
      totalCount: 3,
      pageNumber: 2,
      hasMore: false,
    });
    expect((await list('')).items.map((e: any) => [e.id, e.status])).toEqual([
      [past, 'Finished'],
      [live, 'Live'],
      [next, 'Scheduled'],
    ]);
    // Catch-up: once started, the range of the channel's timeline from start to end (played in the e2e test).
    const byId = Object.fromEntries((await list('')).items.map((e: any) => [e.id, e]));
    expect(byId[next].catchup).toEqual({ endpoints: [] });
    const liveEvent = byId[live];
    expect(liveEvent.catchup.endpoints).toEqual([
      expect.objectContaining({
        accessType: 'Http',
        format: 'HLS',
        protection: 'None',
        url: expect.stringMatching(new RegExp(`/media/live/${u.id}/${b}/range/${Date.parse(liveEvent.start)}-${Date.parse(liveEvent.end)}/master\\.m3u8$`)),
      }),
      // The channel has the default endpoints, DASH among them: the range's MPD over the same segments.
      expect.objectContaining({
        id: 'dash',
        format: 'DASH',
        url: expect.stringMatching(new RegExp(`/media/live/${u.id}/${b}/range/${Date.parse(liveEvent.start)}-${Date.parse(liveEvent.end)}/manifest\\.mpd$`)),
      }),
    ]);
    expect(await ids('?sort=Start&desc=true')).toEqual([next, live, past]);
    expect(await ids('?sort=Metadata.Title')).toEqual([live, next, past]);
    expect(await ids('?sort=ChannelId')).toEqual(a < b ? [past, next, live] : [live, past, next]);
    expect(await ids(`?channelId=${a}`)).toEqual([past, next]);
    expect(await ids(`?channels=${a},${b}`)).toEqual([past, live, next]);
    expect(await ids(`?channels=${b}&channels=${a}`)).toEqual([past, live, next]);
    expect(await ids(`?ids=${past}&ids=${next}`)).toEqual([past, next]);
    expect(await ids('?statuses=Live,Scheduled')).toEqual([live, next]);
    expect(await ids('?statuses=finished')).toEqual([past]);
    expect(await ids('?tags=x&tags=y')).toEqual([past]);
    expect(await ids('?tags=x')).toEqual([past, live]);
    expect(await ids(`?attributes=${encodeURIComponent('[k]=2')}`)).toEqual([next]);
    expect(await ids('?query=alpha')).toEqual([live]);
    // searchStart/searchEnd: the events whose time range overlaps the window; either end may be open.
    expect(await ids(`?searchStart=${at(-45 * MIN)}&searchEnd=${at(-5 * MIN)}`)).toEqual([past, live]);
    expect(await ids(`?searchStart=${at(60 * MIN)}`)).toEqual([next]);
    expect(await ids(`?searchEnd=${at(-20 * MIN)}`)).toEqual([past]);
    expect(await ids(`?searchStart=${at(-29 * MIN)}&searchEnd=${at(-11 * MIN)}`)).toEqual([]);
    expect(await ids(`?createDateStart=${at(-MIN)}&lastModificationDateEnd=${at(MIN)}`)).toEqual([past, live, next]);
    expect(await ids(`?createDateEnd=${at(-MIN)}`)).toEqual([]);

    for (const [query, field] of [
      ['?sort=Nope', 'sort'],
      ['?statuses=Pending', 'statuses'],
      ['?channels=nope', 'channels'],
      ['?channelId=nope', 'channelId'],
      ['?ids=a.b', 'ids'],
      ['?searchStart=tomorrow', 'searchStart'],
      [`?searchStart=${at(MIN)}&searchEnd=${at(-MIN)}`, 'searchEnd'],
      ['?attributes=novalue', 'attributes'],
      ['?limit=0', 'limit'],
    ]) {
      const res = await u.json('GET', `/live/v1/events${query}`);
      expect(res.status, query).toBe(400);
      expect(JSON.stringify(res.body.errors), query).toContain(field);
    }
  });

  it('announces each status the clock gives an event once, whatever the number of passes running at once', async () => {
    const running = await create({ channelId: manual, start: at(-5_000), end: at(60 * MIN) });
    const over = await create({ channelId: manual, start: at(-20 * MIN), end: at(-10 * MIN) });
    // Status follows the clock with no pass needed; the webhook events follow within one pass.
    expect((await t.json('GET', `/live/v1/events/${running}`)).body.status).toBe('Live');
    await Promise.all([eventsPass(p.ctx), eventsPass(p.ctx), eventsPass(p.ctx)]);
    await eventsPass(p.ctx);
    expect(await typesOf(running)).toEqual(['live.event.created', 'live.event.live']);
    expect(await typesOf(over)).toEqual(['live.event.created', 'live.event.finished']);
    const finished = (await p.ctx.db.select().from(events).where(eq(events.tenantId, t.id))).find((e) => e.type === 'live.event.finished')!;
    expect(finished.data).toMatchObject({ id: over, channelId: manual, status: 'Finished', previousStatus: 'Scheduled' });

    // A Live event's start no longer changes; its end does, and ending it now finishes it.
    const moved = await t.json('PATCH', `/live/v1/events/${running}`, { start: at(-MIN) });
    expect(moved.status).toBe(409);
    expect(moved.body).toEqual(errorBody('event_started', 409));
    expect((await t.json('PATCH', `/live/v1/events/${running}`, { end: at(300) })).status).toBe(200);
    await until(
      async () => (await t.json('GET', `/live/v1/events/${running}`)).body.status,
      (s) => s === 'Finished',
    );
    await Promise.all([eventsPass(p.ctx), eventsPass(p.ctx)]);
    expect(await typesOf(running)).toEqual(['live.event.created', 'live.event.live', 'live.event.updated', 'live.event.finished']);
    expect((await t.json('PATCH', `/live/v1/events/${running}`, { end: at(MIN) })).body).toEqual(errorBody('event_finished', 409));
  });

  it('ensureChannel starts an EventBased channel before start, keeps it for overlapping events, and stops it after the last', async () => {
    const ch = await channel(t, 'events drive me', { activationMode: 'EventBased' });
    const first = await create({ channelId: ch, start: at(-30_000), end: at(60 * MIN), ensureChannel: true });
    const second = await create({ channelId: ch, start: at(-20_000), end: at(120 * MIN), ensureChannel: true });
    const later = await create({ channelId: ch, start: at(3 * 3600_000), end: at(4 * 3600_000), ensureChannel: true });
    await eventsPass(p.ctx);
    expect(await channelStatus(ch)).toBe('Starting');
    // Deleting a live event does not cut the channel another event needs.
    expect((await t.call('DELETE', `/live/v1/events/${first}`)).status).toBe(200);
    await eventsPass(p.ctx);
    expect(await channelStatus(ch)).toBe('Starting');
    // The last holder ends: the channel stops once its end and the tail (8 s with 1 s segments) have passed; here at once.
    expect((await t.json('PATCH', `/live/v1/events/${second}`, { end: at(-15_000) })).status).toBe(200);
    expect(await channelStatus(ch)).toBe('Off');
    // Rescheduling a scheduled event into its lead window starts the channel at once, in the PATCH.
    expect((await t.json('PATCH', `/live/v1/events/${later}`, { start: at(1_500) })).status).toBe(200);
    expect(await channelStatus(ch)).toBe('Starting');
    // Stopped by hand during the event: the platform does not fight the operator.
    expect((await t.call('POST', `/live/v1/channels/${ch}/stop`)).status).toBe(200);
    await eventsPass(p.ctx);
    expect(await channelStatus(ch)).toBe('Off');
    // Turning ensureChannel off gives the hold back; on again, the hold opens again and starts the channel.
    expect((await t.json('PATCH', `/live/v1/events/${later}`, { ensureChannel: false })).status).toBe(200);
    expect((await t.json('PATCH', `/live/v1/events/${later}`, { ensureChannel: true })).status).toBe(200);
    expect(await channelStatus(ch)).toBe('Starting');
    // automationDisabled: events leave the channel alone.
    expect((await t.json('PATCH', `/live/v1/channels/${ch}`, { automationDisabled: true })).status).toBe(200);
    expect((await t.call('DELETE', `/live/v1/events/${later}`)).status).toBe(200);
    expect(await channelStatus(ch)).toBe('Starting');
    expect((await t.call('POST', `/live/v1/channels/${ch}/stop`)).status).toBe(200);
    await create({ channelId: ch, start: at(-1_000), end: at(MIN), ensureChannel: true });
    await eventsPass(p.ctx);
    expect(await channelStatus(ch)).toBe('Off');
  });
});
