import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeClip, tempDir } from './helpers/media.ts';
import { describeEachDb, startInProcess, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { uploadFile } from './helpers/upload.ts';
import { vodAssets } from './helpers/commands.ts';

/**
 * The streaming catalogue over a mix of kinds (two VOD assets, remuxed, and a live channel): every filter and sort of
 * `GET /streaming/v1/assets`, the asset details, update, settings, chapters, tags and images, and tenant isolation.
 */
describeEachDb('Streaming catalogue', (kind) => {
  // One folder per database: the first one's afterAll removes its own.
  const { dir, cleanup } = tempDir('mediaplane-streaming-');
  let p: TestPlatform;
  let t: TestTenant;
  let other: TestTenant;
  let short: string; // VOD, 2 s, "Bravo"
  let long: string; // VOD, 4 s, "alpha"
  let channel: string; // live channel "Charlie"
  let startedAt: Date;

  const ids = async (query: string) => {
    const res = await t.json('GET', `/streaming/v1/assets?${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.items.map((a: any) => a.id);
  };

  beforeAll(async () => {
    p = await startInProcess(kind);
    t = await p.createTenant();
    other = await p.createTenant();
    startedAt = new Date(Date.now() - 1000);
    const [a, b] = await Promise.all([makeClip(dir, 'two', { seconds: 2, audio: [] }), makeClip(dir, 'four', { seconds: 4, audio: [] })]);
    const create = async (file: string, title: string, attributes: string[]) =>
      (await vodAssets(t).create({ transcodedSources: [{ fileId: await uploadFile(t, file) }], preset: 'remux-hls-mp4', title, attributes })).id;
    short = await create(a, 'Bravo', ['genre=news']);
    long = await create(b, 'alpha', ['genre=sport']);
    channel = (await t.json('POST', '/live/v1/channels', { name: 'Charlie', input: { inputLoss: { type: 'COLOR' } } })).body.id;
    for (const id of [short, long]) await vodAssets(t).settled(id);
  }, 120_000);
  afterAll(async () => {
    await p.stop();
    cleanup();
  });

  it('lists every kind as streaming assets, with every filter of the spec', async () => {
    const all = (await t.json('GET', '/streaming/v1/assets')).body;
    expect(all).toMatchObject({ totalCount: 3, pageNumber: 1, pageSize: 100, pageCount: 1, hasMore: false });
    const byId = Object.fromEntries(all.items.map((a: any) => [a.id, a]));
    expect(byId[short]).toMatchObject({
      type: 'Vod',
      source: 'Vod',
      status: 'Available',
      title: 'Bravo',
      preset: 'remux-hls-mp4',
      channelId: null,
      isDrm: false,
    });
    expect(byId[channel]).toMatchObject({
      type: 'LiveChannel',
      source: 'Live',
      status: 'Off',
      title: 'Charlie',
      channelId: channel,
      durationMilliseconds: null,
    });
    expect(byId[long].durationMilliseconds).toBeGreaterThan(3500);

    expect((await ids('type=Vod')).sort()).toEqual([short, long].sort());
    expect(await ids('types=LiveChannel')).toEqual([channel]);
    expect(await ids('types=LiveEvent,Recording')).toEqual([]);
    expect(await ids('source=Live')).toEqual([channel]);
    expect((await ids('statuses=Available')).sort()).toEqual([short, long].sort());
    expect(await ids('status=Off')).toEqual([channel]);
    expect((await ids(`ids=${short}&ids=${channel}`)).sort()).toEqual([short, channel].sort());
    expect(await ids(`channelId=${channel}`)).toEqual([channel]);
    expect(await ids(`channels=${channel},${short}`)).toEqual([channel]);
    expect(await ids('durationFrom=3000')).toEqual([long]);
    expect(await ids('durationTo=3000')).toEqual([short]);
    expect(await ids('isDrm=true')).toEqual([]);
    expect(await ids('isDrm=false')).toHaveLength(3);
    expect(await ids(`createDateStart=${new Date(Date.now() + 60_000).toISOString()}`)).toEqual([]);
    expect(await ids(`createDateStart=${startedAt.toISOString()}&createDateEnd=${new Date().toISOString()}`)).toHaveLength(3);
    expect(await ids(`lastModificationDateEnd=${startedAt.toISOString()}`)).toEqual([]);
    expect(await ids('attributes=[genre]=news')).toEqual([short]);
    expect(await ids(`attributes=${encodeURIComponent('[genre]=sport')}`)).toEqual([long]);
    expect(await ids('query=alp')).toEqual([long]);
    // A window in the future: only the live channel, which runs on, covers it.
    const later = Date.now() + 3600_000;
    expect(await ids(`searchStart=${new Date(later).toISOString()}&searchEnd=${new Date(later + 60_000).toISOString()}`)).toEqual([channel]);
    expect(await ids(`searchStart=${startedAt.toISOString()}`)).toHaveLength(3);

    await t.json('POST', `/streaming/v1/assets/${short}/tags`, { tags: [{ name: 'featured' }] });
    await t.json('POST', `/streaming/v1/assets/${channel}/tags`, { tags: [{ name: 'Featured' }, { name: 'live' }] });
    expect((await ids('tags=featured')).sort()).toEqual([short, channel].sort());
    expect(await ids('tags=featured,live')).toEqual([channel]);

    for (const [query, field] of [
      ['type=Podcast', 'types'],
      ['source=Radio', 'source'],
      ['sort=Colour', 'sort'],
      ['attributes=oops', 'attributes'],
      ['durationFrom=-1', 'durationFrom'],
    ]) {
      const res = await t.json('GET', `/streaming/v1/assets?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.errors[0].field, query).toBe(field);
    }
  });

  it('sorts and pages the union of the kinds', async () => {
    expect(await ids('sort=Metadata.Title')).toEqual([long, short, channel]);
    expect(await ids('sort=Metadata.Title&desc=true')).toEqual([channel, short, long]);
    expect(await ids('sort=CreateDate')).toEqual([short, long, channel]);
    expect(await ids('sort=CreateDate&desc=true')).toEqual([channel, long, short]);
    const page = (await t.json('GET', '/streaming/v1/assets?sort=CreateDate&limit=2&page=2')).body;
    expect(page).toMatchObject({ totalCount: 3, pageCount: 2, pageSize: 2, pageNumber: 2, hasMore: false });
    expect(page.items.map((a: any) => a.id)).toEqual([channel]);
    await t.json('PATCH', `/streaming/v1/assets/${short}`, { description: 'touched' });
    expect((await ids('sort=LastModificationDate&desc=true'))[0]).toBe(short);
  });

  it('answers every field of an asset, and updates its title, description, metadata, tags and settings', async () => {
    const res = await t.json('GET', `/streaming/v1/assets/${long}`);
    expect(res.status).toBe(200);
    const a = res.body;
    expect(Object.keys(a).sort()).toEqual(
      [
        'id',
        'status',
        'metadata',
        'outputs',
        'createDate',
        'lastModificationDate',
        'durationMilliseconds',
        'source',
        'type',
        'channelId',
        'start',
        'end',
        'isDrm',
        'preset',
        'tokenRequiredPolicy',
        'title',
        'description',
        'tags',
        'images',
        'chapters',
        'settings',
      ].sort(),
    );
    expect(a.outputs[0]).toMatchObject({ status: 'Available', preset: 'remux-hls-mp4', expirationDate: null });
    expect(a.outputs[0].endpoints.map((e: any) => e.format)).toContain('HLS');
    expect(a.tokenRequiredPolicy).toEqual({ asset: null, tenant: 'Disabled' });
    expect(a.settings.cap).toEqual({ asset: null, tenant: 'Disabled' });

    const patched = await t.json('PATCH', `/streaming/v1/assets/${long}`, {
      title: 'Alpha, the film',
      description: 'Four seconds of test pattern',
      metadata: { title: 'aaa', rating: 'PG' },
      tags: [{ name: 'film' }, { name: 'film' }, { name: 'new' }],
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ title: 'Alpha, the film', description: 'Four seconds of test pattern', metadata: { title: 'aaa', rating: 'PG' } });
    expect(patched.body.tags.map((x: any) => x.name)).toEqual(['film', 'new']);
    // The VOD asset itself is not changed: the streaming title is the catalogue's own.
    expect((await t.json('GET', `/vod/v1/assets/${long}`)).body.title).toBe('alpha');

    const set = await t.json('PATCH', `/streaming/v1/assets/${long}/settings`, { tokenRequired: 'Enabled', analytics: 'Disabled' });
    expect(set.status).toBe(200);
    expect(set.body.tokenRequiredPolicy).toEqual({ asset: 'Enabled', tenant: 'Disabled' });
    expect(set.body.settings.tokenRequired).toEqual({ asset: 'Enabled', tenant: 'Disabled' });
    // Analytics is on for a tenant that did not choose (docs/decisions/streaming.md); the asset turned it off.
    expect(set.body.settings.analytics).toEqual({ asset: 'Disabled', tenant: 'Enabled' });
    expect((await t.json('PATCH', `/streaming/v1/assets/${long}/settings`, { cap: 'On' })).status).toBe(400);
    await t.json('PATCH', '/streaming/v1/settings', { devToolsAccess: 'Enabled' });
    expect((await t.json('GET', `/streaming/v1/assets/${long}`)).body.settings.devToolsAccess).toEqual({ asset: null, tenant: 'Enabled' });
    await t.json('PATCH', `/streaming/v1/assets/${long}/settings`, { tokenRequired: 'Disabled' });
    // null takes the asset's own state away: the tenant's default applies again; the others stay.
    const followed = await t.json('PATCH', `/streaming/v1/assets/${long}/settings`, { tokenRequired: null });
    expect(followed.status).toBe(200);
    expect(followed.body.tokenRequiredPolicy).toEqual({ asset: null, tenant: 'Disabled' });
    expect(followed.body.settings.analytics).toEqual({ asset: 'Disabled', tenant: 'Enabled' });
  });

  it('creates chapters in order, refuses overlaps and chapters past the end, and deletes them', async () => {
    const path = `/streaming/v1/assets/${long}/chapters`;
    expect(
      (
        await t.call('POST', path, {
          chapters: [
            { title: 'Two', startSecond: 2, endSecond: 4 },
            { title: 'One', startSecond: 0, endSecond: 2 },
          ],
        })
      ).status,
    ).toBe(200);
    let chapters = (await t.json('GET', `/streaming/v1/assets/${long}`)).body.chapters;
    expect(chapters.map((c: any) => [c.title, c.startSecond, c.endSecond])).toEqual([
      ['One', 0, 2],
      ['Two', 2, 4],
    ]);
    expect(chapters[0].id).not.toBe(chapters[1].id);

    const overlap = await t.json('POST', path, { chapters: [{ title: 'Clash', startSecond: 1, endSecond: 3 }] });
    expect(overlap.status).toBe(400);
    expect(overlap.body.errors[0].field).toBe('chapters[0]');
    expect(overlap.body.status.message).toMatch(/overlaps chapter "One"/);
    const past = await t.json('POST', path, { chapters: [{ title: 'Late', startSecond: 4, endSecond: 60 }] });
    expect(past.status).toBe(400);
    expect(past.body.errors[0].field).toBe('chapters[0].endSecond');
    expect(past.body.status.message).toMatch(/past the end of the asset \(4 s\)/);
    expect((await t.json('POST', path, { chapters: [{ startSecond: 3, endSecond: 3 }] })).status).toBe(400);
    // A live channel has no duration: an end must be given.
    const open = await t.json('POST', `/streaming/v1/assets/${channel}/chapters`, { chapters: [{ title: 'Open', startSecond: 0 }] });
    expect(open.body.errors[0].field).toBe('chapters[0].endSecond');

    expect((await t.call('DELETE', `${path}/${chapters[0].id}`)).status).toBe(200);
    expect((await t.call('DELETE', `${path}/${chapters[0].id}`)).status).toBe(404);
    chapters = (await t.json('GET', `/streaming/v1/assets/${long}`)).body.chapters;
    expect(chapters.map((c: any) => c.title)).toEqual(['Two']);
  });

  it('adds and deletes tags and images', async () => {
    const path = `/streaming/v1/assets/${short}`;
    expect((await t.call('POST', `${path}/tags`, { tags: [{ name: 'news' }, { name: 'NEWS' }] })).status).toBe(200);
    let tags = (await t.json('GET', path)).body.tags;
    expect(tags.map((x: any) => x.name)).toEqual(['featured', 'news']);
    expect((await t.call('DELETE', `${path}/tags/${tags[0].id}`)).status).toBe(200);
    expect((await t.call('DELETE', `${path}/tags/News`)).status).toBe(200);
    expect((await t.call('DELETE', `${path}/tags/news`)).status).toBe(404);
    tags = (await t.json('GET', path)).body.tags;
    expect(tags).toEqual([]);
    expect((await t.json('POST', `${path}/tags`, { tags: [] })).status).toBe(200);
    expect((await t.json('POST', `${path}/tags`, {})).status).toBe(400);

    const images = { poster: { Id: 'p1', Name: 'Poster', Url: 'https://cdn.example.com/poster.jpg' }, thumb: { Url: 'https://cdn.example.com/t.png' } };
    expect((await t.call('POST', `${path}/images`, { images })).status).toBe(200);
    expect((await t.json('GET', path)).body.images).toEqual({ poster: images.poster, thumb: { Id: null, Name: null, Url: images.thumb.Url } });
    const bad = await t.json('POST', `${path}/images`, { images: { x: { Url: 'ftp://example.com/a.png' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe('images.x.Url');
    expect((await t.call('DELETE', `${path}/images/thumb`)).status).toBe(200);
    expect((await t.call('DELETE', `${path}/images/thumb`)).status).toBe(404);
    expect(Object.keys((await t.json('GET', path)).body.images)).toEqual(['poster']);
  });

  it("answers another tenant's asset like a missing one on every route", async () => {
    const missing = '0190b0a0-0000-7000-8000-000000000000';
    expect((await other.json('GET', '/streaming/v1/assets')).body.totalCount).toBe(0);
    for (const id of [short, channel, missing, 'not-an-asset']) {
      const calls: [string, string, unknown?][] = [
        ['GET', `/streaming/v1/assets/${id}`],
        ['PATCH', `/streaming/v1/assets/${id}`, { title: 'x' }],
        ['PATCH', `/streaming/v1/assets/${id}/settings`, { tokenRequired: 'Enabled' }],
        ['POST', `/streaming/v1/assets/${id}/chapters`, { chapters: [{ startSecond: 0, endSecond: 1 }] }],
        ['DELETE', `/streaming/v1/assets/${id}/chapters/${missing}`],
        ['POST', `/streaming/v1/assets/${id}/tags`, { tags: [{ name: 'x' }] }],
        ['DELETE', `/streaming/v1/assets/${id}/tags/featured`],
        ['POST', `/streaming/v1/assets/${id}/images`, { images: { a: { Url: 'https://example.com/a.png' } } }],
        ['DELETE', `/streaming/v1/assets/${id}/images/poster`],
      ];
      for (const [method, path, body] of calls) {
        const res = await other.json(method, path, body);
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(res.body.status.code, `${method} ${path}`).toBe('streaming_asset_not_found');
      }
    }
    expect((await t.json('GET', `/streaming/v1/assets/${short}`)).body.title).toBe('Bravo');
    expect((await t.json('GET', '/streaming/v1/assets/bad%20id')).status).toBe(400);
  });

  it('lists a live event and a recording of the channel beside them, filtered and sorted with the rest', async () => {
    // One clock reading: the event's duration is exactly one hour (two readings may be a millisecond apart).
    const now = Date.now();
    const at = (hours: number) => new Date(now + hours * 3600_000).toISOString();
    const event = (await t.json('POST', '/live/v1/events', { channelId: channel, start: at(2), end: at(3), title: 'Delta' })).body.id as string;
    const window = { type: 'LiveChannel', liveChannelDetails: { channelId: channel, start: at(1), end: at(4) } };
    const recording = (await t.json('POST', '/cvr/v1/recordings', { source: window, title: 'Echo' })).body.id as string;
    try {
      expect(await ids('types=LiveEvent')).toEqual([event]);
      expect(await ids('source=Recorder')).toEqual([recording]);
      expect(await ids(`channelId=${channel}&sort=Title`)).toEqual([channel, event, recording]);
      expect(await ids('statuses=Scheduled,Pending')).toEqual(expect.arrayContaining([event, recording]));
      // Only these two have a start: first by it; the others sort after them.
      expect((await ids('sort=Start')).slice(0, 2)).toEqual([recording, event]);
      expect(await ids('durationFrom=3600000&durationTo=3600000')).toEqual([event]);
      // A window between the recording's start and the event's: the channel and the recording meet it.
      expect((await ids(`searchStart=${at(1.2)}&searchEnd=${at(1.5)}`)).sort()).toEqual([channel, recording].sort());
      expect((await other.json('GET', '/streaming/v1/assets?types=LiveEvent,Recording')).body.totalCount).toBe(0);
      for (const id of [event, recording]) expect((await other.json('GET', `/streaming/v1/assets/${id}`)).status).toBe(404);
    } finally {
      await t.call('DELETE', `/live/v1/events/${event}`);
      await t.call('DELETE', `/cvr/v1/recordings/${recording}`);
    }
  });
});
