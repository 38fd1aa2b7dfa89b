// The VOD screen: the upload panel (uploads.js) and the tenant's assets, a page at a time.
import { alertBox, badge, errorText, fill, formatDate, h } from '/console/dom.js';
import { uploadPanel } from '/console/uploads.js';

const PAGE_SIZE = 20;

export function assetsScreen(session, { signal }) {
  return h('section', {}, h('h1', {}, 'VOD'), uploadPanel(session, signal), assetList(session, signal));
}

/** The tenant's assets, newest first, a page at a time. */
function assetList(session, signal) {
  const { client } = session;
  const body = h('tbody');
  const pager = h('div', { class: 'pager' });
  const alert = alertBox();

  async function load(page) {
    alert.show();
    try {
      const res = await client.request('GET', '/vod/v1/assets', undefined, { query: { page, limit: PAGE_SIZE, sort: 'CreateDate', desc: true }, signal });
      fill(
        body,
        res.items.length === 0
          ? h('tr', {}, h('td', { colSpan: 4, class: 'muted' }, 'No assets yet: upload a file above.'))
          : res.items.map((a) =>
              h(
                'tr',
                {},
                h('td', {}, h('a', { href: `#/assets/${a.id}` }, a.title || a.id)),
                h('td', {}, badge(a.status)),
                h('td', {}, a.preset),
                h('td', {}, formatDate(a.createDate)),
              ),
            ),
      );
      fill(
        pager,
        h('button', { type: 'button', class: 'quiet', disabled: page <= 1, onclick: () => load(page - 1) }, 'Previous page'),
        h('span', { class: 'muted' }, `Page ${res.pageNumber} of ${Math.max(1, res.pageCount)} · ${res.totalCount} assets`),
        h('button', { type: 'button', class: 'quiet', disabled: !res.hasMore, onclick: () => load(page + 1) }, 'Next page'),
      );
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  }
  load(1);

  return h(
    'div',
    { class: 'card' },
    h('h2', {}, 'Assets'),
    alert,
    h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, 'Title'), h('th', {}, 'Status'), h('th', {}, 'Preset'), h('th', {}, 'Created'))), body),
    pager,
  );
}
