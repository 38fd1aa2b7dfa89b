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
  if (endpoint.format === 'HLS' && !video.canPlayType('application/vnd.apple.mpegurl')) {
    const Hls = await load('hls.js', 'Hls');
    if (!Hls.isSupported()) throw new Error('This browser cannot play HLS');
    const hls = new Hls(live ? { liveDurationInfinity: true } : {});
    hls.on(Hls.Events.MANIFEST_PARSED, () =>
      onRenditions(hls.levels.map((l, i) => ({ id: String(i), height: l.height, label: `${l.height ? `${l.height}p · ` : ''}${kbps(l.bitrate)}` }))),
    );
    hls.on(Hls.Events.ERROR, (_, d) => d.fatal && onError(new Error(`HLS: ${d.details}`)));
    hls.loadSource(endpoint.url);
    hls.attachMedia(video);
    video.play().catch(() => {});
    return {
      stop: () => hls.destroy(),
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
  // MP4: each file is one rendition; choosing another keeps the playhead.
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
