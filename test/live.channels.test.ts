import { mkdtempSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { recordChannelStats } from '../src/modules/live/stats.ts';
import { liveChannels } from '../src/modules/live/tables.ts';
import { events } from '../src/db/events.ts';
import { describeEachDb, startPlatform, tenantClient, type TestPlatform, type TestTenant } from './helpers/platform.ts';

/** A create body with every field the spec lists. */
const fullBody = () => ({
  name: 'Studio A',
  redundancy: 'SingleInput',
  latency: 'NormalLatency',
  input: {
    type: 'RTMP_PUSH',
    mp4Sources: [{ url: 'https://media.example.com/loop.mp4', username: 'u', password: 'secret-pass' }],
    whitelistCidr: '203.0.113.0/24',
    inputLoss: { type: 'COLOR', color: '#112233' },
    transportInputProtocol: 'RTMP',
  },
  endpoints: [
    { type: 'Hls', hasVerticalOrientation: false, isDrmProtected: false },
    { type: 'Dash', hasVerticalOrientation: false, isDrmProtected: false },
  ],
  qualities: [
    { resolution: '720p', frameRate: 30 },
    { resolution: { intValue: 360, qualityType: 'P' }, frameRate: 25 },
  ],
  restreams: [
    {
      protocol: 'RTMP',
      id: 'yt',
      destination: 'YouTube',
      label: 'main',
      rtmpDestinations: [{ url: 'rtmp://a.rtmp.youtube.com/live2', streamKey: 'yt-key' }],
      hasVerticalOrientation: false,
    },
  ],
  activationMode: 'Manual',
  transmissionType: 'Video',
  environment: 'ManagedLive',
  packagingVersion: 'V1',
  isWatermarkProtected: false,
  // The language of Debian's pocketsphinx-en-us, which `npm test` installs (scripts/ensure-system-deps.sh).
  aiLiveCaptioningLanguageCode: 'en-US',
  drmKeyMode: 'SingleKey',
  broadcastStandard: 'HD',
  metadata: { title: 'Studio A' },
  distributionInfo: { accessPolicyId: '0190b0a0-0000-7000-8000-0000000000aa' },
});

/** A GET whose path is sent as written (fetch would resolve `..` first). */
const rawStatus = (base: string, path: string) =>
  new Promise<number>((resolve, reject) => {
    const url = new URL(base);
    get({ host: url.hostname, port: url.port, path }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    }).on('error', reject);
  });

const minimal = (name: string) => ({ name, input: { inputLoss: { type: 'COLOR' } } });

