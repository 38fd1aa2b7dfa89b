// The sessions of the Watermarking screen (`/watermarking/v1/sessions`): one per viewer (a user number) on a prepared
// asset, with "Revoke" (its tokens are refused from the next request on) and "Unrevoke"; "Open a session" asks for a
// redirector token (`POST /watermarking/v1/redirector/token`), which opens the session on its first use, and shows the
// playlist URL that plays it marked for that viewer.
import { alertBox, badge, copyButton, errorText, fill, formatDate, guard, h } from '/console/dom.js';

const PAGE_SIZE = 20;
export const assetTitle = (a) => a.metadata?.title || a.id;

/** Answers `{ card, assetsChanged() }`: the screen tells it when the prepared assets change (its picker lists them). */
export function sessionsCard(session, { signal }) {
  const { client } = session;
  const alert = alertBox();
  const body = h('tbody');
  const pager = h('div', { class: 'pager' });
  const shown = h(
    'select',
    { id: 'wm-sessions-shown', onchange: () => ((page = 1), load()) },
    h('option', { value: '' }, 'All sessions'),
    h('option', { value: 'false' }, 'Active'),
    h('option', { value: 'true' }, 'Revoked'),
  );
  let page = 1;
  let assets = new Map();

  async function load() {
    try {
      const res = await client.request('GET', '/watermarking/v1/sessions', undefined, {
        query: { page, limit: PAGE_SIZE, sort: 'CreateDate', desc: true, ...(shown.value ? { revoked: shown.value === 'true' } : {}) },
        signal,
      });
      fill(body, res.items.length === 0 ? h('tr', {}, h('td', { colSpan: 6, class: 'muted' }, 'No session.')) : res.items.map(sessionRow));
      fill(
        pager,
        h('button', { type: 'button', class: 'quiet', disabled: page <= 1, onclick: () => ((page -= 1), load()) }, 'Previous page'),
        h('span', { class: 'muted' }, `Page ${res.pageNumber} of ${Math.max(1, res.pageCount)} · ${res.totalCount} sessions`),
        h('button', { type: 'button', class: 'quiet', disabled: !res.hasMore, onclick: () => ((page += 1), load()) }, 'Next page'),
      );
      alert.show();
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  }

  function sessionRow(s) {
    const verb = s.revoked ? 'Unrevoke' : 'Revoke';
    const asset = assets.get(s.assetId);
    return h(
      'tr',
      { 'data-session': s.id },
      h('td', {}, s.userName),
      h('td', {}, String(s.userNumber)),
      h('td', {}, asset ? assetTitle(asset) : s.assetId),
      h(
        'td',
        {},
        badge(s.revoked ? 'Revoked' : 'Active'),
        s.revoked && s.revokeDate ? h('span', { class: 'muted' }, ` since ${formatDate(s.revokeDate)}`) : null,
      ),
      h('td', {}, formatDate(s.createDate)),
      h(
        'td',
        {},
        guard(
          h(
            'button',
            {
              type: 'button',
              class: s.revoked ? 'quiet' : 'danger quiet',
              'aria-label': `${verb} the session of ${s.userName}`,
              onclick: async (event) => {
                event.currentTarget.disabled = true;
                alert.show();
                try {
                  await client.request('POST', `/watermarking/v1/sessions/{id}/${s.revoked ? 'unrevoke' : 'revoke'}`, undefined, { params: { id: s.id } });
                } catch (e) {
                  alert.show(errorText(e));
                }
                load();
              },
            },
            verb,
          ),
          session,
        ),
      ),
    );
  }

  // "Open a session": a viewer's number and name on an Available asset; the answer's playlist plays it marked.
  const asset = guard(h('select', { id: 'wm-session-asset', onchange: () => limitNumber() }), session);
  const userNumber = guard(
    h('input', { id: 'wm-user-number', type: 'number', min: 0, step: 1, required: true, 'aria-describedby': 'wm-user-number-help' }),
    session,
  );
  const numberHelp = h('p', { class: 'muted small', id: 'wm-user-number-help' });
  const userName = guard(h('input', { id: 'wm-user-name', maxLength: 256, required: true }), session);
  const open = guard(h('button', { type: 'submit' }, 'Open session'), session);
  const formAlert = alertBox();
  const opened = h('div', { class: 'secret-once', hidden: true });
  function limitNumber() {
    const a = assets.get(asset.value);
    if (!a) return fill(numberHelp);
    // The user number is spelled in the asset's bits: a larger one does not fit (the API refuses it).
    userNumber.max = String(2 ** a.userNumberBits - 1);
    fill(numberHelp, `0 to ${2 ** a.userNumberBits - 1} on this asset (${a.userNumberBits} bits).`);
  }
  const form = h(
    'form',
    {
      class: 'add-output',
      onsubmit: async (event) => {
        event.preventDefault();
        formAlert.show();
        if (!asset.value) return formAlert.show('Choose a prepared asset first.');
        open.disabled = true;
        try {
          const r = await client.request('POST', '/watermarking/v1/redirector/token', {
            assetId: asset.value,
            userNumber: Number(userNumber.value),
            userName: userName.value.trim(),
          });
          const who = userName.value.trim();
          fill(
            opened,
            h('p', {}, h('strong', {}, `The playlist of ${who}`), ` (its token is valid until ${formatDate(r.expirationDate)}):`),
            h('code', {}, r.playbackUrl),
            ' ',
            copyButton('Copy', () => r.playbackUrl, `Copy the playlist URL of ${who}`),
          );
          opened.hidden = false;
          userName.value = '';
          page = 1;
          await load();
        } catch (e) {
          formAlert.show(errorText(e));
        }
        open.disabled = !session.canWrite;
      },
    },
    h('h3', {}, 'Open a session'),
    h(
      'div',
      { class: 'row' },
      h('div', {}, h('label', { for: 'wm-session-asset' }, 'Prepared asset'), asset),
      h('div', {}, h('label', { for: 'wm-user-number' }, 'User number'), userNumber, numberHelp),
      h('div', {}, h('label', { for: 'wm-user-name' }, 'User name'), userName),
    ),
    formAlert,
    open,
    opened,
  );

  async function assetsChanged() {
    try {
      const res = await client.request('GET', '/watermarking/v1/assets', undefined, { query: { limit: 100, sort: 'CreateDate', desc: true }, signal });
      assets = new Map(res.items.map((a) => [a.id, a]));
      const chosen = asset.value;
      const available = res.items.filter((a) => a.status === 'Available');
      fill(
        asset,
        available.length === 0
          ? h('option', { value: '' }, 'No Available prepared asset')
          : available.map((a) => h('option', { value: a.id, selected: a.id === chosen }, assetTitle(a))),
      );
      limitNumber();
      await load();
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  }

  const card = h(
    'section',
    { class: 'card', 'aria-labelledby': 'wm-sessions-title' },
    h(
      'div',
      { class: 'title-row' },
      h('h2', { id: 'wm-sessions-title' }, 'Sessions'),
      h('span', { class: 'spacer' }),
      h('label', { for: 'wm-sessions-shown', class: 'inline' }, 'Show'),
      shown,
    ),
    h('p', { class: 'muted' }, 'One session per viewer of a prepared asset: the number its segments spell. A revoked session plays no more.'),
    alert,
    h(
      'table',
      { class: 'stacking', 'aria-label': 'Sessions' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['User name', 'User number', 'Asset', 'Status', 'Created', ''].map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      body,
    ),
    pager,
    form,
  );
  return { card, assetsChanged };
}
