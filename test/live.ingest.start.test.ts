import { afterAll, beforeAll, expect, it } from 'vitest';
import { pushEncoder } from './helpers/live.ts';
import { describeOnDb, startInProcess, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { freePort } from './helpers/process.ts';
import { until } from './helpers/until.ts';

/**
 * An encoder may connect from the moment its channel is started: the RTMP port is open from the live process's start
 * (not from its first channel), and a key the runner has not claimed yet is claimed at connect. Refusals say why in the
 * protocol (ffmpeg prints the server's reason): an unknown key, a channel that is off.
 */
describeOnDb('pglite', 'RTMP ingest from the moment of start', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let rtmpPort: number;
  const encoders: ReturnType<typeof pushEncoder>[] = [];

  beforeAll(async () => {
    rtmpPort = await freePort();
    p = await startInProcess(kind, {
      MEDIAPLANE_RTMP_HOST: '127.0.0.1',
      MEDIAPLANE_RTMP_PORT: String(rtmpPort),
      MEDIAPLANE_LIVE_SEGMENT_SECONDS: '1',
      // Slow passes: an encoder that connects right after `start` comes long before the pass that would claim it.
      MEDIAPLANE_LIVE_POLL_MS: '8000',
    });
    t = await p.createTenant();
  });
  afterAll(async () => {
    await Promise.all(encoders.map((e) => e.stop()));
    await p?.stop();
  });

  const channel = async (name: string) => {
    const id = (
      await t.json('POST', '/live/v1/channels', {
        name,
        input: { inputLoss: { type: 'COLOR', color: '#1060C0' } },
        qualities: [{ resolution: '180p', frameRate: 25 }],
      })
    ).body.id as string;
    const conf = (await t.json('GET', `/live/v1/channels/${id}/configuration`)).body;
    return { id, url: (conf.input.transportPrimaryIngestUrl as string).replace('localhost', '127.0.0.1') };
  };
  const push = (url: string) => {
    const e = pushEncoder(url, { size: '160x90', seconds: 120 });
    encoders.push(e);
    return e;
  };
  const inputConnected = (id: string) =>
    until(
      async () => (await t.json('GET', `/live/v1/channels/${id}`)).body.internalStatus as string | null,
      (s) => s === 'InputConnected',
      {
        timeoutMs: 90_000,
        what: 'the encoder connected to the channel',
      },
    );

  it('refuses an unknown key and an Off channel with the reason, and takes an encoder right after start', async () => {
    const a = await channel('first');
    const b = await channel('second');
    expect(a.url).toContain(`:${rtmpPort}/live/`);

    // No channel runs in the process yet: the port is open all the same, and the refusal says why.
    const unknown = push(a.url.replace(/[^/]+$/, 'no-such-key'));
    expect(await unknown.exited).not.toBe(0);
    expect(unknown.stderr()).toMatch(/unknown stream key/);
    const off = push(a.url);
    expect(await off.exited).not.toBe(0);
    expect(off.stderr()).toMatch(/the channel is Off/);

    // The process's first channel: the encoder connects right after `start`, before any pass claimed the channel.
    expect((await t.call('POST', `/live/v1/channels/${a.id}/start`)).status).toBe(200);
    const first = push(a.url);
    await inputConnected(a.id);
    expect(first.child.exitCode).toBeNull();

    // Another channel while one runs (the port was open already): its key is not known to the runner yet.
    expect((await t.call('POST', `/live/v1/channels/${b.id}/start`)).status).toBe(200);
    const second = push(b.url);
    await inputConnected(b.id);
    expect(second.child.exitCode).toBeNull();
    expect(first.child.exitCode).toBeNull();
  }, 240_000);
});
