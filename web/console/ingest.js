// The ingest of a channel: the URL an encoder pushes to, split into the Server and the Stream key OBS asks for, each
// with a copy button. The key is hidden until "Show stream key" (it is a password: whoever has it can go on air), and
// "Rotate stream key" makes a new one (the old one stops working). A Viewer key reads it masked, as the API gives it.
import { copyButton, errorText, fill, guard, h } from '/console/dom.js';

/** Fills `el` with the ingest details of channel `id`. */
export async function showIngest(session, id, el, { signal } = {}) {
  const { client } = session;
  fill(el, h('p', { class: 'muted' }, 'Loading…'));
  let config;
  try {
    config = await client.request('GET', '/live/v1/channels/{id}/configuration', undefined, { params: { id }, signal });
  } catch (e) {
    return fill(el, h('p', { class: 'alert', role: 'alert' }, errorText(e)));
  }
  draw(config.input?.transportPrimaryIngestUrl, config.input?.transportSecondaryIngestUrl);

  function draw(url, backup) {
    if (!url) return fill(el, h('p', { class: 'muted' }, 'This channel has no push ingest URL.'));
    const cut = url.lastIndexOf('/');
    const server = url.slice(0, cut);
    const key = url.slice(cut + 1);
    const masked = /^\*+$/.test(key);
    const keyCell = h('code', { class: 'secret' }, '•'.repeat(16));
    const show = h(
      'button',
      {
        type: 'button',
        class: 'quiet',
        hidden: masked,
        onclick: () => {
          const shown = show.textContent.startsWith('Show');
          fill(keyCell, shown ? key : '•'.repeat(16));
          show.textContent = shown ? 'Hide stream key' : 'Show stream key';
        },
      },
      'Show stream key',
    );
    const rotate = guard(h('button', { type: 'button', class: 'quiet danger', onclick: onRotate }, 'Rotate stream key'), session);
    const row = (label, value, extra = null, cell = h('code', {}, value)) =>
      h(
        'tr',
        {},
        h('th', { scope: 'row' }, label),
        h('td', { class: 'url' }, cell),
        h('td', { class: 'actions' }, extra, masked && label !== 'Server' ? null : copyButton('Copy', () => value, `Copy ${label}`)),
      );
    fill(
      el,
      h(
        'table',
        { class: 'stacking ingest-table' },
        h(
          'tbody',
          {},
          row('Server', server),
          row('Stream key', key, show, masked ? h('code', {}, key) : keyCell),
          row('Ingest URL', url, null, h('code', {}, masked ? url : `${server}/${'•'.repeat(16)}`)),
          backup ? row('Backup ingest URL', backup, null, h('code', {}, masked ? backup : backup.replace(key, '•'.repeat(16)))) : null,
        ),
      ),
      h('p', { class: 'muted' }, 'In OBS: Settings → Stream → Service "Custom…", then paste the Server and the Stream key.'),
      session.canWrite ? rotate : h('p', { class: 'note' }, `${session.readOnlyReason} The stream key is masked.`),
    );
  }

  async function onRotate() {
    if (!confirm('Make a new stream key? The encoder using the old one is disconnected and must be given the new one.')) return;
    try {
      const r = await client.request('POST', '/live/v1/channels/{id}/stream-key/rotate', undefined, { params: { id } });
      draw(r.transportPrimaryIngestUrl, config.input?.transportSecondaryIngestUrl);
    } catch (e) {
      el.append(h('p', { class: 'alert', role: 'alert' }, errorText(e)));
    }
  }
}
