import { afterAll, beforeAll, expect, it } from 'vitest';
import { PRESETS, type Preset } from '../src/modules/transcoder/presets.ts';
import { describeEachDb, startInProcess, type TestPlatform, type TestTenant } from './helpers/platform.ts';

const FIELDS = ['allowedExtensionsFile', 'createsDownload', 'description', 'hasVerticalOrientation', 'id', 'mediaType', 'name', 'noTranscoding'];

describeEachDb('Transcoder presets', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let all: any[];
  const list = async (qs = '') => {
    const res = await t.json('GET', `/transcoder/v1/presets${qs}`);
    expect(res.status, qs).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    p = await startInProcess(kind);
    t = await p.createTenant();
    all = (await list()).items;
  });
  afterAll(() => p.stop());

  it('every preset carries every spec field, typed as the spec says', () => {
    expect(all.length).toBe(PRESETS.length);
    for (const preset of all) {
      // Beyond the spec (responses may grow): `protection` on the presets that make DRM endpoints.
      expect(
        Object.keys(preset)
          .filter((k) => k !== 'protection')
          .sort(),
      ).toEqual(FIELDS);
      expect(typeof preset.id).toBe('string');
      expect(preset.name.length).toBeGreaterThan(0);
      expect(preset.description.length).toBeGreaterThan(0);
      expect(typeof preset.createsDownload).toBe('boolean');
      expect(['video', 'audio']).toContain(preset.mediaType);
      expect(typeof preset.noTranscoding).toBe('boolean');
      expect(typeof preset.hasVerticalOrientation).toBe('boolean');
      expect(preset.allowedExtensionsFile.length).toBeGreaterThan(0);
      for (const ext of preset.allowedExtensionsFile) expect(ext).toMatch(/^\.[a-z0-9]+$/);
    }
    expect(new Set(all.map((x) => x.id)).size).toBe(all.length);
  });

  it('the catalogue holds HLS, DASH, CMAF (HLS+DASH), MP4 download, audio-only, remux-only and vertical presets', () => {
    const served = (pred: (preset: Preset) => boolean) => {
      const ids = PRESETS.filter(pred).map((x) => x.id);
      return all.filter((x) => ids.includes(x.id));
    };
    const video = (x: Preset) => x.mediaType === 'video' && !x.noTranscoding && !x.hasVerticalOrientation;
    expect(served((x) => video(x) && x.packaging.includes('hls') && x.ladder.length > 1).length).toBeGreaterThan(0);
    expect(served((x) => video(x) && x.packaging.includes('dash') && x.ladder.length > 1).length).toBeGreaterThan(0);
    expect(served((x) => video(x) && x.packaging.includes('cmaf')).length).toBeGreaterThan(0);
    const downloads = served((x) => x.packaging.includes('mp4'));
    expect(downloads.length).toBeGreaterThan(0);
    for (const d of downloads) expect(d.createsDownload).toBe(true);
    const audio = all.filter((x) => x.mediaType === 'audio');
    expect(audio.length).toBeGreaterThan(0);
    for (const a of audio) expect(a.allowedExtensionsFile).toEqual(expect.arrayContaining(['.mp3', '.wav']));
    expect(all.filter((x) => x.noTranscoding)).not.toHaveLength(0);
    expect(all.filter((x) => x.hasVerticalOrientation)).not.toHaveLength(0);
    // The API shows the catalogue as it is: the flags come from the data.
    for (const x of all) {
      const source = PRESETS.find((s) => s.id === x.id)!;
      expect(x).toEqual({
        id: source.id,
        name: source.name,
        description: source.description,
        createsDownload: source.createsDownload,
        mediaType: source.mediaType,
        noTranscoding: source.noTranscoding,
        hasVerticalOrientation: source.hasVerticalOrientation,
        allowedExtensionsFile: [...source.allowedExtensionsFile],
        ...(source.protection ? { protection: source.protection } : {}),
      });
    }
  });

  it('pages with limit and page (defaults 100 and 1)', async () => {
    const body = await list();
    expect(body).toMatchObject({ totalCount: all.length, pageCount: 1, pageSize: 100, pageNumber: 1, hasMore: false });
    const first = await list('?limit=2');
    expect(first).toMatchObject({ totalCount: all.length, pageCount: Math.ceil(all.length / 2), pageSize: 2, pageNumber: 1, hasMore: true });
    expect(first.items.map((x: any) => x.id)).toEqual(all.slice(0, 2).map((x) => x.id));
    const lastPage = Math.ceil(all.length / 2);
    const last = await list(`?limit=2&page=${lastPage}`);
    expect(last.hasMore).toBe(false);
    expect(last.items.map((x: any) => x.id)).toEqual(all.slice((lastPage - 1) * 2).map((x) => x.id));
    expect((await list(`?limit=2&page=${lastPage + 1}`)).items).toEqual([]);
    for (const qs of ['?limit=0', '?limit=1001', '?page=0', '?limit=x']) {
      const res = await t.json('GET', `/transcoder/v1/presets${qs}`);
      expect(res.status, qs).toBe(400);
      expect(res.body.errors[0].field).toBe(qs.slice(1, qs.indexOf('=')));
    }
  });

  it('filters by mediaType (video or audio, case-insensitive); an unknown type is 400 naming mediaType', async () => {
    const audio = await list('?mediaType=audio');
    expect(audio.totalCount).toBe(all.filter((x) => x.mediaType === 'audio').length);
    for (const x of audio.items) expect(x.mediaType).toBe('audio');
    const video = await list('?mediaType=Video');
    expect(video.totalCount).toBe(all.filter((x) => x.mediaType === 'video').length);
    expect(audio.totalCount + video.totalCount).toBe(all.length);
    for (const x of video.items) expect(x.mediaType).toBe('video');
    const unknown = await t.json('GET', '/transcoder/v1/presets?mediaType=hologram');
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([{ field: 'mediaType', message: 'must be one of video, audio (not "hologram")' }]);
  });

  it('every role can read presets; without credentials it is 401', async () => {
    const viewer = (await t.json('POST', '/core/v1/api-key', { name: 'v', roleType: 'Viewer' })).body.key;
    expect((await p.client(t.id, t.name, viewer).call('GET', '/transcoder/v1/presets')).status).toBe(200);
    const anon = await p.fetch(`${p.baseUrl}/transcoder/v1/presets`);
    expect(anon.status).toBe(401);
  });
});
