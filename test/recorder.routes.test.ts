import { afterAll, beforeAll, expect, it } from 'vitest';
import { events } from '../src/db/events.ts';
import { describeEachDb, startInProcess, type TestPlatform, type TestTenant } from './helpers/platform.ts';

/** What `/cvr/v1/recordings` answers (no media: ranges in the future stay Pending). */
const inHours = (h: number) => new Date(Date.now() + h * 3600_000).toISOString();

describeEachDb('Recorder routes', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let other: TestTenant;
  let channelId: string;
  let otherChannel: string;

  beforeAll(async () => {
    p = await startInProcess(kind);
    [t, other] = await Promise.all([p.createTenant(), p.createTenant()]);
    const channel = async (name: string) =>
      (await t.json('POST', '/live/v1/channels', { name, input: { inputLoss: { type: 'COLOR', color: '#000000' } } })).body.id;
    [channelId, otherChannel] = [await channel('a'), await channel('b')];
  });
  afterAll(async () => {
    await p?.stop();
  });

  const source = (start: number, end: number, id = channelId) => ({
    type: 'LiveChannel',
    liveChannelDetails: { channelId: id, start: inHours(start), end: inHours(end) },
  });

  it('creates with every field, reads it back, and refuses what is wrong with the one error shape', async () => {
    const body = {
      source: source(1, 2),
      catchup: { enabled: true },
      archive: { enabled: true, delaySeconds: 60, public: true, expirationDate: inHours(48) },
      expirationDate: inHours(72),
      outputs: [{ preset: 'mp4-h264-download', expirationDate: inHours(60) }],
      output: { preset: 'hls-h264-ladder' },
      metadata: { title: 'Show' },
      title: 'Show',
      tags: ['news'],
      attributes: ['team=a'],
      overlays: [{ startTime: '00:00:01:00', duration: 2000, input: { type: 'URL', url: 'https://example.com/logo.png' }, width: 64, height: 32, opacity: 80 }],
      distributionInfo: { accessPolicyId: '0190b0a0-0000-7000-8000-0000000000aa' },
    };
    const created = await t.json('POST', '/cvr/v1/recordings', body);
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const got = await t.json('GET', `/cvr/v1/recordings/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      id: created.body.id,
      status: 'Pending',
      title: 'Show',
      source: { type: 'LiveChannel', liveChannelDetails: { channelId } },
      catchup: { enabled: true, endpoints: [] },
      archive: { enabled: true, delaySeconds: 60, public: true, status: null, endpoints: [], archivisationCompletedDate: null },
      tags: ['news'],
      attributes: ['team=a'],
      distribution: { accessPolicyId: '0190b0a0-0000-7000-8000-0000000000aa' },
    });
    expect(got.body.outputs.map((o: any) => [o.preset, o.status])).toEqual([
      ['mp4-h264-download', 'Pending'],
      ['hls-h264-ladder', 'Pending'],
    ]);
    // The streaming catalogue lists it as a Recording of its channel, and only to its tenant.
    const listed = await t.json('GET', `/streaming/v1/assets?types=Recording&channelId=${channelId}`);
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((a: any) => [a.id, a.type, a.source, a.channelId, a.status])).toContainEqual([
      created.body.id,
      'Recording',
      'Recorder',
      channelId,
      'Pending',
    ]);
    const asset = await t.json('GET', `/streaming/v1/assets/${created.body.id}`);
    expect(asset.body).toMatchObject({
      id: created.body.id,
      type: 'Recording',
      start: body.source.liveChannelDetails.start,
      end: body.source.liveChannelDetails.end,
    });
    expect(asset.body.outputs.map((o: any) => o.preset)).toEqual(['mp4-h264-download', 'hls-h264-ladder']);
    expect((await other.json('GET', `/streaming/v1/assets/${created.body.id}`)).status).toBe(404);
    // 14 days of catch-up after the range's end.
    const days = (Date.parse(got.body.catchup.expirationTime) - Date.parse(body.source.liveChannelDetails.end)) / 86400_000;
    expect(Math.round(days)).toBe(14);

    const bad: [object, number, string][] = [
      [{ source: source(2, 1) }, 400, 'validation_failed'],
      [{ source: source(1, 2), archive: { delaySeconds: 2592001 } }, 400, 'validation_failed'],
      [{ source: source(1, 2), archive: { delaySeconds: -1 } }, 400, 'validation_failed'],
      [{ source: source(1, 2), output: { preset: 'nope' } }, 400, 'preset_not_found'],
      [{ source: source(1, 2), expirationDate: inHours(-1) }, 400, 'validation_failed'],
      [{ source: source(1, 2, '0190b0a0-0000-7000-8000-0000000000ab') }, 404, 'channel_not_found'],
      [{ source: { liveChannelDetails: {} } }, 400, 'validation_failed'],
    ];
    for (const [b, status, code] of bad) {
      const res = await t.json('POST', '/cvr/v1/recordings', b);
      expect([res.status, res.body.status?.code], JSON.stringify(b)).toEqual([status, code]);
    }
    // A DRM channel's recording is protected with the channel's keys: the streaming catalogue says so, and a DRM
    // token asked for the recording is one for the channel's content, for its own tenant only.
    const drm = await t.json('POST', '/live/v1/channels', {
      name: 'drm',
      input: { inputLoss: { type: 'COLOR', color: '#000000' } },
      endpoints: [{ type: 'HlsDrm' }],
    });
    expect(drm.status).toBe(200);
    const drmRec = await t.json('POST', '/cvr/v1/recordings', { source: source(1, 2, drm.body.id) });
    expect(drmRec.status, JSON.stringify(drmRec.body)).toBe(200);
    expect((await t.json('GET', `/streaming/v1/assets/${drmRec.body.id}`)).body.isDrm).toBe(true);
    const drmToken = await t.json('POST', '/drm/v1/tokens', { assetId: drmRec.body.id });
    expect([drmToken.status, drmToken.body.contentId]).toEqual([200, drm.body.id]);
    expect((await other.json('POST', '/drm/v1/tokens', { assetId: drmRec.body.id })).status).toBe(404);
    expect((await t.json('POST', '/drm/v1/tokens', { assetId: created.body.id })).status).toBe(404);
    // Another tenant's channel is not there; another tenant's recording neither.
    expect((await other.json('POST', '/cvr/v1/recordings', { source: source(1, 2) })).status).toBe(404);
    expect((await other.json('GET', `/cvr/v1/recordings/${created.body.id}`)).status).toBe(404);
    expect((await other.json('DELETE', `/cvr/v1/recordings/${created.body.id}`)).status).toBe(404);
    expect((await other.json('PATCH', `/cvr/v1/recordings/${created.body.id}`, { title: 'x' })).status).toBe(404);
    expect((await t.json('GET', '/cvr/v1/recordings/not-a-uuid')).status).toBe(400);
  });

  it('lists with every filter and sort, patches (source only while Pending), deletes one and many', async () => {
    const mk = async (b: object) => (await t.json('POST', '/cvr/v1/recordings', b)).body.id as string;
    const a = await mk({ source: source(10, 11), title: 'alpha', tags: ['x'], attributes: ['k=1'] });
    const b = await mk({ source: source(20, 21, otherChannel), title: 'beta', tags: ['x', 'y'] });
    const c = await mk({ source: source(30, 31), title: 'gamma', metadata: { title: 'gamma' } });
    const ids = (q: string) =>
      t.json('GET', `/cvr/v1/recordings?${q}`).then((r) => {
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        return r.body.items.map((i: any) => i.id);
      });
    const mine = [a, b, c];
    const only = (list: string[]) => list.filter((id) => mine.includes(id));
    expect(only(await ids(`channelId=${otherChannel}`))).toEqual([b]);
    expect(only(await ids(`channels=${otherChannel}&channels=${channelId}&sort=Source.LiveChannelDetails.Start`))).toEqual([a, b, c]);
    expect(only(await ids(`searchStart=${encodeURIComponent(inHours(20.5))}&searchEnd=${encodeURIComponent(inHours(30.5))}`))).toEqual([b, c].sort());
    expect(only(await ids(`tags=x&sort=Metadata.Title&desc=true`))).toEqual([b, a]);
    expect(only(await ids(`attributes=k%3D1`))).toEqual([a]);
    expect(only(await ids(`ids=${a}&ids=${c}&sort=CreateDate`))).toEqual([a, c]);
    expect(only(await ids(`statuses=Pending&query=gamma`))).toEqual([c]);
    expect(only(await ids(`sort=LastModificationDate&desc=true&statuses=Pending&statuses=Available`)).slice(0, 3)).toEqual([c, b, a]);
    const page = await t.json('GET', '/cvr/v1/recordings?limit=2&page=1');
    expect(page.body).toMatchObject({ pageSize: 2, pageNumber: 1, hasMore: true });
    expect(Object.keys(page.body.items[0]).sort()).toEqual(['createDate', 'durationMilliseconds', 'id', 'lastModificationDate', 'metadata', 'status', 'title']);
    expect((await t.json('GET', '/cvr/v1/recordings?statuses=Nope')).status).toBe(400);
    expect(await ids(`ids=${a}`).then(only)).toEqual([a]);
    expect((await other.json('GET', `/cvr/v1/recordings?ids=${a}`)).body.items).toEqual([]);

    // PATCH: the source while Pending; then 409 once it is not.
    const patched = await t.json('PATCH', `/cvr/v1/recordings/${a}`, { source: source(12, 13, otherChannel), title: 'alpha2', archive: { delaySeconds: 5 } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: a, title: 'alpha2', status: 'Pending' });
    expect((await t.json('GET', `/cvr/v1/recordings/${a}`)).body.source.liveChannelDetails.channelId).toBe(otherChannel);
    expect((await t.json('PATCH', `/cvr/v1/recordings/${a}`, { source: { liveChannelDetails: { channelId } } })).status).toBe(400);
    expect((await t.json('PATCH', `/cvr/v1/recordings/${a}`, { archive: { delaySeconds: 2592001 } })).status).toBe(400);
    const { recorderRecordings } = await import('../src/modules/recorder/tables.ts');
    const { eq } = await import('drizzle-orm');
    await p.ctx.db.update(recorderRecordings).set({ status: 'Available' }).where(eq(recorderRecordings.id, b));
    const refused = await t.json('PATCH', `/cvr/v1/recordings/${b}`, { source: source(1, 2) });
    expect(refused.status).toBe(409);
    expect(refused.body.status.code).toBe('recording_not_pending');
    expect((await t.json('PATCH', `/cvr/v1/recordings/${b}`, { title: 'still fine' })).body.title).toBe('still fine');

    // Outputs: the paging envelope of ids; progress; removal.
    const added = await t.json('POST', `/cvr/v1/recordings/${c}/outputs`, { preset: 'mp4-h264-download', id: 'dl' });
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({ items: [{ id: 'dl' }], totalCount: 1 });
    expect((await t.json('POST', `/cvr/v1/recordings/${c}/outputs`, { preset: 'mp4-h264-download', id: 'dl' })).status).toBe(409);
    expect((await t.json('GET', `/cvr/v1/recordings/${c}/outputs/dl/progress`)).body).toEqual({ progressPercent: 0 });
    expect((await other.json('GET', `/cvr/v1/recordings/${c}/outputs/dl/progress`)).status).toBe(404);
    const many = await t.json('POST', '/cvr/v1/recordings/outputs/progress', [{ id: c, outputs: [{ id: 'dl' }] }]);
    expect(many.body).toEqual([{ id: c, outputs: [{ id: 'dl', progressPercent: 0 }] }]);
    expect((await other.json('POST', '/cvr/v1/recordings/outputs/progress', [{ id: c, outputs: [{ id: 'dl' }] }])).status).toBe(404);
    expect((await t.json('DELETE', `/cvr/v1/recordings/${c}/outputs/dl`)).status).toBe(200);
    expect((await t.json('DELETE', `/cvr/v1/recordings/${c}/outputs/dl`)).status).toBe(404);

    // Delete one, then many (one unknown id does not fail the others).
    expect((await t.call('DELETE', `/cvr/v1/recordings/${a}`)).status).toBe(200);
    expect((await t.json('GET', `/cvr/v1/recordings/${a}`)).status).toBe(404);
    const result = await t.json('POST', '/cvr/v1/recordings/deletemany', [b, c, '0190b0a0-0000-7000-8000-0000000000ac']);
    expect(result.body[b].success).toBe(true);
    expect(result.body[c].success).toBe(true);
    expect(result.body['0190b0a0-0000-7000-8000-0000000000ac']).toMatchObject({ success: false, status: { status: 404 } });

    // Every change is an event.
    const types = (await p.ctx.db.select({ type: events.type }).from(events)).map((e) => e.type);
    for (const type of [
      'recorder.recording.created',
      'recorder.recording.updated',
      'recorder.recording.deleted',
      'recorder.output.created',
      'recorder.output.deleted',
    ]) {
      expect(types).toContain(type);
    }
  });
});
