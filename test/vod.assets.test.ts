import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeClip, tempDir } from './helpers/media.ts';
import { and, eq } from 'drizzle-orm';
import { storageDeletions } from '../src/db/storageDeletions.ts';
import { vodOutputs } from '../src/modules/vod/assets/tables.ts';
import { describeEachDb, startPlatform, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { uploadFile } from './helpers/upload.ts';
import { until } from './helpers/until.ts';

const run = promisify(execFile);
const { dir } = tempDir('mediaplane-assets-');

/** Opens a URL like a player would. Asynchronous: the server answering it runs in this process. */
async function ffprobe(url: string): Promise<{ streams: any[]; format: any }> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-allowed_extensions', 'ALL', '-show_streams', '-show_format', '-of', 'json', url]);
  return JSON.parse(stdout);
}

async function waitAsset(t: TestTenant, id: string, statuses = ['Available', 'Error'], timeoutMs = 90_000) {
  return (
    await until(
      () => t.json('GET', `/vod/v1/assets/${id}`),
      (r) => statuses.includes(r.body?.status),
      { timeoutMs },
    )
  ).body;
}

describeEachDb('VOD assets', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let other: TestTenant;
  let fileId: string;
  let tracks: any[];

  beforeAll(async () => {
    p = await startPlatform(kind, { MEDIAPLANE_SWEEP_INTERVAL_MS: '500' });
    t = await p.createTenant();
    other = await p.createTenant();
    fileId = await uploadFile(t, await makeClip(dir, 'clip', { width: 640, height: 360, seconds: 3 })); // audio eng (1), fra (2)
    tracks = (await t.json('POST', `/vod/v1/files/${fileId}/detect`)).body.tracks;
  });
  afterAll(() => p.stop());

  const audioTrack = (lang: string) => tracks.find((x) => x.type === 'Audio' && x.language === lang);

  it('transcodes an HLS ladder capped at the source height, with the listed audio track, and serves it to a player', async () => {
    const create = await t.json('POST', '/vod/v1/assets', {
      transcodedSources: [{ fileId, transcodingTracks: [audioTrack('fra')] }],
      preset: 'hls-h264-ladder',
      title: 'Clip',
      metadata: { title: 'Clip' },
      tags: ['demo'],
      attributes: ['genre=test'],
    });
    expect(create.status).toBe(200);
    const id = create.body.id;
    const asset = await waitAsset(t, id);
    expect(asset.status).toBe('Available');
    expect(asset.errorMessage).toBeNull();
    expect(asset.preset).toBe('hls-h264-ladder');
    expect(asset.tenantId).toBe(t.id);
    expect(asset.fileIds).toEqual({ [fileId]: 'Video' });
    expect(asset.sources[0].transcodingTracks.map((x: any) => x.type)).toEqual(['Video', 'Audio']);
    expect(asset.durationMilliseconds).toBeGreaterThan(2800);
    expect(asset.durationMilliseconds).toBeLessThan(3300);
    expect(asset.outputs).toHaveLength(1);
    expect(asset.outputs[0]).toMatchObject({ status: 'Available', preset: 'hls-h264-ladder', expirationDate: null });
    expect(asset.transcodedJobId).toEqual(expect.any(String));
    const [hls] = asset.endpoints;
    expect(hls).toMatchObject({ accessType: 'Http', format: 'HLS', protection: 'None', preset: 'hls-h264-ladder' });
    expect(hls.size).toBeGreaterThan(10_000);
    const probe = await ffprobe(hls.url);
    const heights = probe.streams.filter((s) => s.codec_type === 'video').map((s) => s.height);
    // 640x360 source: the 1080p and 720p rungs would upscale, so the ladder keeps 360p (and any rung below it).
    expect(Math.max(...heights)).toBe(360);
    expect(probe.streams.some((s) => s.codec_type === 'audio')).toBe(true);
    expect(Number(probe.format.duration)).toBeGreaterThan(2.5);
    const res = await fetch(hls.url, { headers: { origin: 'http://player.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('content-type')).toBe('application/vnd.apple.mpegurl');
    // The transcode is measured for /metrics: its wall time and speed (about 3 s of media), by preset.
    const seconds = (await p.ctx.metrics.transcodeSeconds.get()).values.find(
      (v) => v.metricName === 'mediaplane_transcode_seconds_count' && v.labels.preset === 'hls-h264-ladder',
    );
    expect(seconds?.value).toBeGreaterThanOrEqual(1);
    const speed = (await p.ctx.metrics.transcodeSpeed.get()).values.find(
      (v) => v.metricName === 'mediaplane_transcode_speed_ratio_sum' && v.labels.preset === 'hls-h264-ladder',
    );
    expect(speed?.value).toBeGreaterThan(0);
  });

  it('mutes the output when no audio track is listed', async () => {
    const { body } = await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'mp4-h264-download' });
    const asset = await waitAsset(t, body.id);
    expect(asset.status).toBe('Available');
    const mp4 = asset.endpoints.find((e: any) => e.format === 'MP4');
    const probe = await ffprobe(mp4.url);
    expect(probe.streams.filter((s) => s.codec_type === 'audio')).toHaveLength(0);
    expect(probe.streams.find((s) => s.codec_type === 'video').height).toBe(360);
    const range = await fetch(mp4.url, { headers: { range: 'bytes=0-99' } });
    expect(range.status).toBe(206);
    expect((await range.arrayBuffer()).byteLength).toBe(100);
  });

  it('reports progress rising to 100 while ffmpeg runs', async () => {
    const { body } = await t.json('POST', '/vod/v1/assets', {
      transcodedSources: [{ fileId, transcodingTracks: [audioTrack('eng')] }],
      preset: 'dash-h264-ladder',
    });
    const seen: number[] = [];
    let outputId: string | undefined;
    await until(
      async () => {
        const a = (await t.json('GET', `/vod/v1/assets/${body.id}`)).body;
        outputId ??= a.outputs[0]?.id;
        if (outputId) seen.push((await t.json('GET', `/vod/v1/assets/${body.id}/outputs/${outputId}/progress`)).body.progressPercent);
        return a.status;
      },
      (s) => s === 'Available' || s === 'Error',
      { timeoutMs: 90_000, everyMs: 100 },
    );
    const final = (await t.json('GET', `/vod/v1/assets/${body.id}/outputs/${outputId}/progress`)).body.progressPercent;
    expect(final).toBe(100);
    expect(seen.every((v, i) => i === 0 || v >= seen[i - 1])).toBe(true);
    const many = await t.json('POST', '/vod/v1/assets/outputs/progress', [{ id: body.id, outputs: [{ id: outputId }] }]);
    expect(many.body).toEqual([{ id: body.id, outputs: [{ id: outputId, progressPercent: 100 }] }]);
    const asset = (await t.json('GET', `/vod/v1/assets/${body.id}`)).body;
    const dash = asset.endpoints.find((e: any) => e.format === 'DASH');
    expect(dash.url).toMatch(/\.mpd$/);
    expect((await ffprobe(dash.url)).streams.some((s) => s.codec_type === 'audio')).toBe(true);
  });

  it('refuses an asset from a corrupt source at once, with a useful message', async () => {
    const bad = join(dir, 'corrupt.mp4');
    writeFileSync(bad, Buffer.concat([Buffer.from('not really a video '), Buffer.alloc(50_000, 7)]));
    const badId = await uploadFile(t, bad);
    const create = await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId: badId }], preset: 'hls-h264-ladder' });
    expect(create.status).toBe(400);
    expect(create.body.status.code).toBe('file_not_media');
    expect(create.body.status.message).toMatch(/media|read|invalid/i);
    expect(create.body.status.message).not.toContain(p.config.dataDir);
    expect(create.body.errors).toEqual([{ field: 'transcodedSources[0].fileId', message: 'is not a media file' }]);
  });

  it('adds and removes outputs, and sweeps an expired output with its files', async () => {
    const { body } = await t.json('POST', '/vod/v1/assets', {
      transcodedSources: [{ fileId, transcodingTracks: [audioTrack('eng')] }],
      preset: 'mp4-h264-download',
    });
    await waitAsset(t, body.id);
    const add = await t.json('POST', `/vod/v1/assets/${body.id}/outputs`, { preset: 'audio-aac', id: 'audio' });
    expect(add).toEqual({ status: 200, body: { outputId: 'audio' } });
    expect((await t.json('POST', `/vod/v1/assets/${body.id}/outputs`, { preset: 'audio-aac', id: 'audio' })).status).toBe(409);
    expect((await t.json('POST', `/vod/v1/assets/${body.id}/outputs`, { preset: 'no-such-preset' })).status).toBe(400);
    const ready = await until(
      () => t.json('GET', `/vod/v1/assets/${body.id}`),
      (r) => r.body.outputs.find((o: any) => o.id === 'audio')?.status === 'Available',
      { timeoutMs: 90_000 },
    );
    const audio = ready.body.outputs.find((o: any) => o.id === 'audio');
    const m4a = audio.endpoints.find((e: any) => e.format === 'MP4');
    expect((await ffprobe(m4a.url)).streams.map((s: any) => s.codec_type)).toEqual(['audio']);

    expect((await t.json('DELETE', `/vod/v1/assets/${body.id}/outputs/audio`)).status).toBe(200);
    expect((await fetch(m4a.url)).status).toBe(404);
    expect((await t.json('GET', `/vod/v1/assets/${body.id}`)).body.outputs.map((o: any) => o.id)).not.toContain('audio');
    expect((await t.json('DELETE', `/vod/v1/assets/${body.id}/outputs/audio`)).status).toBe(404);

    const expiresAt = new Date(Date.now() + 3600_000).toISOString();
    const expiring = await t.json('POST', `/vod/v1/assets/${body.id}/outputs`, { preset: 'audio-aac', id: 'short', expirationDate: expiresAt });
    expect(expiring.status).toBe(200);
    // Made, with its expiration as given; then made due here rather than in an hour: the sweep removes it with its files.
    const made = await until(
      () => t.json('GET', `/vod/v1/assets/${body.id}`),
      (r) => ['Available', 'Error'].includes(r.body.outputs.find((o: any) => o.id === 'short')?.status),
      { timeoutMs: 90_000 },
    );
    const short = made.body.outputs.find((o: any) => o.id === 'short');
    expect(short).toMatchObject({ status: 'Available', expirationDate: expiresAt });
    // The stored file its MP4 endpoint serves (the URL's path below the asset is the key's below the asset's prefix).
    const shortKey = `tenants/${t.id}/vod/${body.id}/${new URL(short.endpoints.find((e: any) => e.format === 'MP4').url).pathname.split(`/${body.id}/`)[1]}`;
    expect(await p.ctx.store.head(shortKey), shortKey).toBeDefined();
    await p.ctx.db
      .update(vodOutputs)
      .set({ expirationDate: new Date(Date.now() - 1000) })
      .where(and(eq(vodOutputs.assetId, body.id), eq(vodOutputs.id, 'short')));
    const gone = await until(
      () => t.json('GET', `/vod/v1/assets/${body.id}`),
      (r) => !r.body.outputs.some((o: any) => o.id === 'short'),
      { timeoutMs: 60_000 },
    );
    expect(gone.body.outputs.map((o: any) => o.id)).toHaveLength(1);
    // The row goes first, in the transaction with its event; the files right after it commits.
    await until(
      () => p.ctx.store.head(shortKey),
      (h) => h === undefined,
      { timeoutMs: 10_000, what: `${shortKey} deleted` },
    );
    // Deleted again later, as a user's deletion is, whatever a worker may still write there.
    const pending = await p.ctx.db.select().from(storageDeletions);
    expect(pending.map((d) => d.prefix)).toContain(`tenants/${t.id}/vod/${body.id}/short/`);
  });

  it('lists, filters, updates and deletes assets', async () => {
    const list = await t.json(
      'GET',
      `/vod/v1/assets?statuses=Available&presets=hls-h264-ladder,dash-h264-ladder&tags=demo&attributes=[genre]=test&sort=CreateDate&desc=true`,
    );
    expect(list.status).toBe(200);
    expect(list.body.items.length).toBeGreaterThanOrEqual(1);
    expect(list.body.items.every((a: any) => a.status === 'Available' && a.preset === 'hls-h264-ladder')).toBe(true);
    const id = list.body.items[0].id;
    expect((await t.json('GET', `/vod/v1/assets?fileId=${fileId}&durationFrom=1000&durationTo=10000`)).body.totalCount).toBeGreaterThanOrEqual(4);
    expect((await t.json('GET', '/vod/v1/assets?durationFrom=999999')).body.totalCount).toBe(0);
    expect((await t.json('GET', '/vod/v1/assets?sort=Bogus')).status).toBe(400);

    const policy = '0190b0a0-0000-7000-8000-0000000000aa';
    const patched = await t.json('PATCH', `/vod/v1/assets/${id}`, { title: 'Renamed', accessPolicyId: policy });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id, title: 'Renamed', distribution: { accessPolicyId: policy }, tags: ['demo'] });
    expect((await t.json('PATCH', `/vod/v1/assets/${id}`, { tags: ['x'] })).body.distribution.accessPolicyId).toBe(policy);
    expect((await t.json('PATCH', `/vod/v1/assets/${id}`, { accessPolicyId: null })).body.distribution.accessPolicyId).toBeNull();

    const file = (await t.json('GET', `/vod/v1/files/${fileId}`)).body;
    expect(file.vodAssets).toContain(id);
    const hlsUrl = (await t.json('GET', `/vod/v1/assets/${id}`)).body.endpoints[0].url;
    expect((await t.json('DELETE', `/vod/v1/assets/${id}`)).status).toBe(200);
    expect((await t.json('GET', `/vod/v1/assets/${id}`)).status).toBe(404);
    expect((await fetch(hlsUrl)).status).toBe(404);
    expect((await t.json('GET', `/vod/v1/files/${fileId}`)).body.vodAssets).not.toContain(id);
    const many = await t.json('POST', '/vod/v1/assets/deletemany', [id, '0190b0a0-0000-7000-8000-000000000bad']);
    expect(many.body[id].success).toBe(false);
    expect(many.body[id].status.status).toBe(404);
  });

  it('keeps tenants apart on every route and on media URLs', async () => {
    const { body } = await t.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'mp4-h264-download' });
    for (const [method, path, payload] of [
      ['GET', `/vod/v1/assets/${body.id}`],
      ['PATCH', `/vod/v1/assets/${body.id}`, { title: 'x' }],
      ['DELETE', `/vod/v1/assets/${body.id}`],
      ['POST', `/vod/v1/assets/${body.id}/outputs`, { preset: 'audio-aac' }],
      ['GET', `/vod/v1/assets/${body.id}/outputs/x/progress`],
    ] as const) {
      const res = await other.json(method, path, payload);
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const list = await other.json('GET', '/vod/v1/assets');
    expect(list.body.totalCount).toBe(0);
    const foreignSource = await other.json('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset: 'hls-h264-ladder' });
    expect(foreignSource.status).toBe(404);
  });
});
