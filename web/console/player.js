// The player card of a page: a <video>, what is playing, and a "Quality" picker of the playing endpoint's renditions.
import { alertBox, errorText, fill, h } from '/console/dom.js';
import { play } from '/console/play.js';

/**
 * Answers `{ card, start(endpoint, siblings), stop() }`; the caller stops it when its screen is left. `live` tunes
 * hls.js for a live playlist.
 */
export function playerCard({ title = 'Player', hint, live = false } = {}) {
  // autoplay, not only play(): a play() made while the player attaches its source can be cut off by that load.
  const video = h('video', { id: 'player', controls: true, muted: true, autoplay: true, playsInline: true, hidden: true, 'aria-label': `${title} video` });
  const nowPlaying = h('p', { class: 'muted' }, hint);
  const quality = h('select', { id: 'quality', disabled: true }, h('option', { value: 'auto' }, 'Auto'));
  const qualityRow = h('div', { class: 'inline-field', hidden: true }, h('label', { for: 'quality' }, 'Quality'), quality);
  const alert = alertBox();
  let engine;

  quality.addEventListener('change', () => engine?.choose(quality.value));
  // An error the player recovered from is no longer shown once the video plays.
  video.addEventListener('playing', () => alert.show());

  function stop() {
    engine?.stop();
    engine = undefined;
  }

  async function start(endpoint, siblings = []) {
    stop();
    alert.show();
    video.hidden = false;
    qualityRow.hidden = true;
    fill(nowPlaying, `Playing ${endpoint.format}: `, h('code', {}, endpoint.url));
    try {
      engine = await play(video, endpoint, {
        siblings,
        live,
        onError: (e) => alert.show(errorText(e)),
        onRenditions: (list) => {
          list.sort((a, b) => (b.height ?? 0) - (a.height ?? 0));
          fill(
            quality,
            endpoint.format === 'MP4' ? null : h('option', { value: 'auto' }, 'Auto'),
            list.map((r) => h('option', { value: r.id }, r.label)),
          );
          quality.disabled = list.length < 2;
          qualityRow.hidden = list.length === 0;
        },
      });
    } catch (e) {
      alert.show(errorText(e));
    }
  }

  const card = h('div', { class: 'card' }, h('h2', {}, title), video, qualityRow, nowPlaying, alert);
  return { card, start, stop, video };
}
