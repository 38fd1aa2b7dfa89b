import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { playLive, pushEncoder, startLivePlayback, type Encoder, type LivePlayer } from './helpers/live.ts';
import { endpointOf, liveChannels } from './helpers/commands.ts';
import { describeOnDb, type TestPlatform, type TestTenant } from './helpers/platform.ts';
import { until } from './helpers/until.ts';

/**
 * A channel's stop ends its stream: its media playlists get `#EXT-X-ENDLIST` and its MPD turns static, so hls.js and
 * dash.js, watching, reach `ended`. The next start continues the same playlists after a discontinuity (numbering goes
 * on), live again, and a new viewer plays it.
 */
describeOnDb('pglite', 'Stopping a live channel', (kind) => {
  let p: TestPlatform;
  let t: TestTenant;
  let browser: Browser;
  let page: { url: string; close(): Promise<void> };
  let encoder: Encoder | undefined;
  const players: LivePlayer[] = [];

  beforeAll(async () => {
    ({ p, browser, page } = await startLivePlayback(kind));
    t = await p.createTenant();
  });
  afterAll(async () => {
    await encoder?.stop();
    await Promise.all(players.map((x) => x.close().catch(() => {})));
    await Promise.all([browser?.close(), page?.close()]);
    await p?.stop();
  });

  it('ends the playlists and the MPD at stop, players reach ended, and the next start goes on live after a discontinuity', async () => {
    const live = liveChannels(t);
    const { id } = await live.create({
      name: 'stops',
      input: { inputLoss: { type: 'COLOR', color: '#1060C0' } },
      qualities: [{ resolution: '180p', frameRate: 25 }],
    });
    await live.start(id);
    await live.waitStatus(id, 'On');
    encoder = pushEncoder(await live.ingestUrl(id));
    const ch = await live.get(id);
    const hls = endpointOf(ch, 'HLS').url;
    const dash = endpointOf(ch, 'DASH').url;
    const text = async (url: string) => (await p.fetch(url)).text();
    const rung = hls.replace(/master\.m3u8$/, '180p.m3u8');
    const segmentsIn = (playlist: string) => playlist.split('\n').filter((l) => l.endsWith('.m4s')).length;
    await until(
      () => text(rung),
      (pl) => segmentsIn(pl) >= 4,
      { timeoutMs: 60_000, what: 'a window to play' },
    );
    expect(await text(rung)).not.toContain('#EXT-X-ENDLIST');
    expect(await text(dash)).toContain('type="dynamic"');

    players.push(await playLive(browser, page.url, hls, 'hls'), await playLive(browser, page.url, dash, 'dash'));
    const from = await Promise.all(players.map((x) => x.state()));
    await until(
      () => Promise.all(players.map((x) => x.state())),
      (now) => now.every((s, i) => !s.error && s.currentTime > from[i]!.currentTime + 1),
      { timeoutMs: 60_000, what: 'both players playing' },
    );

    await live.stop(id);
    await live.waitStatus(id, 'Off');
    const ended = await text(rung);
    expect(ended.trimEnd().endsWith('#EXT-X-ENDLIST')).toBe(true);
    const endedAudio = await text(hls.replace(/master\.m3u8$/, 'audio.m3u8'));
    expect(endedAudio).toContain('#EXT-X-ENDLIST');
    const tail = (playlist: string) => playlist.split('\n').slice(-8).join(' | ');
    const mpd = await text(dash);
    expect(mpd).toContain('type="static"');
    expect(mpd).toMatch(/mediaPresentationDuration="PT[\d.]+S"/);
    expect(mpd).not.toContain('minimumUpdatePeriod');
    // Players that were watching play to the end of what was published, and stop there without an error.
    const last = await until(
      () => Promise.all(players.map((x) => x.state())),
      (now) => now.some((s) => s.error) || now.every((s) => s.ended),
      { timeoutMs: 90_000, everyMs: 250, what: () => `hls.js and dash.js reaching the end of ${tail(ended)} and ${tail(endedAudio)}` },
    );
    for (const s of last) {
      expect(s.error).toBeUndefined();
      expect(s.ended).toBe(true);
    }
    await Promise.all(players.splice(0).map((x) => x.close()));
    await encoder.stop();

    // The next start: the same playlists go on, live again, after a discontinuity; numbering continues.
    const lastSequence = Math.max(...[...ended.matchAll(/^180p\/(\d+)\.m4s$/gm)].map((m) => Number(m[1])));
    await live.start(id);
    await live.waitStatus(id, 'On');
    const resumed = await until(
      () => text(rung),
      (pl) => !pl.includes('#EXT-X-ENDLIST') && new RegExp(`^180p/${lastSequence + 3}\\.m4s$`, 'm').test(pl),
      { timeoutMs: 60_000, what: 'the playlist going on live' },
    );
    const afterStop = resumed.split(`180p/${lastSequence}.m4s`)[1];
    if (afterStop !== undefined) expect(afterStop).toMatch(/^\s*#EXT-X-DISCONTINUITY$/m);
    else expect(Number(/#EXT-X-DISCONTINUITY-SEQUENCE:(\d+)/.exec(resumed)![1])).toBeGreaterThan(0);
    expect(await text(dash)).toContain('type="dynamic"');
    const viewer = await playLive(browser, page.url, hls, 'hls');
    players.push(viewer);
    const start = await viewer.state();
    const now = await until(
      () => viewer.state(),
      (s) => !!s.error || s.currentTime > start.currentTime + 2,
      {
        timeoutMs: 60_000,
        what: 'a new viewer playing the restarted channel',
      },
    );
    expect(now.error).toBeUndefined();
    expect(now.ended).toBe(false);
  }, 300_000);
});
