import type { Browser } from 'playwright-core';

export interface LowLatencyPlayback {
  /** `video.currentTime` sampled every 250 ms. */
  times: number[];
  videoHeight: number;
  /** hls.js's own estimate of its distance to the live edge (`hls.latency`), seconds, sampled with the playhead. */
  latency: number[];
  /** Wall clock minus the program date-time of the frame being shown (`hls.playingDate`), seconds. */
  behindWallClock: number[];
  /** hls.js loaded fragments that were parts (`frag.part` events): it played the low-latency playlist. */
  partsLoaded: number;
  error?: string;
}

/** hls.js in low-latency mode (`lowLatencyMode: true`, the default of its LL-HLS support) on a live playlist. */
export async function playLowLatency(browser: Browser, pageUrl: string, url: string, seconds: number): Promise<LowLatencyPlayback> {
  const page = await browser.newPage();
  try {
    await page.goto(pageUrl);
    return await page.evaluate(
      async ({ url, seconds }) => {
        const video = document.getElementById('v') as HTMLVideoElement;
        const w = window as any;
        let error: string | undefined;
        let partsLoaded = 0;
        const hls = new w.Hls({ lowLatencyMode: true, backBufferLength: 10 });
        hls.on(w.Hls.Events.ERROR, (_: unknown, d: any) => {
          if (d.fatal && !error) error = `hls.js ${d.type}: ${d.details}`;
        });
        hls.on(w.Hls.Events.FRAG_LOADED, (_: unknown, d: any) => {
          if (d.part) partsLoaded += 1;
        });
        hls.loadSource(url);
        hls.attachMedia(video);
        video.muted = true;
        video.addEventListener('error', () => {
          if (!error) error = `media element: ${video.error?.code} ${video.error?.message}`;
        });
        await video.play().catch(() => {});
        const times: number[] = [];
        const latency: number[] = [];
        const behindWallClock: number[] = [];
        const start = performance.now();
        while (performance.now() - start < seconds * 1000 && !error) {
          await new Promise((r) => setTimeout(r, 250));
          if (video.paused && video.readyState >= 2) video.play().catch(() => {});
          times.push(video.currentTime);
          if (video.currentTime > 0 && !video.paused) {
            if (Number.isFinite(hls.latency)) latency.push(hls.latency);
            if (hls.playingDate) behindWallClock.push((Date.now() - hls.playingDate.getTime()) / 1000);
          }
        }
        const videoHeight = video.videoHeight;
        hls.destroy();
        return { times, videoHeight, latency, behindWallClock, partsLoaded, error };
      },
      { url, seconds },
    );
  } finally {
    await page.close();
  }
}
