// The streaming catalogue (`GET /streaming/v1/assets`): everything of the tenant a player can play (VOD assets, live
// channels, live events, recordings), newest first, a page at a time, with a text search and a type filter. Each
// opens its page (`#/streaming/<id>`, catalogueAsset.js).
import { alertBox, badge, errorText, fill, formatDate, formatDuration, h } from '/console/dom.js';

const PAGE_SIZE = 20;
/** The kinds of streaming asset, with the names the console shows them by. */
export const TYPES = { Vod: 'VOD asset', LiveChannel: 'Live channel', LiveEvent: 'Live event', Recording: 'Recording' };

export function catalogueCard(session, { signal }) {
  const { client } = session;
  const body = h('tbody');
  const pager = h('div', { class: 'pager' });
  const alert = alertBox();
  const search = h('input', { id: 'catalogue-query', type: 'search', placeholder: 'Title, description, metadata or tag' });
  const type = h(
    'select',
    { id: 'catalogue-type', onchange: () => load(1) },
    h('option', { value: '' }, 'All types'),
    Object.entries(TYPES).map(([value, label]) => h('option', { value }, label)),
  );

  let asked;
  async function load(page) {
    const mine = (asked = {});
    alert.show();
    try {
      const query = { page, limit: PAGE_SIZE, sort: 'CreateDate', desc: true };
      if (search.value.trim()) query.query = search.value.trim();
      if (type.value) query.types = [type.value];
      const res = await client.request('GET', '/streaming/v1/assets', undefined, { query, signal });
      if (mine !== asked) return; // a later search was sent meanwhile
      fill(
        body,
        res.items.length === 0
          ? h('tr', {}, h('td', { colSpan: 5, class: 'muted' }, query.query || query.types ? 'Nothing matches.' : 'Nothing to play yet: upload a file in VOD.'))
          : res.items.map((a) =>
              h(
                'tr',
                { 'data-asset': a.id },
                h('td', {}, h('a', { href: `#/streaming/${encodeURIComponent(a.id)}` }, a.title || a.id)),
                h('td', {}, TYPES[a.type] ?? a.type),
                h('td', {}, badge(a.status)),
                h('td', {}, formatDuration(a.durationMilliseconds) || '–'),
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
    'section',
    { class: 'card', 'aria-labelledby': 'catalogue-title' },
    h('h2', { id: 'catalogue-title' }, 'Catalogue'),
    h(
      'form',
      {
        class: 'row',
        role: 'search',
        onsubmit: (event) => {
          event.preventDefault();
          load(1);
        },
      },
      h('div', {}, h('label', { for: 'catalogue-query' }, 'Search'), search),
      h('div', {}, h('label', { for: 'catalogue-type' }, 'Type'), type),
      h('div', { class: 'form-end' }, h('button', { type: 'submit' }, 'Search')),
    ),
    alert,
    h(
      'div',
      { class: 'table-scroll' },
      h(
        'table',
        { 'aria-label': 'Streaming assets' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Title', 'Type', 'Status', 'Duration', 'Created'].map((c) => h('th', { scope: 'col' }, c)),
          ),
        ),
        body,
      ),
    ),
    pager,
  );
}
