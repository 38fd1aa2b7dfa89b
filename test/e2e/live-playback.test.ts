import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRtmpIngest, type LivePipeline, type LivePipelineEvent, type RtmpIngest } from '../../src/media/live/index.ts';
import { launchBrowser, serveDirectory, servePlayerPage, type StaticServer } from '../helpers/browser.ts';
import {
  localPipeline,
  newestSegment,
  playLive,
  pushEncoder,
  quietLog,
  readPlaylist,
  segmentsOf,
  TINY_LADDER,
  waitFor,
  type LivePlayer,
} from '../helpers/live.ts';
import { tempDir } from '../helpers/media.ts';
import { until } from '../helpers/until.ts';

const KEY = 'e2e-key';
const CHANNEL = 'c-e2e';

/**
 * hls.js and dash.js in headless Chromium, on another origin, play a live channel while its encoder disconnects
 * (the output switches to the colour) and reconnects (back to the live picture): the playhead keeps moving through
 * both switches and neither player reports a fatal error.
 */
describe('live playback through input loss', () => {
  const tmp = tempDir('mediaplane-live-e2e-');
  let ingest: RtmpIngest;
  let pipeline: LivePipeline;
  let outDir: string;
  let events: LivePipelineEvent[];
  let browser: Browser;
  let media: StaticServer;
  let page: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    ingest = await startRtmpIngest({
      host: '127.0.0.1',
      port: 0,
      authorize: (key) => (key === KEY ? { channelId: CHANNEL } : { refused: 'unknown stream key' }),
      onPublish: (id) => pipeline.setInput({ url: ingest.inputUrl(id)! }),
      onUnpublish: () => pipeline.setInput(null),
      log: quietLog(),
    });
    const p = localPipeline(tmp.dir, { channelId: CHANNEL, windowSegments: 10 });
    pipeline = p.pipeline;
    outDir = p.outDir;
    events = p.events;
    [browser, media, page] = await Promise.all([launchBrowser(), serveDirectory(outDir), servePlayerPage()]);
  });
  afterAll(async () => {
    await pipeline?.stop();
    await ingest?.close();
    await Promise.all([browser?.close(), media?.close(), page?.close()]);
    tmp.cleanup();
  });

  /** The newest segment number of the top rung. */
  const newestSequence = () => {
    const pl = readPlaylist(join(outDir, '180p.m3u8'));
    return pl ? pl.sequence + pl.segments.length - 1 : -1;
  };
  /** How the video and audio playlists number their segments now: what a player pairs them by. */
  const numbering = () =>
    ['180p.m3u8', 'audio.m3u8']
      .map((f) => {
        const text = existsSync(join(outDir, f)) ? readFileSync(join(outDir, f), 'utf8') : '';
        return `${f}: ${text
          .split('\n')
          .filter((l) => /SEQUENCE:|^#EXT-X-DISCONTINUITY$/.test(l))
          .join(' ')} last ${newestSegment(text)}`;
      })
      .join('; ');
  /** Waits until every player's playhead is `seconds` past where it was, failing on any player error. */
  async function allAdvance(players: LivePlayer[], seconds: number, what: string) {
    const from = await Promise.all(players.map((p) => p.state()));
    let now = from;
    await until(
      async () => {
        now = await Promise.all(players.map((p) => p.state()));
        for (const s of now) if (s.error) throw new Error(s.error);
        return now.every((s, i) => s.currentTime >= from[i]!.currentTime + seconds);
      },
      Boolean,
      {
        timeoutMs: 60_000,
        what: () => `${what}; players from ${JSON.stringify(from)} to ${JSON.stringify(now)}; newest segment ${newestSequence()}; ${numbering()}`,
      },
    );
  }
  const fetchedFrom = (sequence: number) =>
    media.requests.some((r) => {
      const m = /^\/(180p|90p)\/(\d+)\.m4s$/.exec(r);
      return m && Number(m[2]) >= sequence;
    });

  it('hls.js and dash.js keep playing when the encoder leaves and when it comes back', async () => {
    let encoder = pushEncoder(`rtmp://127.0.0.1:${ingest.port}/live/${KEY}`);
    const players: LivePlayer[] = [];
    try {
      await pipeline.start();
      await waitFor(
        'a playable window',
        () => (readPlaylist(join(outDir, '180p.m3u8'))?.segments.length ?? 0) >= 4 && readPlaylist(join(outDir, 'audio.m3u8')),
      );
      players.push(await playLive(browser, page.url, `${media.url}/master.m3u8`, 'hls'));
      players.push(await playLive(browser, page.url, `${media.url}/manifest.mpd`, 'dash'));
      await allAdvance(players, 2, 'both players playing the live input');

      await encoder.stop();
      const lostAt = newestSequence() + 1;
      await allAdvance(players, 5, 'playback on through the switch to the colour');
      expect(fetchedFrom(lostAt)).toBe(true);

      encoder = pushEncoder(`rtmp://127.0.0.1:${ingest.port}/live/${KEY}`);
      await waitFor('the live input back', () => segmentsOf(events, '180p').at(-1)?.live === true && newestSequence() > lostAt + 3);
      const backAt = newestSequence();
      await allAdvance(players, 5, 'playback on through the switch back to the input');
      expect(fetchedFrom(backAt)).toBe(true);

      for (const p of players) {
        const s = await p.state();
        expect(s.error).toBeUndefined();
        expect(TINY_LADDER.map((r) => r.height)).toContain(s.videoHeight);
      }
    } finally {
      await encoder.stop();
      await Promise.all(players.map((p) => p.close()));
    }
  }, 180_000);
});
