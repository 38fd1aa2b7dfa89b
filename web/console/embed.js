// An asset's embed code and QR code. The embed page is `/player/v1/{tenantId}/{assetId}` under the platform's public
// URL (`mediaplanePlayerInfo.embedUrl` of `GET /streaming/v1/settings`, with the asset's id), as an `<iframe>` snippet
// with "Copy"; the QR code is `GET /streaming/v1/qrcode/{id}` (a PNG of the same URL, with the same options), shown
// with a download link. Both are reads: any key may use them.
import { alertBox, copyButton, errorText, fill, h } from '/console/dom.js';

/** The embed page's options that the console offers (the spec's capitalised names); unticked, the player's default. */
const FLAGS = [
  ['Muted', 'Start muted'],
  ['Autoplay', 'Play on load (browsers allow it muted)'],
];

/** Text as it may stand in an HTML attribute value. */
const attribute = (text) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function embedCard(session, id, { signal }) {
  const { client } = session;
  const alert = alertBox();
  const code = h('textarea', { id: 'embed-code', rows: 4, readOnly: true, spellcheck: false });
  const link = h('a', { target: '_blank', rel: 'noopener' }, '');
  const qr = h('img', { class: 'qrcode', alt: '', width: 200, height: 200 });
  const download = h('a', { class: 'button-link', download: `qrcode-${id}.png` }, 'Download QR code');
  const flags = FLAGS.map(([name, label]) => ({ name, box: h('input', { type: 'checkbox', id: `embed-${name}`, onchange: () => draw() }), label }));
  let base;
  let title = 'Video';
  let qrUrl;
  signal.addEventListener('abort', () => qrUrl && URL.revokeObjectURL(qrUrl));

  const query = () => Object.fromEntries(flags.filter((f) => f.box.checked).map((f) => [f.name, 'true']));
  const playerUrl = () => {
    const url = new URL(`${base}/${encodeURIComponent(id)}`);
    for (const [name, value] of Object.entries(query())) url.searchParams.set(name, value);
    return url.href;
  };

  let drawing;
  async function draw() {
    if (!base) return;
    const url = playerUrl();
    code.value = `<iframe src="${attribute(url)}" title="${attribute(title)}" width="640" height="360" allow="autoplay; fullscreen; encrypted-media; picture-in-picture" allowfullscreen></iframe>`;
    link.href = url;
    fill(link, url);
    const mine = (drawing = {});
    try {
      const png = await session.download('/streaming/v1/qrcode/{id}', { params: { id }, query: query(), signal });
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

  (async () => {
    try {
      const [settings, asset] = await Promise.all([
        client.request('GET', '/streaming/v1/settings', undefined, { signal }),
        client.request('GET', '/streaming/v1/assets/{assetId}', undefined, { params: { assetId: id }, signal }),
      ]);
      base = settings.mediaplanePlayerInfo.embedUrl.replace(/\/+$/, '');
      title = asset.title || title;
      draw();
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  })();

  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'embed-title' },
    h('h2', { id: 'embed-title' }, 'Embed'),
    alert,
    h(
      'div',
      { class: 'checks' },
      flags.map((f) => h('span', {}, f.box, h('label', { for: f.box.id, class: 'inline' }, f.label))),
    ),
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
    h('div', { class: 'qr' }, qr, download),
  );
}