describeEachDb('Live channels API', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let other: TestTenant;

  beforeAll(async () => {
    // The api role: no channel runner, so statuses move only through the API here (test/live.runner.test.ts runs one).
    p = await startPlatform(kind, { MEDIAPLANE_ROLE: 'api', MEDIAPLANE_RTMP_PUBLIC_URL: 'rtmp://ingest.example.com:1935/live' });
    t = await p.createTenant();
    other = await p.createTenant();
    // The default limit (5) is for the limit test below; this tenant makes more.
    expect((await p.admin('PATCH', `/admin/v1/tenants/${t.id}`, { channelsLimit: 100 })).status).toBe(200);
  });
  afterAll(() => p.stop());

  const eventTypesOf = async (id: string) =>
    (await p.ctx.db.select().from(events).where(eq(events.tenantId, t.id)).orderBy(asc(events.occuredAt), asc(events.id)))
      .filter((e) => (e.data as any).id === id)
      .map((e) => e.type);

  it('creates a channel with every body field, Off, and shows it in details and configuration', async () => {
    const created = await t.json('POST', '/live/v1/channels', fullBody());
    expect(created.status).toBe(200);
    expect(Object.keys(created.body)).toEqual(['id']);
    const id = created.body.id;

    // Ids are one spelling: an upper-case id names the same channel.
    expect((await t.json('GET', `/live/v1/channels/${id.toUpperCase()}`)).body.id).toBe(id);
    const { status, body: ch } = await t.json('GET', `/live/v1/channels/${id}`);
    expect(status).toBe(200);
    expect(ch).toMatchObject({ id, name: 'Studio A', status: 'Off', metadata: { title: 'Studio A' }, automationDisabled: false, cdn: { enabled: false } });
    expect(ch.distribution.accessPolicyId).toBe('0190b0a0-0000-7000-8000-0000000000aa');
    expect(ch.endpoints.map((e: any) => [e.format, e.url, e.protection])).toEqual([
      ['HLS', `${p.baseUrl}/media/live/${t.id}/${id}/master.m3u8`, 'None'],
      ['DASH', `${p.baseUrl}/media/live/${t.id}/${id}/manifest.mpd`, 'None'],
    ]);
    expect(ch.archiveEndpointIds).toEqual(['hls', 'dash']);
    expect(ch.inputs[0]).toMatchObject({ type: 'RTMP_PUSH', details: { securityGroupIps: ['203.0.113.0/24'] } });
    expect(ch.encoding).toEqual({ preset: '720p,360p', pipelines: 1 });

    const conf = (await t.json('GET', `/live/v1/channels/${id}/configuration`)).body;
    expect(conf).toMatchObject({
      id,
      name: 'Studio A',
      codeName: 'studio-a',
      redundancy: 'SingleInput',
      activationMode: 'Manual',
      transmissionType: 'Video',
      environment: 'ManagedLive',
      latency: 'NormalLatency',
      isConfiguredExternally: false,
      status: { value: 'Off' },
      requiresCloudUpdate: false,
      packagingVersion: 'V1',
      isWatermarkProtected: false,
      drmKeyMode: 'SingleKey',
      broadcastStandard: 'HD',
      highestVideoResolution: '720p',
      endpoints: [
        { type: 'Hls', hasVerticalOrientation: false, isDrmProtected: false },
        { type: 'Dash', hasVerticalOrientation: false, isDrmProtected: false },
      ],
      qualities: [
        { resolution: '720p', frameRate: 30 },
        { resolution: '360p', frameRate: 25 },
      ],
      aiLiveCaptioning: { isEnabled: true, language: { name: 'English (United States)', code: 'en-US', code3Lettered: 'eng' } },
    });
    for (const field of ['stackName', 'channelGroupStackName', 'templateVersion', 'specificationId']) expect(typeof conf[field]).toBe('string');
    expect(conf.restreams).toEqual([
      {
        id: 'yt',
        destination: 'YouTube',
        label: 'main',
        protocol: 'RTMP',
        hasVerticalOrientation: false,
        rtmpDestinations: [{ url: 'rtmp://a.rtmp.youtube.com/live2', streamKey: '********', status: 'Off', lastError: null }],
      },
    ]);
    expect(conf.input).toMatchObject({
      type: 'RTMP_PUSH',
      whiteListCidr: '203.0.113.0/24',
      inputLoss: { type: 'COLOR', color: '#112233', imageSlateUri: null },
      transportInputProtocol: 'RTMP',
      transportSecondaryIngestUrl: null,
      inputDevices: [],
      mp4Sources: [{ url: 'https://media.example.com/loop.mp4', username: 'u', password: '********', hasExistingPassword: true }],
    });
    expect(conf.input.transportPrimaryIngestUrl).toMatch(/^rtmp:\/\/ingest\.example\.com:1935\/live\/[A-Za-z0-9_-]{32}$/);
    expect(JSON.stringify(conf)).not.toContain('secret-pass');
    expect(JSON.stringify(conf)).not.toContain('yt-key');
    expect(ch.inputs[0].destinations[0].url).toBe(conf.input.transportPrimaryIngestUrl);
    expect(await eventTypesOf(id)).toEqual(['live.channel.created']);
  });

  it("keeps the encoder's frame rate, up to 30, in a quality that names none; the configuration says which", async () => {
    const id = (await t.json('POST', '/live/v1/channels', minimal('rates'))).body.id;
    const conf = async () => (await t.json('GET', `/live/v1/channels/${id}/configuration`)).body.qualities;
    expect(await conf()).toEqual(['720p', '480p', '360p'].map((resolution) => ({ resolution, frameRate: 30, followsSourceFrameRate: true })));
    const res = await t.json('PATCH', `/live/v1/channels/${id}`, { qualities: [{ resolution: '480p' }, { resolution: '360p', frameRate: 25 }] });
    expect(res.status).toBe(200);
    expect(await conf()).toEqual([
      { resolution: '480p', frameRate: 30, followsSourceFrameRate: true },
      { resolution: '360p', frameRate: 25, followsSourceFrameRate: false },
    ]);
  });

  it('refuses bad bodies with 400 validation_failed naming each field', async () => {
    const cases: [unknown, string][] = [
      [{ input: { inputLoss: { type: 'COLOR' } } }, 'name'],
      [{ name: 'x', input: {} }, 'input.inputLoss'],
      [{ name: 'x', input: { inputLoss: { type: 'BLUE' } } }, 'input.inputLoss.type'],
      [{ name: 'x', input: { inputLoss: { type: 'SLATE' } } }, 'input.inputLoss.imageSlateUri'],
      [{ name: 'x', input: { inputLoss: { type: 'COLOR', color: 'red' } } }, 'input.inputLoss.color'],
      [{ name: 'x', input: { whitelistCidr: '10.0.0.0/99', inputLoss: { type: 'COLOR' } } }, 'input.whitelistCidr'],
      [{ name: 'x', input: { type: 'MP4_FILE', inputLoss: { type: 'COLOR' } } }, 'input.mp4Sources'],
      [{ name: 'x', input: { mp4Sources: [{ url: 'file:///etc/passwd' }], inputLoss: { type: 'COLOR' } } }, 'input.mp4Sources[0].url'],
      [{ name: 'x', input: { transportInputProtocol: 'WebRTC', inputLoss: { type: 'COLOR' } } }, 'input.transportInputProtocol'],
      [{ name: 'x', input: { transportInputProtocol: 'SRT', whitelistCidr: '10.0.0.0/8', inputLoss: { type: 'COLOR' } } }, 'input.whitelistCidr'],
      [{ ...minimal('x'), redundancy: 'TripleInput' }, 'redundancy'],
      [{ ...minimal('x'), qualities: [{ resolution: '9000p' }] }, 'qualities[0].resolution'],
      [{ ...minimal('x'), qualities: [{ resolution: '720p', frameRate: 0 }] }, 'qualities[0].frameRate'],
      [{ ...minimal('x'), endpoints: [{ type: 'HlsDrm' }, { type: 'Dash' }] }, 'endpoints'],
      [{ ...minimal('x'), endpoints: [{ type: 'HlsDrm', isDrmProtected: false }] }, 'endpoints[0].isDrmProtected'],
      [{ ...minimal('x'), endpoints: [{ type: 'DashDrm' }], latency: 'ReducedLatency' }, 'endpoints'],
      [{ ...minimal('x'), endpoints: [{ type: 'DashDrm' }], drmKeyMode: 'PerTrack' }, 'drmKeyMode'],
      [{ ...minimal('x'), endpoints: [{ type: 'HlsDrm' }], isWatermarkProtected: true }, 'endpoints'],
      [{ ...minimal('x'), endpoints: [{ type: 'HlsDrm', scheme: 'cenc' }] }, 'endpoints[0].scheme'],
      [{ ...minimal('x'), endpoints: [{ type: 'Dash', scheme: 'cbcs' }] }, 'endpoints[0].scheme'],
      [{ ...minimal('x'), endpoints: [{ type: 'DashDrm' }, { type: 'Dash', isDrmProtected: true, scheme: 'cenc' }] }, 'endpoints'],
      [{ ...minimal('x'), endpoints: [{ type: 'Hls', hasVerticalOrientation: true }, { type: 'Dash' }] }, 'endpoints'],
      [
        { ...minimal('x'), restreams: [{ protocol: 'RTMP', id: 'a', destination: 'd', rtmpDestinations: [{ url: 'http://x', streamKey: 'k' }] }] },
        'restreams[0].rtmpDestinations[0].url',
      ],
      [{ ...minimal('x'), aiLiveCaptioningLanguageCode: 'english please' }, 'aiLiveCaptioningLanguageCode'],
      [{ ...minimal('x'), qualities: [{ resolution: { intValue: 1e9 } }] }, 'qualities[0].resolution.intValue'],
      [{ ...minimal('x'), name: 'x'.repeat(1025) }, 'name'],
      [{ ...minimal('x'), name: 'nul\u0000name' }, 'name'],
    ];
    for (const [body, field] of cases) {
      const res = await t.json('POST', '/live/v1/channels', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.status.code).toBe('validation_failed');
      expect(
        res.body.errors.map((e: any) => e.field),
        JSON.stringify(body),
      ).toContain(field);
    }
  });

  it("gives DRM endpoints the channel's key (created once, kept on later changes) and the channel as content id", async () => {
    const id = (await t.json('POST', '/live/v1/channels', minimal('drm'))).body.id;
    const drm = async () =>
      (await t.json('PATCH', `/live/v1/channels/${id}`, { endpoints: [{ type: 'Hls', isDrmProtected: true }, { type: 'DashDrm' }] })).body.endpoints;
    const [hlsDrm, dashDrm] = await drm();
    expect(hlsDrm).toMatchObject({
      id: 'hls-aes128',
      url: `${p.baseUrl}/media/live/${t.id}/${id}/aes128/master.m3u8`,
      protection: 'Aes128',
      type: 'HlsDrm',
      isDrmProtected: true,
      drmKeyMode: 'SingleKey',
      protectionDetails: { keyIds: [expect.stringMatching(/^[0-9a-f-]{36}$/)], contentId: id },
    });
    expect(dashDrm).toMatchObject({ id: 'dash-cenc', url: `${p.baseUrl}/media/live/${t.id}/${id}/cenc/manifest.mpd`, protection: 'ClearKey' });
    expect(dashDrm.protectionDetails).toEqual(hlsDrm.protectionDetails);
    expect((await drm())[0].protectionDetails).toEqual(hlsDrm.protectionDetails);
    expect((await t.json('POST', '/drm/v1/tokens', { assetId: id })).status).toBe(200);

    // A watermarked channel takes no DRM endpoints later either: its marked variants are served unencrypted.
    const marked = (await t.json('POST', '/live/v1/channels', { ...minimal('marked'), isWatermarkProtected: true })).body.id;
    const refused = await t.json('PATCH', `/live/v1/channels/${marked}`, { endpoints: [{ type: 'DashDrm' }] });
    expect(refused.status).toBe(400);
    expect(refused.body.errors.map((e: any) => e.field)).toEqual(['endpoints']);
  });

  it('updates a channel: answers id, endpoints and archiveEndpoints; keeps masked secrets; null removes the policy; at most 10 restreams', async () => {
    const id = (await t.json('POST', '/live/v1/channels', fullBody())).body.id;
    const conf = (await t.json('GET', `/live/v1/channels/${id}/configuration`)).body;
    const res = await t.json('PATCH', `/live/v1/channels/${id}`, {
      name: 'Studio B',
      automationDisabled: true,
      accessPolicyId: null,
      endpoints: [{ type: 'Hls', hasVerticalOrientation: true }],
      // Sent back as read: the masked password and stream key keep the stored ones.
      input: { mp4Sources: conf.input.mp4Sources.map(({ hasExistingPassword: _h, ...m }: any) => m), inputLoss: { color: '#000000' } },
      // What the client can set: a destination's status and last error are the server's (refused if sent, issue 25 item 5).
      restreams: conf.restreams.map((r: any) => ({
        ...r,
        rtmpDestinations: r.rtmpDestinations.map(({ status: _s, lastError: _e, ...d }: any) => d),
      })),
      // Matched to the installed model without regard to case, stored as the model spells it.
      aiLiveCaptioningLanguageCode: 'en-us',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      id,
      endpoints: [
        {
          id: 'hls',
          accessType: 'Http',
          format: 'HLS',
          url: `${p.baseUrl}/media/live/${t.id}/${id}/master.m3u8`,
          protection: 'None',
          manifest: `${p.baseUrl}/media/live/${t.id}/${id}/master.m3u8`,
          hasVerticalOrientation: true,
        },
      ],
      archiveEndpoints: [expect.objectContaining({ id: 'hls', hasVerticalOrientation: true })],
    });
    const ch = (await t.json('GET', `/live/v1/channels/${id}`)).body;
    expect(ch).toMatchObject({ name: 'Studio B', automationDisabled: true, distribution: { accessPolicyId: null } });
    const [row] = await p.ctx.db.select().from(liveChannels).where(eq(liveChannels.id, id));
    expect(row.input.mp4Sources[0].password).toBe('secret-pass');
    expect(row.restreams[0].rtmpDestinations[0].streamKey).toBe('yt-key');
    expect(row.input.inputLoss).toEqual({ type: 'COLOR', color: '#000000' });
    expect(row.aiLiveCaptioningLanguageCode).toBe('en-US');
    // A language without an installed model is refused, naming what is installed; null turns captions off.
    const polish = await t.json('PATCH', `/live/v1/channels/${id}`, { aiLiveCaptioningLanguageCode: 'pl-PL' });
    expect(polish.status).toBe(400);
    expect(polish.body.status.code).toBe('validation_failed');
    expect(polish.body.errors).toEqual([{ field: 'aiLiveCaptioningLanguageCode', message: expect.stringContaining('installed: en-US') }]);
    expect((await t.json('PATCH', `/live/v1/channels/${id}`, { aiLiveCaptioningLanguageCode: null })).status).toBe(200);
    expect((await t.json('GET', `/live/v1/channels/${id}/configuration`)).body.aiLiveCaptioning).toEqual({ isEnabled: false, language: null });

    // Omitted leaves the policy as it is.
    await t.json('PATCH', `/live/v1/channels/${id}`, { accessPolicyId: '0190b0a0-0000-7000-8000-0000000000bb' });
    await t.json('PATCH', `/live/v1/channels/${id}`, { name: 'Studio C' });
    expect((await t.json('GET', `/live/v1/channels/${id}`)).body.distribution.accessPolicyId).toBe('0190b0a0-0000-7000-8000-0000000000bb');

    const restream = (i: number) => ({
      protocol: 'RTMP',
      id: `r${i}`,
      destination: 'd',
      rtmpDestinations: [{ url: 'rtmp://example.com/app', streamKey: 'k' }],
    });
    const eleven = await t.json('PATCH', `/live/v1/channels/${id}`, { restreams: Array.from({ length: 11 }, (_, i) => restream(i)) });
    expect(eleven.status).toBe(400);
    expect(eleven.body.errors[0].field).toBe('restreams');
    const ten = await t.json('PATCH', `/live/v1/channels/${id}`, { restreams: Array.from({ length: 10 }, (_, i) => restream(i)) });
    expect(ten.status).toBe(200);
    const missing = await t.json('PATCH', `/live/v1/channels/${id}`, {
      restreams: [{ protocol: 'RTMP', id: 'x', destination: 'd', rtmpDestinations: [{ url: 'rtmp://example.com/app' }] }],
    });
    expect(missing.status).toBe(400);
    expect(missing.body.errors.map((e: any) => e.field)).toContain('restreams[0].rtmpDestinations[0].streamKey');
    // Four updates above, and the one that turned captions off.
    expect((await eventTypesOf(id)).filter((e) => e === 'live.channel.updated')).toHaveLength(5);
  });

  it('lists with ids, date filters, query, sort and includeCloudData', async () => {
    const a = (await t.json('POST', '/live/v1/channels', { ...minimal('List Bravo'), metadata: { title: 'bravo' } })).body.id;
    const b = (await t.json('POST', '/live/v1/channels', { ...minimal('List Alpha'), metadata: { title: 'alpha' } })).body.id;
    const byIds = (await t.json('GET', `/live/v1/channels?ids=${a},${b}&sort=Metadata.Title`)).body;
    expect(byIds).toMatchObject({ totalCount: 2, pageNumber: 1, pageSize: 100, pageCount: 1, hasMore: false });
    expect(byIds.items.map((c: any) => c.id)).toEqual([b, a]);
    expect(byIds.items[0].endpoints).toHaveLength(2);
    expect(byIds.items[0].inputs).toHaveLength(1);
    const desc = (await t.json('GET', `/live/v1/channels?ids=${a}&ids=${b}&sort=CreateDate&desc=true`)).body;
    expect(desc.items.map((c: any) => c.id)).toEqual([b, a]);
    const bare = (await t.json('GET', `/live/v1/channels?ids=${a}&includeCloudData=false`)).body.items[0];
    expect(bare.endpoints).toBeUndefined();
    expect(bare.inputs).toBeUndefined();
    expect(bare.status).toBe('Off');
    const future = new Date(Date.now() + 3600_000).toISOString();
    expect((await t.json('GET', `/live/v1/channels?createDateStart=${future}`)).body.totalCount).toBe(0);
    expect((await t.json('GET', `/live/v1/channels?lastModificationDateEnd=${future}&query=list%20alpha`)).body.items.map((c: any) => c.id)).toEqual([b]);
    const paged = (await t.json('GET', `/live/v1/channels?ids=${a},${b}&limit=1&page=2&sort=LastModificationDate`)).body;
    expect(paged).toMatchObject({ totalCount: 2, pageCount: 2, pageNumber: 2, hasMore: false });
    expect(paged.items.map((c: any) => c.id)).toEqual([b]);
    expect((await t.json('GET', '/live/v1/channels?sort=Colour')).status).toBe(400);
    expect((await t.json('GET', '/live/v1/channels?ids=nope')).status).toBe(400);
  });

  it('start, status, stop, rotate and delete; a running channel cannot be deleted; every transition is an event', async () => {
    const id = (await t.json('POST', '/live/v1/channels', minimal('Lifecycle'))).body.id;
    const start = await t.call('POST', `/live/v1/channels/${id}/start`);
    expect(start.status).toBe(200);
    expect(await start.text()).toBe('');
    expect((await t.json('GET', `/live/v1/channels/${id}/status`)).body).toEqual({ id, status: 'Starting' });
    expect((await t.call('POST', `/live/v1/channels/${id}/start`)).status).toBe(200); // already starting: no change
    const del = await t.json('DELETE', `/live/v1/channels/${id}`);
    expect(del.status).toBe(409);
    expect(del.body.status.code).toBe('channel_not_off');

    const before = (await t.json('GET', `/live/v1/channels/${id}/configuration`)).body.input.transportPrimaryIngestUrl;
    const rotated = await t.json('POST', `/live/v1/channels/${id}/stream-key/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.id).toBe(id);
    expect(rotated.body.transportPrimaryIngestUrl).not.toBe(before);
    expect((await t.json('GET', `/live/v1/channels/${id}/configuration`)).body.input.transportPrimaryIngestUrl).toBe(rotated.body.transportPrimaryIngestUrl);

    // No live process holds it: stop turns it Off at once.
    const stop = await t.call('POST', `/live/v1/channels/${id}/stop`);
    expect(stop.status).toBe(200);
    expect((await t.json('GET', `/live/v1/channels/${id}/status`)).body.status).toBe('Off');
    expect((await t.call('POST', `/live/v1/channels/${id}/stop`)).status).toBe(200); // already off

    const second = (await t.json('POST', '/live/v1/channels', minimal('Lifecycle 2'))).body.id;
    await t.call('POST', `/live/v1/channels/${second}/start`);
    const many = (await t.json('GET', `/live/v1/channelsstatus?ids=${id},${second},0190b0a0-0000-7000-8000-0000000000cc`)).body;
    expect(many).toEqual([
      { id, status: 'Off' },
      { id: second, status: 'Starting' },
    ]);
    expect((await t.json('GET', '/live/v1/channelsstatus?ids=bad')).status).toBe(400);

    expect((await t.json('DELETE', `/live/v1/channels/${id}`)).status).toBe(200);
    expect((await t.json('GET', `/live/v1/channels/${id}`)).status).toBe(404);
    expect(await eventTypesOf(id)).toEqual([
      'live.channel.created',
      'live.channel.starting',
      'live.channel.updated',
      'live.channel.stopping',
      'live.channel.off',
      'live.channel.deleted',
    ]);
  });

  it('enforces the tenant channel limit on create with 409 channel_limit_reached', async () => {
    const limited = await p.createTenant();
    expect((await limited.json('GET', '/live/v1/channels/limit')).body).toEqual({ channelsLimit: 5 });
    expect((await p.admin('PATCH', `/admin/v1/tenants/${limited.id}`, { channelsLimit: 2 })).status).toBe(200);
    expect((await limited.json('GET', '/live/v1/channels/limit')).body).toEqual({ channelsLimit: 2 });
    const made = await Promise.all([1, 2, 3].map((i) => limited.json('POST', '/live/v1/channels', minimal(`c${i}`))));
    expect(made.map((r) => r.status).sort()).toEqual([200, 200, 409]);
    const refused = made.find((r) => r.status === 409)!;
    expect(refused.body.status.code).toBe('channel_limit_reached');
    expect((await limited.json('GET', '/live/v1/channels')).body.totalCount).toBe(2);
    await limited.json('DELETE', `/live/v1/channels/${made.find((r) => r.status === 200)!.body.id}`);
    expect((await limited.json('POST', '/live/v1/channels', minimal('c4'))).status).toBe(200);
  });

  it('offers exactly the caption languages whose speech model is installed', async () => {
    expect(await t.json('GET', '/live/v1/channels/ai-live-caption-languages')).toEqual({
      status: 200,
      body: [{ name: 'English (United States)', code: 'en-US' }],
    });
    // Read at each request: a server whose models directory holds none offers none, and refuses every language.
    const installed = p.ctx.config.live.captionModelsDir;
    p.ctx.config.live.captionModelsDir = mkdtempSync(join(tmpdir(), 'no-models-'));
    try {
      expect(await t.json('GET', '/live/v1/channels/ai-live-caption-languages')).toEqual({ status: 200, body: [] });
      const refused = await t.json('POST', '/live/v1/channels', { ...minimal('captions'), aiLiveCaptioningLanguageCode: 'en-US' });
      expect(refused.status).toBe(400);
      expect(refused.body.errors).toEqual([{ field: 'aiLiveCaptioningLanguageCode', message: expect.stringContaining('none is installed') }]);
    } finally {
      p.ctx.config.live.captionModelsDir = installed;
    }
  });

  it('aggregates per-minute statistics by periodSeconds with Sum and Avg, and refuses periods that are not whole minutes', async () => {
    const id = (await t.json('POST', '/live/v1/channels', minimal('Stats'))).body.id;
    const base = Date.UTC(2026, 0, 1, 12, 0, 0);
    await recordChannelStats(
      p.ctx.db,
      [0, 1, 2, 3].map((m) => ({
        channelId: id,
        tenantId: t.id,
        minute: new Date(base + m * 60_000),
        values: { inputBitrate: 1000 * (m + 1), segmentsWritten: 30 },
      })),
    );
    const q = (extra: string) => t.json('GET', `/live/v1/channels/${id}/stats?start=2026-01-01T12:00:00Z&end=2026-01-01T12:10:00Z${extra}`);
    const sum = (await q('&periodSeconds=120')).body.metrics;
    expect(sum.inputBitrate).toMatchObject({ id: 'inputBitrate', unitName: 'kilobits per second', unitSymbol: 'kb/s' });
    expect(sum.inputBitrate.data).toEqual([
      { time: '2026-01-01T12:00:00.000Z', value: 3000 },
      { time: '2026-01-01T12:02:00.000Z', value: 7000 },
    ]);
    expect(sum.segmentsWritten.data.map((d: any) => d.value)).toEqual([60, 60]);
    expect(sum.concurrentViewers.data).toEqual([]);
    const avg = (await q('&periodSeconds=120&aggregationFunction=Avg')).body.metrics;
    expect(avg.inputBitrate.data.map((d: any) => d.value)).toEqual([1500, 3500]);
    const perMinute = (await q('')).body.metrics;
    expect(perMinute.inputBitrate.data).toHaveLength(4);
    // Written again for the same minute (the owner flushes the minute in progress): the newer value stands.
    await recordChannelStats(p.ctx.db, [{ channelId: id, tenantId: t.id, minute: new Date(base), values: { inputBitrate: 5000 } }]);
    expect((await q('')).body.metrics.inputBitrate.data[0].value).toBe(5000);

    for (const bad of ['&periodSeconds=90', '&periodSeconds=30', '&aggregationFunction=Max', '&start=2026-01-02T00:00:00Z']) {
      const res = await q(bad);
      expect(res.status, bad).toBe(400);
      expect(res.body.status.code).toBe('validation_failed');
    }
    expect((await q('&periodSeconds=90')).body.errors[0].field).toBe('periodSeconds');
  });

  it('serves live outputs under /media/live with CORS and short caching for playlists', async () => {
    const id = (await t.json('POST', '/live/v1/channels', minimal('Media'))).body.id;
    const prefix = `tenants/${t.id}/live/${id}/`;
    await p.ctx.store.putObject(`${prefix}master.m3u8`, '#EXTM3U\n', 'application/vnd.apple.mpegurl');
    await p.ctx.store.putObject(`${prefix}720p/1.m4s`, Buffer.alloc(100, 1), 'video/mp4');
    const playlist = await fetch(`${p.baseUrl}/media/live/${t.id}/${id}/master.m3u8`);
    expect(playlist.status).toBe(200);
    expect(playlist.headers.get('access-control-allow-origin')).toBe('*');
    expect(playlist.headers.get('cache-control')).toBe('public, max-age=1');
    expect(await playlist.text()).toBe('#EXTM3U\n');
    const segment = await fetch(`${p.baseUrl}/media/live/${t.id}/${id}/720p/1.m4s`, { headers: { range: 'bytes=0-9' } });
    expect(segment.status).toBe(206);
    expect(segment.headers.get('cache-control')).toContain('immutable');
    expect((await segment.arrayBuffer()).byteLength).toBe(10);
    // The same channel under another tenant's id, or a path that climbs out, is not found.
    expect((await fetch(`${p.baseUrl}/media/live/${other.id}/${id}/master.m3u8`)).status).toBe(404);
    expect(await rawStatus(p.baseUrl, `/media/live/${t.id}/${id}/../${id}/master.m3u8`)).toBe(404);
    expect((await fetch(`${p.baseUrl}/media/live/${t.id}/${id}/nothing.m3u8`)).status).toBe(404);
    const preflight = await fetch(`${p.baseUrl}/media/live/${t.id}/${id}/master.m3u8`, { method: 'OPTIONS' });
    expect(preflight.status).toBe(204);
    // Deleting the channel removes its files.
    expect((await t.json('DELETE', `/live/v1/channels/${id}`)).status).toBe(200);
    expect(await p.ctx.store.head(`${prefix}master.m3u8`)).toBeUndefined();
  });

  it("answers 404 for another tenant's channel on every route and never shows its stream key", async () => {
    const id = (await other.json('POST', '/live/v1/channels', fullBody())).body.id;
    const otherKey = (await other.json('GET', `/live/v1/channels/${id}/configuration`)).body.input.transportPrimaryIngestUrl.split('/').pop();
    const routes: [string, string, unknown?][] = [
      ['GET', `/live/v1/channels/${id}`],
      ['PATCH', `/live/v1/channels/${id}`, { name: 'stolen' }],
      ['DELETE', `/live/v1/channels/${id}`],
      ['POST', `/live/v1/channels/${id}/start`],
      ['POST', `/live/v1/channels/${id}/stop`],
      ['POST', `/live/v1/channels/${id}/stream-key/rotate`],
      ['GET', `/live/v1/channels/${id}/status`],
      ['GET', `/live/v1/channels/${id}/stats`],
      ['GET', `/live/v1/channels/${id}/configuration`],
    ];
    for (const [method, path, body] of routes) {
      const res = await t.json(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.status.code).toBe('channel_not_found');
    }
    expect((await t.json('GET', `/live/v1/channelsstatus?ids=${id}`)).body).toEqual([]);
    const mine = (await t.json('GET', `/live/v1/channels?ids=${id}`)).body;
    expect(mine.totalCount).toBe(0);
    const everything = JSON.stringify((await t.json('GET', '/live/v1/channels?limit=1000')).body);
    expect(everything).not.toContain(otherKey);
    expect(everything).not.toContain(id);
    // Untouched by all of the above.
    expect((await other.json('GET', `/live/v1/channels/${id}`)).body).toMatchObject({ name: 'Studio A', status: 'Off' });
    expect((await other.json('GET', `/live/v1/channels/${id}/configuration`)).body.input.transportPrimaryIngestUrl).toContain(otherKey);
  });

  it('refuses writes to Viewer keys and shows them the stream key masked', async () => {
    const key = await t.json('POST', '/core/v1/api-key', { name: 'viewer', roleType: 'Viewer' });
    expect(key.status).toBe(200);
    const viewer = tenantClient(p.baseUrl, t.id, t.name, key.body.key);
    expect((await viewer.json('POST', '/live/v1/channels', minimal('nope'))).status).toBe(403);
    const id = (await t.json('POST', '/live/v1/channels', minimal('Viewed'))).body.id;
    expect((await viewer.json('POST', `/live/v1/channels/${id}/start`)).status).toBe(403);
    const real = (await t.json('GET', `/live/v1/channels/${id}/configuration`)).body.input.transportPrimaryIngestUrl as string;
    const seen = (await viewer.json('GET', `/live/v1/channels/${id}/configuration`)).body.input.transportPrimaryIngestUrl as string;
    expect(seen).toBe(real.replace(/[^/]+$/, '********'));
    expect((await viewer.json('GET', `/live/v1/channels/${id}`)).body.inputs[0].destinations[0].url).toBe(seen);
    expect(JSON.stringify((await viewer.json('GET', '/live/v1/channels?limit=1000')).body)).not.toContain(real.split('/').pop());
  });
});
