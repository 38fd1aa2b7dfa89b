// Watermarking (`#/watermarking`): the tenant's prepared assets (`/watermarking/v1/assets`: each VOD asset encoded in
// two marked variants, with the preparation's status and progress, and "Prepare an asset"), the sessions viewers play
// them through (watermarkingSessions.js), suspect captures with what detection read in them (watermarkingFiles.js) and
// the tenant's watermarking settings (watermarkingSettings.js).
import { alertBox, badge, errorText, fill, formatDate, formatDuration, guard, h } from '/console/dom.js';
import { assetTitle, sessionsCard } from '/console/watermarkingSessions.js';
import { suspectsCard } from '/console/watermarkingFiles.js';
import { watermarkingSettingsCard } from '/console/watermarkingSettings.js';

const PAGE_SIZE = 20;
const POLL_MS = 3000;
const settling = (a) => a.status === 'Pending' || a.status === 'Processing';

/**
 * The prepared assets, newest first, a page at a time; read again every 3 s while one is being prepared. Answers
 * `{ card, settingsChanged() }`: the VOD asset picker says the minimum length at the settings, read again on a change.
 */
function assetsCard(session, { signal, onChange }) {
  const { client } = session;
  const alert = alertBox();
  const body = h('tbody');
  const pager = h('div', { class: 'pager' });
  let page = 1;
  let timer;
  let seen;

  async function load() {
    clearTimeout(timer);
    try {
      const res = await client.request('GET', '/watermarking/v1/assets', undefined, {
        query: { page, limit: PAGE_SIZE, sort: 'CreateDate', desc: true },
        signal,
      });
      fill(
        body,
        res.items.length === 0 ? h('tr', {}, h('td', { colSpan: 6, class: 'muted' }, 'No prepared asset yet: prepare one below.')) : res.items.map(assetRow),
      );
      fill(
        pager,
        h('button', { type: 'button', class: 'quiet', disabled: page <= 1, onclick: () => ((page -= 1), load()) }, 'Previous page'),
        h('span', { class: 'muted' }, `Page ${res.pageNumber} of ${Math.max(1, res.pageCount)} · ${res.totalCount} prepared assets`),
        h('button', { type: 'button', class: 'quiet', disabled: !res.hasMore, onclick: () => ((page += 1), load()) }, 'Next page'),
      );
      alert.show();
      // The sessions card lists the Available assets too: told when one is added or changes status.
      const now = res.items.map((a) => `${a.id}:${a.status}`).join();
      if (now !== seen) onChange();
      seen = now;
      if (res.items.some(settling) && !signal.aborted) timer = setTimeout(load, POLL_MS);
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  }
  signal.addEventListener('abort', () => clearTimeout(timer));

  function assetRow(a) {
    const source = a.vodAssetId
      ? h('a', { href: `#/assets/${a.vodAssetId}` }, 'VOD asset')
      : a.channelId
        ? h('a', { href: `#/channels/${a.channelId}` }, 'Live channel')
        : '';
    return h(
      'tr',
      { 'data-watermark-asset': a.id },
      h('td', {}, assetTitle(a)),
      h('td', {}, source),
      h(
        'td',
        {},
        badge(a.status),
        settling(a) ? h('progress', { max: 100, value: a.progress, 'aria-label': `Preparation of ${assetTitle(a)}` }) : null,
        settling(a) ? h('span', { class: 'muted' }, ` ${a.progress}%`) : null,
        a.errorMessage ? h('p', { class: 'error-text' }, a.errorMessage) : null,
      ),
      h('td', {}, a.width && a.height ? `${a.width}×${a.height}` : ''),
      // A live channel's asset grows with the channel: its segment count says nothing of its length.
      h(
        'td',
        { class: 'wide' },
        a.channelId ? `${a.segmentDuration} s segments` : `${a.segmentCount} × ${a.segmentDuration} s`,
        ` · ${a.userNumberBits}-bit user numbers`,
      ),
      h('td', {}, formatDate(a.createDate)),
    );
  }

  // "Prepare an asset": one of the tenant's Available VOD assets; it must hold one whole code word at the settings.
  const vodAsset = guard(h('select', { id: 'wm-vod-asset', 'aria-describedby': 'wm-vod-asset-help' }), session);
  const help = h('p', { class: 'muted small', id: 'wm-vod-asset-help' });
  const title = guard(h('input', { id: 'wm-title', maxLength: 1024, placeholder: 'the VOD asset’s title' }), session);
  const prepare = guard(h('button', { type: 'submit' }, 'Prepare asset'), session);
  const formAlert = alertBox();
  const readPicker = async () => {
    try {
      const [settings, vod] = await Promise.all([
        client.request('GET', '/watermarking/v1/settings', undefined, { signal }),
        client.request('GET', '/vod/v1/assets', undefined, { query: { statuses: ['Available'], limit: 100, sort: 'CreateDate', desc: true }, signal }),
      ]);
      const minimumMs = (settings.userNumberBits + 8) * settings.segmentDuration * 1000;
      help.textContent =
        `With ${settings.userNumberBits}-bit user numbers and ${settings.segmentDuration} s segments, an asset needs at least ` +
        `${formatDuration(minimumMs)} (one code word: the user number and an 8-bit checksum, a segment a bit).`;
      fill(
        vodAsset,
        vod.items.length === 0
          ? h('option', { value: '' }, 'No Available VOD asset')
          : vod.items.map((a) => {
              // A duration the list does not give is checked by the API, which says so in its own words.
              const ms = a.durationMilliseconds;
              const known = ms !== null && ms !== undefined;
              const short = known && ms < minimumMs;
              return h(
                'option',
                { value: a.id, disabled: short },
                known ? `${a.title || a.id} (${formatDuration(ms)}${short ? ', too short' : ''})` : a.title || a.id,
              );
            }),
      );
    } catch (e) {
      if (!signal.aborted) formAlert.show(errorText(e));
    }
  };
  readPicker();
  const form = h(
    'form',
    {
      class: 'add-output',
      onsubmit: async (event) => {
        event.preventDefault();
        formAlert.show();
        if (!vodAsset.value) return formAlert.show('Choose a VOD asset first.');
        prepare.disabled = true;
        try {
          await client.request('POST', '/watermarking/v1/assets', {
            vodAssetId: vodAsset.value,
            ...(title.value.trim() ? { metadata: { title: title.value.trim() } } : {}),
          });
          title.value = '';
          page = 1;
          await load();
        } catch (e) {
          formAlert.show(errorText(e));
        }
        prepare.disabled = !session.canWrite;
      },
    },
    h('h3', {}, 'Prepare an asset'),
    h(
      'div',
      { class: 'row' },
      h('div', {}, h('label', { for: 'wm-vod-asset' }, 'VOD asset'), vodAsset, help),
      h('div', {}, h('label', { for: 'wm-title' }, 'Title'), title),
    ),
    formAlert,
    prepare,
  );

  load();
  const card = h(
    'section',
    { class: 'card', 'aria-labelledby': 'wm-assets-title' },
    h('h2', { id: 'wm-assets-title' }, 'Prepared assets'),
    alert,
    h(
      'table',
      { class: 'stacking', 'aria-label': 'Prepared assets' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Title', 'Source', 'Status', 'Size', 'Segments', 'Created'].map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      body,
    ),
    pager,
    form,
  );
  return { card, settingsChanged: readPicker };
}

export function watermarkingScreen(session, { signal }) {
  const sessions = sessionsCard(session, { signal });
  const assets = assetsCard(session, { signal, onChange: () => sessions.assetsChanged() });
  return h(
    'section',
    {},
    h('h1', {}, 'Watermarking'),
    session.canWrite ? null : h('p', { class: 'note' }, session.readOnlyReason),
    assets.card,
    sessions.card,
    suspectsCard(session, { signal }),
    watermarkingSettingsCard(session, { signal, changed: () => assets.settingsChanged() }),
  );
}
