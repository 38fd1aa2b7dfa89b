// The license log of the DRM screen, for the range the statistics show: refusals by error code
// (`GET /drm/v1/statistics/license-error-codes`) and every license request, newest first, a page at a time
// (`GET /drm/v1/statistics/license-requests`: its type, content, viewer, policy, and granted or the error code).
import { alertBox, badge, errorText, fill, formatDate, h } from '/console/dom.js';

const PAGE_SIZE = 20;

/** Answers `{ card, show(range) }`: the statistics card tells it the range (`{ from, to }`, ISO 8601) it read. */
export function licenseLogCard(session, { signal }) {
  const { client } = session;
  const alert = alertBox();
  const codes = h('div', {});
  const body = h('tbody');
  const pager = h('div', { class: 'pager' });
  let range;
  let page = 1;

  async function load() {
    try {
      const [errors, log] = await Promise.all([
        client.request('GET', '/drm/v1/statistics/license-error-codes', undefined, { query: range, signal }),
        client.request('GET', '/drm/v1/statistics/license-requests', undefined, { query: { ...range, page, limit: PAGE_SIZE }, signal }),
      ]);
      fill(
        codes,
        errors.items.length === 0
          ? h('p', { class: 'muted' }, 'No license request refused in this range.')
          : h(
              'table',
              { class: 'stacking', 'aria-label': 'Refusals by error code' },
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  ['Error code', 'HTTP status', 'Requests'].map((t) => h('th', { scope: 'col' }, t)),
                ),
              ),
              h(
                'tbody',
                {},
                errors.items.map((e) => h('tr', {}, h('td', {}, h('code', {}, e.errorCode)), h('td', {}, String(e.httpStatus)), h('td', {}, String(e.count)))),
              ),
            ),
      );
      fill(
        body,
        log.items.length === 0
          ? h('tr', {}, h('td', { colSpan: 6, class: 'muted' }, 'No license request in this range.'))
          : log.items.map((r) =>
              h(
                'tr',
                {},
                h('td', {}, formatDate(r.time)),
                h('td', {}, r.type),
                h('td', {}, r.contentId ?? ''),
                h('td', {}, r.userId ?? ''),
                h('td', {}, badge(r.granted ? 'Granted' : 'Refused')),
                h('td', {}, r.errorCode ? h('code', {}, r.errorCode) : '', ` ${r.httpStatus}`),
              ),
            ),
      );
      fill(
        pager,
        h('button', { type: 'button', class: 'quiet', disabled: page <= 1, onclick: () => ((page -= 1), load()) }, 'Previous page'),
        h('span', { class: 'muted' }, `Page ${log.pageNumber} of ${Math.max(1, log.pageCount)} · ${log.totalCount} requests`),
        h('button', { type: 'button', class: 'quiet', disabled: !log.hasMore, onclick: () => ((page += 1), load()) }, 'Next page'),
      );
      alert.show();
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  }

  const card = h(
    'section',
    { class: 'card', 'aria-labelledby': 'drm-log-title' },
    h('h2', { id: 'drm-log-title' }, 'License log'),
    alert,
    h('h3', {}, 'Refusals by error code'),
    codes,
    h('h3', {}, 'License requests'),
    h(
      'table',
      { class: 'stacking', 'aria-label': 'License requests' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Time', 'Type', 'Content', 'User', 'Answer', 'Code'].map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      body,
    ),
    pager,
  );
  return {
    card,
    show(r) {
      range = r;
      page = 1;
      load();
    },
  };
}
