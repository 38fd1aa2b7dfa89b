// One asset: its facts and "Delete asset", the player (any endpoint, with a quality picker), the edit form, and its
// outputs with their progress read live until every one is done.
import { alertBox, badge, errorText, fill, formatDate, formatDuration, guard, h } from '/console/dom.js';
import { assetEditCard } from '/console/assetEdit.js';
import { outputsCard } from '/console/outputs.js';
import { playerCard } from '/console/player.js';

const POLL_MS = 2000;
const DONE = new Set(['Available', 'Error', 'Deleted']);

export function assetScreen(session, { signal, params: [id] }) {
  const { client } = session;
  const title = h('h1', {}, 'Asset');
  const facts = h('dl', { class: 'facts' });
  const alert = alertBox();
  const remove = guard(h('button', { type: 'button', class: 'danger' }, 'Delete asset'), session);
  const player = playerCard({ hint: 'Choose "Play" on an endpoint below to watch it here.' });
  const edit = assetEditCard(session, { assetId: id, saved: (asset) => drawFacts(asset) });
  const outputs = outputsCard(session, signal, { assetId: id, onPlay: (e, siblings) => player.start(e, siblings), changed: () => wake() });
  signal.addEventListener('abort', () => player.stop());

  remove.addEventListener('click', async () => {
    if (!confirm('Delete this asset and all its outputs?')) return;
    remove.disabled = true;
    try {
      await client.request('DELETE', '/vod/v1/assets/{id}', undefined, { params: { id } });
      location.hash = '#/assets';
    } catch (e) {
      alert.show(errorText(e));
      remove.disabled = false;
    }
  });

  function drawFacts(asset) {
    fill(title, asset.title || asset.id);
    fill(
      facts,
      h('dt', {}, 'Status'),
      h('dd', {}, badge(asset.status), asset.errorMessage ? h('span', { class: 'error-text' }, ' ', asset.errorMessage) : null),
      h('dt', {}, 'ID'),
      h('dd', {}, h('code', {}, asset.id)),
      h('dt', {}, 'Preset'),
      h('dd', {}, asset.preset),
      h('dt', {}, 'Duration'),
      h('dd', {}, formatDuration(asset.durationMilliseconds) || '–'),
      h('dt', {}, 'Tags'),
      h('dd', {}, (asset.tags ?? []).length ? asset.tags.map((t) => h('span', { class: 'tag' }, t)) : '–'),
      h('dt', {}, 'Created'),
      h('dd', {}, formatDate(asset.createDate)),
    );
  }

  /** Resolves the pause between two reads early: an output was added or removed. */
  let wake = () => {};
  /** Reads the asset, and its outputs' progress while they are being made, until every one is done. */
  async function poll() {
    while (!signal.aborted) {
      try {
        const asset = await client.request('GET', '/vod/v1/assets/{id}', undefined, { params: { id }, signal });
        const pending = asset.outputs.filter((o) => !DONE.has(o.status));
        const progress = new Map();
        if (pending.length > 0) {
          const [answer] = await client.request('POST', '/vod/v1/assets/outputs/progress', [{ id, outputs: pending.map((o) => ({ id: o.id })) }], { signal });
          for (const o of answer?.outputs ?? []) progress.set(o.id, o.progressPercent);
        }
        drawFacts(asset);
        edit.load(asset);
        outputs.draw(asset, progress);
        alert.show();
        // Done: wait for a change made here (an output added) before reading again.
        const idle = DONE.has(asset.status) && pending.length === 0;
        await new Promise((resolve) => {
          wake = resolve;
          if (!idle) setTimeout(resolve, POLL_MS);
        });
      } catch (e) {
        if (signal.aborted) return;
        alert.show(errorText(e));
        if (e.status === 404) return;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    }
  }
  poll();

  return h(
    'section',
    {},
    h('p', {}, h('a', { href: '#/assets' }, '← All assets')),
    title,
    alert,
    h(
      'div',
      { class: 'grid two' },
      player.card,
      h('div', { class: 'card' }, h('h2', {}, 'Details'), facts, remove, session.canWrite ? null : h('p', { class: 'note' }, session.readOnlyReason)),
    ),
    outputs.card,
    edit.card,
  );
}
