import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, startInProcess, type TestPlatform, type TestTenant } from './helpers/platform.ts';

/**
 * What a channel's configuration says about its inputs: the SRT address (a port pair per channel from
 * MEDIAPLANE_SRT_PORT_MIN..MAX, the stream key as passphrase), the secondary input of `DoubleInput`, masking for
 * read-only keys, and running out of SRT ports. The media side is test/live.inputs.test.ts.
 */
describeEachDb('Live channel inputs (API)', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  const MIN = 9400;

  beforeAll(async () => {
    p = await startInProcess(kind, {
      MEDIAPLANE_PUBLIC_URL: 'https://media.example.com',
      MEDIAPLANE_RTMP_PUBLIC_URL: 'rtmp://ingest.example.com:1935/live',
      MEDIAPLANE_SRT_PUBLIC_HOST: 'srt.example.com',
      MEDIAPLANE_SRT_PORT_MIN: String(MIN),
      MEDIAPLANE_SRT_PORT_MAX: String(MIN + 3),
    });
    t = await p.createTenant();
  });
  afterAll(async () => {
    await p?.stop();
  });

  const create = async (body: object) => {
    const res = await t.json('POST', '/live/v1/channels', { name: 'inputs', input: { inputLoss: { type: 'COLOR' } }, ...body });
    return res;
  };
  const configuration = async (id: string, who: TestTenant = t) => (await who.json('GET', `/live/v1/channels/${id}/configuration`)).body;

  it('shows SRT and secondary ingest addresses, masks them for Viewer keys, and runs out of SRT port pairs with 409', async () => {
    // RTMP, DoubleInput: the secondary is the key with -backup, on the same RTMP address.
    const rtmp = (await create({ redundancy: 'DoubleInput' })).body.id as string;
    const rtmpConf = await configuration(rtmp);
    expect(rtmpConf.input.transportPrimaryIngestUrl).toMatch(/^rtmp:\/\/ingest\.example\.com:1935\/live\/[A-Za-z0-9_-]{32}$/);
    expect(rtmpConf.input.transportSecondaryIngestUrl).toBe(`${rtmpConf.input.transportPrimaryIngestUrl}-backup`);
    const rtmpChannel = (await t.json('GET', `/live/v1/channels/${rtmp}`)).body;
    expect(rtmpChannel.inputs.map((i: { id: string; destinations: { url: string }[] }) => [i.id, i.destinations[0]!.url])).toEqual([
      ['primary', rtmpConf.input.transportPrimaryIngestUrl],
      ['secondary', rtmpConf.input.transportSecondaryIngestUrl],
    ]);

    // SRT: the first port pair; DoubleInput's secondary on the pair's second port.
    const srt = (await create({ redundancy: 'DoubleInput', input: { transportInputProtocol: 'SRT', inputLoss: { type: 'COLOR' } } })).body.id as string;
    const srtConf = await configuration(srt);
    expect(srtConf.input.transportInputProtocol).toBe('SRT');
    expect(srtConf.input.transportPrimaryIngestUrl).toMatch(new RegExp(`^srt://srt\\.example\\.com:${MIN}\\?streamid=${srt}&passphrase=[A-Za-z0-9_-]{32}$`));
    const passphrase = new URL(srtConf.input.transportPrimaryIngestUrl).searchParams.get('passphrase')!;
    expect(srtConf.input.transportSecondaryIngestUrl).toBe(`srt://srt.example.com:${MIN + 1}?streamid=${srt}-backup&passphrase=${passphrase}`);

    // A Viewer key sees the passphrase masked, everywhere.
    const key = await t.json('POST', '/core/v1/api-key', { name: 'viewer', roleType: 'Viewer' });
    const viewer = p.client(t.id, t.name, key.body.key);
    const seen = await configuration(srt, viewer);
    expect(seen.input.transportPrimaryIngestUrl).toBe(srtConf.input.transportPrimaryIngestUrl.replace(passphrase, '********'));
    expect(JSON.stringify((await viewer.json('GET', '/live/v1/channels?limit=1000')).body)).not.toContain(passphrase);

    // A rotated key is the new passphrase, on the same port.
    const rotated = (await t.json('POST', `/live/v1/channels/${srt}/stream-key/rotate`)).body.transportPrimaryIngestUrl as string;
    expect(rotated).toMatch(new RegExp(`^srt://srt\\.example\\.com:${MIN}\\?streamid=${srt}&passphrase=`));
    expect(rotated).not.toContain(passphrase);

    // The range holds two pairs: the third SRT channel is refused; an RTMP channel turning SRT takes the second pair,
    // and one going back to RTMP gives its pair back.
    const second = (await create({ input: { transportInputProtocol: 'SRT', inputLoss: { type: 'COLOR' } } })).body.id as string;
    expect((await configuration(second)).input.transportPrimaryIngestUrl).toContain(`:${MIN + 2}?`);
    const refused = await create({ input: { transportInputProtocol: 'SRT', inputLoss: { type: 'COLOR' } } });
    expect(refused.status).toBe(409);
    expect(refused.body.status.code).toBe('srt_ports_exhausted');
    expect((await t.json('PATCH', `/live/v1/channels/${srt}`, { input: { transportInputProtocol: 'RTMP', inputLoss: { type: 'COLOR' } } })).status).toBe(200);
    expect((await configuration(srt)).input.transportPrimaryIngestUrl).toMatch(/^rtmp:\/\//);
    expect((await t.json('PATCH', `/live/v1/channels/${rtmp}`, { input: { transportInputProtocol: 'SRT', inputLoss: { type: 'COLOR' } } })).status).toBe(200);
    expect((await configuration(rtmp)).input.transportPrimaryIngestUrl).toContain(`:${MIN}?streamid=${rtmp}&`);
  });
});
