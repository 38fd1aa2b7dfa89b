// Plays an endpoint in a <video>: MP4 natively; HLS and DASH through the hls.js and dash.js the platform serves for its
// embed player (/player/v1/lib/, loaded on first use), HLS natively where the browser plays it itself (Safari). Each
// engine tells its renditions, and one can be chosen (or "auto": the player's own adaptation).
const loading = {};

/** Loads one of the platform's player libraries once (`hls.js` sets `window.Hls`, `dash.js` sets `window.dashjs`). */
function load(file, global) {
  loading[file] ??= new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = `/player/v1/lib/${file}`;
    script.onload = () => resolve(window[global]);
    script.onerror = () => reject(new Error(`The player ${file} could not be loaded`));
    document.head.append(script);
  });
  return loading[file];
}

const kbps = (bps) => `${Math.round(bps / 1000)} kb/s`;

/**
 * Starts playing. `onRenditions(list)` is told the renditions (`{ id, label }`) once known; `siblings` are the other
 * MP4 endpoints of the output (each a rendition). Answers `{ stop(), choose(id) }`, `choose('auto')` giving adaptation
 * back to the player.
 */
export async function play(video, endpoint, { onRenditions = () => {}, onError = () => {}, siblings = [], live = false } = {}) {
  // hls.js wherever Media Source Extensions exist, the browser's own HLS only where they do not (iOS Safari): Chromium
  // now answers canPlayType for HLS too, but its own player neither retries nor tells why a live playlist failed.
  const Hls = endpoint.format === 'HLS' ? await load('hls.js', 'Hls') : undefined;
  if (Hls?.isSupported()) {
    const hls = new Hls(live ? { liveDurationInfinity: true } : {});
    hls.on(Hls.Events.MANIFEST_PARSED, () =>
      onRenditions(hls.levels.map((l, i) => ({ id: String(i), height: l.height, label: `${l.height ? `${l.height}p · ` : ''}${kbps(l.bitrate)}` }))),
    );
    let stopped = false;
    let recoveries = 0;
    hls.on(Hls.Events.ERROR, (_, d) => {
      if (!d.fatal) return;
      onError(new Error(`HLS: ${d.details}`));
      // A live channel that has just gone On may not have written its playlists yet, and a loaded server may miss one
      // request: a viewer's player keeps asking, so does this one (hls.js' own retries are spent when it is fatal).
      if (d.type === Hls.ErrorTypes.NETWORK_ERROR && live && recoveries++ < 60) {
        setTimeout(() => stopped || hls.loadSource(endpoint.url), 2000);
      } else if (d.type === Hls.ErrorTypes.MEDIA_ERROR && recoveries++ < 3) {
        hls.recoverMediaError();
      }
    });
    hls.loadSource(endpoint.url);
    hls.attachMedia(video);
    video.play().catch(() => {});
    return {
      stop: () => {
        stopped = true;
        hls.destroy();
      },
      // currentLevel switches at once (the buffer is flushed), as a person choosing a quality expects.
      choose: (id) => (hls.currentLevel = id === 'auto' ? -1 : Number(id)),
    };
  }
  if (endpoint.format === 'DASH') {
    const dashjs = await load('dash.js', 'dashjs');
    const player = dashjs.MediaPlayer().create();
    player.on('streamInitialized', () =>
      onRenditions(player.getRepresentationsByType('video').map((r) => ({ id: r.id, height: r.height, label: `${r.height}p · ${kbps(r.bandwidth)}` }))),
    );
    player.on('error', (e) => onError(new Error(`DASH: ${e.error?.message ?? 'playback failed'}`)));
    player.initialize(video, endpoint.url, true);
    return {
      stop: () => player.destroy(),
      choose: (id) => {
        const auto = id === 'auto';
        player.updateSettings({ streaming: { abr: { autoSwitchBitrate: { video: auto } } } });
        if (!auto) player.setRepresentationForTypeById('video', id, true);
      },
    };
  }
  if (Hls && !video.canPlayType('application/vnd.apple.mpegurl')) throw new Error('This browser cannot play HLS');
  // MP4 (and HLS where the browser plays it itself): each file is one rendition; choosing another keeps the playhead.
  const files = [endpoint, ...siblings.filter((s) => s.url !== endpoint.url)];
  onRenditions(files.map((f) => ({ id: f.url, label: decodeURIComponent(f.url.split('?')[0].split('/').pop()) })));
  video.src = endpoint.url;
  video.play().catch(() => {});
  return {
    stop: () => {
      video.removeAttribute('src');
      video.load();
    },
    choose: (id) => {
      if (id === 'auto' || video.src === id) return;
      const at = video.currentTime;
      video.src = id;
      video.addEventListener('loadedmetadata', () => (video.currentTime = at), { once: true });
      video.play().catch(() => {});
    },
  };
}
