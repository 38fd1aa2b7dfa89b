// The home screen: who the tenant is (name, id, status, channel limit) and what is happening now (files being
// uploaded, assets being processed, channels on air), each read from the public API.
import { alertBox, badge, errorText, fill, formatBytes, formatDate, h } from '/console/dom.js';

export function homeScreen(session, { signal }) {
  const { client, tenant } = session;
  const limit = h('dd', {}, '…');
  const processing = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const channels = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const uploads = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const alert = alertBox();

  client
    .request('GET', '/vod/v1/files', undefined, { query: { status: 'Uploading', limit: 10, sort: 'CreateDate', desc: true }, signal })
    .then((page) =>
      fill(
        uploads,
        page.items.length === 0
          ? h('p', { class: 'muted' }, 'No file is being uploaded.')
          : h(
              'ul',
              { class: 'plain' },
              page.items.map((f) =>
                h('li', {}, f.friendlyName || f.name, ' ', h('span', { class: 'muted' }, formatBytes(f.fileSize), ' · ', formatDate(f.createDate))),
              ),
            ),
        page.hasMore ? h('p', { class: 'muted' }, `${page.totalCount} in all`) : null,
      ),
    )
    .catch((e) => alert.show(errorText(e)));

  client
    .request('GET', '/live/v1/channels/limit', undefined, { signal })
    .then((r) => fill(limit, String(r.channelsLimit)))
    .catch((e) => fill(limit, errorText(e)));

  client
    .request('GET', '/vod/v1/assets', undefined, { query: { statuses: ['Processing'], limit: 10, sort: 'CreateDate', desc: true }, signal })
    .then((page) =>
      fill(
        processing,
        page.items.length === 0
          ? h('p', { class: 'muted' }, 'No asset is being processed.')
          : h(
              'ul',
              { class: 'plain' },
              page.items.map((a) =>
                h(
                  'li',
                  {},
                  h('a', { href: `#/assets/${a.id}` }, a.title || a.id),
                  ' ',
                  badge(a.status),
                  ' ',
                  h('span', { class: 'muted' }, formatDate(a.createDate)),
                ),
              ),
            ),
        page.hasMore ? h('p', {}, h('a', { href: '#/assets' }, `${page.totalCount} in all`)) : null,
      ),
    )
    .catch((e) => alert.show(errorText(e)));

  onAir(client, signal)
    .then((on) =>
      fill(
        channels,
        on.length === 0
          ? h('p', { class: 'muted' }, 'No channel is on air.')
          : h(
              'ul',
              { class: 'plain' },
              on.map((c) => h('li', {}, c.title || c.name || c.id, ' ', badge(c.status))),
            ),
      ),
    )
    .catch((e) => alert.show(errorText(e)));

  return h(
    'section',
    {},
    h('h1', {}, tenant.name),
    alert,
    h(
      'div',
      { class: 'grid' },
      h(
        'div',
        { class: 'card' },
        h('h2', {}, 'Tenant'),
        h(
          'dl',
          { class: 'facts' },
          h('dt', {}, 'Name'),
          h('dd', {}, tenant.name),
          h('dt', {}, 'ID'),
          h('dd', {}, h('code', {}, tenant.id)),
          h('dt', {}, 'Status'),
          // The API's default message only repeats the status; a set one (why a tenant is Blocked) is shown.
          h('dd', {}, badge(tenant.status), tenant.message === `The tenant is ${tenant.status}` ? null : h('span', { class: 'muted' }, ' ', tenant.message)),
          h('dt', {}, 'Channel limit'),
          limit,
          h('dt', {}, 'Your role'),
          h('dd', {}, tenant.roleType, session.canWrite ? '' : ' (read only)'),
        ),
      ),
      h('div', { class: 'card' }, h('h2', {}, 'Uploading now'), uploads),
      h('div', { class: 'card' }, h('h2', {}, 'Processing now'), processing),
      h('div', { class: 'card' }, h('h2', {}, 'On air'), channels),
    ),
  );
}

/** The channels whose status is On: the list operation has no status filter, so every page is read (channels are few). */
async function onAir(client, signal) {
  const on = [];
  for await (const c of client.paginate('/live/v1/channels', { includeCloudData: false }, { signal })) if (c.status === 'On') on.push(c);
  return on;
}
