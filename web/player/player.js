// The embed page's player: reads its configuration from the page, fetches the asset's source configuration, plays it
// with hls.js (or dash.js, or the browser's own HLS), shows chapters as markers, and reports beacons. Plain browser
// JavaScript, served as is: no build step. The format of the beacons is in docs/decisions/analytics.md.
(() => {
  'use strict';
  const boot = JSON.parse(document.getElementById('boot').textContent);
  const video = document.getElementById('video');
  const message = document.getElementById('message');
  const chaptersBar = document.getElementById('chapters');

  const show = (text) => {
    message.textContent = text;
    message.className = 'shown';
  };

  /** crypto.randomUUID exists on secure pages only; an embed page may be served over plain HTTP. */
  function uuid() {
    if (crypto.randomUUID) return crypto.randomUUID();
    const b = crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  const loadScript = (src) =>
    new Promise((resolve, reject) => {
      const s = document.createElement('script');
      s.src = src;
      s.onload = resolve;
      s.onerror = () => reject(new Error(`could not load ${src}`));
      document.head.append(s);
    });

  /**
   * The beacons of one impression. It begins when playback is asked for (autoplay or a click): `start` at the first
   * frame (with the startup time), `heartbeat` with the seconds played since the last beacon, `buffering` after each
   * stall, `error` on a fatal error, and `end` when the video ends, fails or the page goes away.
   */
  function reportTo(source, tech, bitrateOf) {
    const base = { impressionId: uuid(), assetId: boot.assetId, assetType: source.type, playerTech: tech };
    let requestedAt = null;
    let started = false;
    let failed = false;
    let ended = false;
    let played = 0;
    let lastTime = null;
    let waitingSince = null;
    const send = (kind, extra, leaving = false) => {
      if (ended || requestedAt === null) return;
      const body = JSON.stringify({ beacons: [{ ...base, kind, ...extra }] });
      // A page being hidden or closed may never run another line: the browser itself delivers a beacon after the page
      // is gone (text/plain needs no CORS preflight, which sendBeacon cannot make). A refused beacon falls back to fetch.
      if (leaving && navigator.sendBeacon?.(boot.beaconUrl, new Blob([body], { type: 'text/plain' }))) return;
      fetch(boot.beaconUrl, { method: 'POST', keepalive: true, headers: { 'content-type': 'application/json' }, body }).catch(() => {});
    };
    const bitrate = () => {
      const b = bitrateOf();
      return Number.isFinite(b) && b > 0 ? Math.round(b) : undefined;
    };
    const takePlayed = () => {
      const s = Math.round(played * 1000) / 1000;
      played = 0;
      return s;
    };
    video.addEventListener('play', () => (requestedAt ??= performance.now()));
    // Played time is the playhead's progress while playing: a seek or a stall adds nothing.
    video.addEventListener('timeupdate', () => {
      const t = video.currentTime;
      if (lastTime !== null && !video.seeking && !video.paused && t > lastTime && t - lastTime < 2) played += t - lastTime;
      lastTime = t;
    });
    video.addEventListener('seeking', () => (lastTime = null));
    video.addEventListener('waiting', () => {
      if (started && !video.seeking) waitingSince = performance.now();
    });
    video.addEventListener('playing', () => {
      if (lastTime === null) lastTime = video.currentTime;
      if (!started) {
        started = true;
        send('start', { startupTimeMs: Math.round(performance.now() - requestedAt), videoBitrate: bitrate() });
      } else if (waitingSince !== null) {
        send('buffering', { bufferingMs: Math.round(performance.now() - waitingSince) });
      }
      waitingSince = null;
    });
    const heartbeat = (leaving = false) => {
      const s = takePlayed();
      if (s > 0) send('heartbeat', { playedSeconds: s, videoBitrate: bitrate() }, leaving);
    };
    const timer = setInterval(() => heartbeat(), boot.heartbeatMs);
    video.addEventListener('pause', () => {
      if (!video.ended) heartbeat();
    });
    const end = (leaving = false) => {
      clearInterval(timer);
      send('end', { playedSeconds: takePlayed(), videoStarted: started, failed, videoBitrate: bitrate() }, leaving);
      ended = true;
    };
    video.addEventListener('ended', () => end());
    addEventListener('pagehide', () => end(true));
    // A hidden page may be discarded without a pagehide (a phone switching apps): what it played is sent now; the
    // impression goes on if the page comes back.
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'hidden') heartbeat(true);
    });
    return {
      error(code) {
        if (failed) return;
        failed = true;
        send('error', { errorCode: String(code).slice(0, 64) });
        end();
      },
    };
  }

  /** Chapters as markers under the video; a marker seeks to its chapter. */
  function showChapters(chapters) {
    const place = () => {
      const duration = video.duration;
      if (!Number.isFinite(duration) || duration <= 0) return;
      chaptersBar.replaceChildren(
        ...chapters.map((c) => {
          const b = document.createElement('button');
          b.type = 'button';
          b.title = c.title || `Chapter at ${c.startSecond} s`;
          b.style.left = `${Math.min(100, (100 * c.startSecond) / duration)}%`;
          b.addEventListener('click', () => (video.currentTime = c.startSecond));
          return b;
        }),
      );
    };
    if (chapters.length) video.addEventListener('loadedmetadata', place);
  }

  /** Without TimeShift, a live stream stays at its live edge: a seek back is undone. */
  function holdLiveEdge(edgeOf) {
    video.addEventListener('seeked', () => {
      const edge = edgeOf();
      if (Number.isFinite(edge) && video.currentTime < edge - 10) video.currentTime = edge;
    });
  }

  const isProtected = (protection) => Boolean(protection) && protection !== 'None';

  /**
   * hls.js options for a DRM endpoint: the DRM token goes with AES-128 key requests (segment requests stay simple: no
   * CORS preflight) and, for SAMPLE-AES (`ClearKey`), hls.js licenses through EME ClearKey, posting the CDM's request
   * as it is with the token added.
   */
  function hlsDrmConfig(source, token) {
    if (!isProtected(source.hlsProtection)) return {};
    const config = {
      xhrSetup(xhr, url) {
        if (!url.includes('/drm/v1/licenses/')) return;
        xhr.open('GET', url, true);
        xhr.setRequestHeader('Authorization', `Bearer ${token}`);
      },
    };
    if (source.hlsProtection !== 'ClearKey') return config;
    return {
      ...config,
      emeEnabled: true,
      drmSystems: { 'org.w3.clearkey': { licenseUrl: source.clearKeyLicenseUrl } },
      licenseXhrSetup(xhr, url) {
        xhr.open('POST', url, true);
        xhr.setRequestHeader('Authorization', `Bearer ${token}`);
      },
    };
  }

  /** What a fatal hls.js error tells the viewer: a refused key or license most likely means a DRM token that does not fit. */
  const hlsFailure = (d) =>
    d.type === 'keySystemError' || d.details === 'keyLoadError'
      ? `Playback failed: the DRM key was refused (${d.details}); the DRM token may be expired or for another video`
      : d.response?.code === 401 || d.response?.code === 403
        ? `Playback failed: the server refused the video (${d.response.code}); a playback token missing, expired or for another video, or a page the publisher does not allow`
        : `Playback failed: ${d.details}`;

  const DRM_TOKEN_NEEDED = 'This video is protected by DRM: the page needs a DRM token (drmToken) to play it';

  /** How often a page asks again for a video that is still being prepared (nothing of it playable yet). */
  const PREPARING_RETRY_MS = 2000;

  async function start() {
    const res = await fetch(boot.sourceUrl);
    const source = await res.json().catch(() => ({}));
    if (!res.ok) return show(source.status?.message ?? `The video cannot be played (${res.status})`);
    // A missing, expired or refused playback token, said in words before the player asks for media.
    if (source.playbackRefusal) return show(source.playbackRefusal);
    // An upload still being transcoded: it plays from its first seconds, published while the rest encodes.
    if (!source.live && !source.hlsUrl && !source.dashUrl && (source.status === 'Pending' || source.status === 'Processing')) {
      show('This video is being prepared: it starts as soon as its first seconds are ready');
      return void setTimeout(run, PREPARING_RETRY_MS);
    }
    message.className = '';
    if (source.title) document.title = source.title;
    if (source.poster) video.poster = source.poster;
    video.muted = boot.flags.Muted;
    showChapters(source.chapters ?? []);
    const live = source.live;
    const analyticsOn = boot.flags.Analytics ?? source.settings.analytics;
    let report = { error() {} };
    const fail = (code, text) => {
      report.error(code);
      show(text);
    };
    const nativeHls = video.canPlayType('application/vnd.apple.mpegurl') !== '';
    let usesDash = false;
    const drmToken = boot.drmToken;
    if (source.hlsUrl && (window.MediaSource || window.ManagedMediaSource)) {
      // Said before any request: without the token a DRM video would only stay black.
      if (isProtected(source.hlsProtection) && !drmToken) return show(DRM_TOKEN_NEEDED);
      await loadScript(`${boot.libUrl}/hls.js`);
      const Hls = window.Hls;
      // A video (not live) starts at its beginning, also while it is still encoding (an EVENT playlist, which hls.js
      // would otherwise join near its end).
      const hls = new Hls({ ...hlsDrmConfig(source, drmToken), ...(live ? {} : { startPosition: 0 }) });
      if (analyticsOn) report = reportTo(source, 'hls.js', () => hls.levels[hls.currentLevel]?.bitrate);
      hls.on(Hls.Events.ERROR, (_e, d) => {
        if (d.fatal) fail(d.details, hlsFailure(d));
      });
      hls.loadSource(source.hlsUrl);
      hls.attachMedia(video);
      if (live && !boot.flags.TimeShift) holdLiveEdge(() => hls.liveSyncPosition);
    } else if (source.dashUrl && window.MediaSource) {
      usesDash = true;
      if (isProtected(source.dashProtection) && !drmToken) return show(DRM_TOKEN_NEEDED);
      await loadScript(`${boot.libUrl}/dash.js`);
      const dash = window.dashjs.MediaPlayer().create();
      // ClearKey through EME: the license URL comes from the MPD (dashif:Laurl), the token from the page.
      if (isProtected(source.dashProtection)) {
        dash.setProtectionData({ 'org.w3.clearkey': { httpRequestHeaders: { Authorization: `Bearer ${drmToken}` } } });
      }
      if (analyticsOn) report = reportTo(source, 'dash.js', () => dash.getCurrentRepresentationForType?.('video')?.bandwidth);
      dash.on('error', (e) => fail(e.error?.code ?? 'dash', `Playback failed: ${e.error?.message ?? 'dash.js error'}`));
      // dash.js starts an autoplay itself: it refreshes a live MPD only once it has seen the element's `play` event, and
      // a play() before it listens (before the MPD is loaded) is one it never sees: it would stall on the first MPD.
      // A video still encoding is a dynamic MPD, which dash.js would join at its end: it starts at 0 (NaN: its default).
      dash.initialize(video, source.dashUrl, Boolean(boot.flags.Autoplay), live ? NaN : 0);
      if (live && !boot.flags.TimeShift) holdLiveEdge(() => dash.duration());
    } else if (source.hlsUrl && nativeHls) {
      // The browser's own HLS cannot add the DRM token to key requests.
      if (isProtected(source.hlsProtection)) return show('This browser cannot play this DRM-protected video');
      if (analyticsOn) report = reportTo(source, 'native', () => undefined);
      video.src = source.hlsUrl;
      if (live && !boot.flags.TimeShift) holdLiveEdge(() => (video.seekable.length ? video.seekable.end(video.seekable.length - 1) : NaN));
    } else {
      return show('This browser cannot play this video');
    }
    video.addEventListener('error', () => fail(`media${video.error?.code ?? ''}`, 'Playback failed'));
    // A browser may refuse to start a video with sound by itself: the viewer then presses play.
    if (boot.flags.Autoplay && !usesDash) video.play().catch(() => {});
  }

  function run() {
    start().catch((e) => show(`The player could not start: ${e.message}`));
  }

  run();
})();
