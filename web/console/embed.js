// An asset's embed code and QR code. The embed page is `/player/v1/{tenantId}/{assetId}` under the platform's public
// URL (`mediaplanePlayerInfo.embedUrl` of `GET /streaming/v1/settings`, with the asset's id), as an `<iframe>` snippet
// with "Copy"; the QR code is `GET /streaming/v1/qrcode/{id}` (a PNG of the same URL, with the same options), shown
// with a download link. When the asset needs a playback token, the codes carry one made by `POST /streaming/v1/tokens`
// (its expiry said; the QR code's operation takes it as `token`), so that what is copied or scanned plays; a key that
// may not write cannot make one, and is told so.
import { alertBox, copyButton, errorText, fill, formatDate, guard, h } from '/console/dom.js';
import { applies } from '/console/assetSettings.js';

/** The embed page's options that the console offers (the spec's capitalised names); unticked, the player's default. */
const FLAGS = [
  ['Muted', 'Start muted'],
  ['Autoplay', 'Play on load (browsers allow it muted)'],
];
/** Lifetimes of the token in the codes: the API allows 10 s to a day. */
const LIFETIMES = [
  [3600, '1 hour'],
  [6 * 3600, '6 hours'],
  [86400, '24 hours'],
];

/** Text as it may stand in an HTML attribute value. */
const attribute = (text) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Answers `{ card, load(asset) }`: `load` is told the asset at each read (its title, whether it needs a token). */
export function embedCard(session, id, { signal }) {
  const { client } = session;
  const alert = alertBox();
  const code = h('textarea', { id: 'embed-code', rows: 4, readOnly: true, spellcheck: false });
  const link = h('a', { target: '_blank', rel: 'noopener' }, '');
  const qr = h('img', { class: 'qrcode', alt: '', width: 200, height: 200 });
  const download = h('a', { class: 'button-link', download: `qrcode-${id}.png` }, 'Download QR code');
  const qrBox = h('div', { class: 'qr' }, qr, download);
  const qrNote = h('p', { class: 'note', hidden: true });
  const flags = FLAGS.map(([name, label]) => ({ name, box: h('input', { type: 'checkbox', id: `embed-${name}`, onchange: () => draw() }), label }));
  const lifetime = guard(
    h(
      'select',
      { id: 'embed-token-lifetime', onchange: () => makeToken() },
      LIFETIMES.map(([s, label]) => h('option', { value: s }, label)),
    ),
    session,
  );
  const renew = guard(h('button', { type: 'button', class: 'quiet', onclick: () => makeToken() }, 'New token'), session);
  const tokenSaid = h('p', { class: 'small', role: 'status' });
  const tokenBox = h(
    'div',
    { class: 'token', hidden: true },
    h('div', { class: 'inline-field' }, h('label', { for: 'embed-token-lifetime' }, 'Token lifetime'), lifetime, renew),
    tokenSaid,
  );
  let base;
  let title = 'Video';
  /** Whether the asset's media needs a token (its own setting, else the tenant's), and the token the codes carry. */
  let needsToken = false;
  let token;
  let expiry;
  let qrUrl;
  signal.addEventListener('abort', () => {
    clearTimeout(expiry);
    if (qrUrl) URL.revokeObjectURL(qrUrl);
  });

  const query = () => Object.fromEntries(flags.filter((f) => f.box.checked).map((f) => [f.name, 'true']));
  const playerUrl = () => {
    const url = new URL(`${base}/${encodeURIComponent(id)}`);
    for (const [name, value] of Object.entries(query())) url.searchParams.set(name, value);
    if (needsToken && token) url.searchParams.set('token', token.token);
    return url.href;
  };

  async function makeToken() {
    if (!session.canWrite) return;
    try {
      token = await client.request('POST', '/streaming/v1/tokens', { assetId: id, expiresInSeconds: Number(lifetime.value) }, { signal });
      alert.show();
      // Said when it expires: the codes then no longer play.
      clearTimeout(expiry);
      expiry = setTimeout(sayToken, Date.parse(token.expirationDate) - Date.now() + 1000);
    } catch (e) {
      token = undefined;
      if (!signal.aborted) alert.show(errorText(e));
    }
    draw();
  }

  function sayToken() {
    tokenBox.hidden = !needsToken;
    if (!needsToken) return;
    if (!session.canWrite)
      fill(
        tokenSaid,
        `This asset needs a playback token, which this API key (role ${session.tenant.roleType}) cannot make: ` +
          'these codes carry none, so the player refuses them.',
      );
    else if (!token) fill(tokenSaid, 'This asset needs a playback token: making one…');
    else if (Date.parse(token.expirationDate) <= Date.now())
      fill(tokenSaid, `The playback token in these codes expired ${formatDate(token.expirationDate)}: “New token” makes another.`);
    else fill(tokenSaid, `This asset needs a playback token: these codes carry one that expires ${formatDate(token.expirationDate)}.`);
  }

  let drawing;
  async function draw() {
    if (!base) return;
    const url = playerUrl();
    code.value = `<iframe src="${attribute(url)}" title="${attribute(title)}" width="640" height="360" allow="autoplay; fullscreen; encrypted-media; picture-in-picture" allowfullscreen></iframe>`;
    link.href = url;
    fill(link, url);
    sayToken();
    // Without a token a code of this asset would open a refused player: none is drawn until the codes carry one.
    const tokenless = needsToken && !token;
    qrBox.hidden = tokenless;
    qrNote.hidden = !tokenless;
    fill(qrNote, 'No QR code: this asset needs a playback token, and these codes carry none. Share the player URL above once they do.');
    if (tokenless) return;
    const mine = (drawing = {});
    try {
      const params = needsToken ? { ...query(), token: token.token } : query();
      const png = await session.download('/streaming/v1/qrcode/{id}', { params: { id }, query: params, signal });
      if (mine !== drawing) return; // the options changed meanwhile
      if (qrUrl) URL.revokeObjectURL(qrUrl);
      qrUrl = URL.createObjectURL(png);
      qr.src = qrUrl;
      qr.alt = `QR code of ${url}`;
      download.href = qrUrl;
      alert.show();
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  }

  let asset;
  (async () => {
    try {
      const settings = await client.request('GET', '/streaming/v1/settings', undefined, { signal });
      base = settings.mediaplanePlayerInfo.embedUrl.replace(/\/+$/, '');
      if (asset) load(asset);
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  })();

  let drawn;
  function load(a) {
    asset = a;
    if (!base) return;
    const needed = applies(a.settings.tokenRequired);
    // Each read of the asset's page tells it the asset: drawn again (and the QR code asked for) only on a change.
    if (drawn === `${a.title}|${needed}`) return;
    drawn = `${a.title}|${needed}`;
    title = a.title || 'Video';
    const first = needed && !needsToken;
    needsToken = needed;
    draw();
    // A token is made when the asset comes to need one (again, when the last one has expired meanwhile); one that
    // expires while the page is open is said to have, and "New token" makes another.
    if (first && (!token || Date.parse(token.expirationDate) <= Date.now())) makeToken();
  }

  const card = h(
    'section',
    { class: 'card', 'aria-labelledby': 'embed-title' },
    h('h2', { id: 'embed-title' }, 'Embed'),
    alert,
    h(
      'div',
      { class: 'checks' },
      flags.map((f) => h('span', {}, f.box, h('label', { for: f.box.id, class: 'inline' }, f.label))),
    ),
    tokenBox,
    h('label', { for: 'embed-code' }, 'Embed code'),
    code,
    h(
      'div',
      { class: 'buttons' },
      copyButton('Copy embed code', () => code.value),
      copyButton('Copy player URL', () => link.href),
    ),
    h('p', { class: 'small wrap' }, 'Player: ', link),
    h('h3', {}, 'QR code'),
    h('p', { class: 'muted small' }, 'A phone that scans it opens the player.'),
    qrBox,
    qrNote,
  );
  return { card, load };
}
