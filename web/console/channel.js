// One channel (`#/channels/<id>`): its status with "Start" and "Stop" (read again every few seconds), a live preview
// player, the ingest details for an encoder (OBS), its settings, and its recordings.
import { alertBox, badge, errorText, fill, guard, h } from '/console/dom.js';
import { channelEditCard } from '/console/channelEdit.js';
import { showIngest } from '/console/ingest.js';
import { playerCard } from '/console/player.js';
import { recordingsCard } from '/console/recordings.js';
import { statsCard } from '/console/stats.js';
import { eventsCard } from '/console/events.js';

const POLL_MS = 3000;

export function channelScreen(session, { signal, params: [id] }) {
  const { client } = session;
  const title = h('h1', {}, 'Channel');
  const status = h('span', {}, badge('…'));
  const alert = alertBox();
  const player = playerCard({ title: 'Preview', hint: 'The channel plays here once it is On and an encoder is sending.', live: true });
  const previewButtons = h('div', { class: 'buttons' });
  const ingest = h('div', { class: 'ingest' });
  player.card.append(previewButtons);
  signal.addEventListener('abort', () => player.stop());

  const start = guard(h('button', { type: 'button', onclick: () => act('start') }, 'Start'), session);
  const stop = guard(h('button', { type: 'button', class: 'danger', onclick: () => act('stop') }, 'Stop'), session);
  // Only an Off (or Error) channel can be deleted: the API answers 409 channel_not_off otherwise, and says so first here.
  const remove = guard(h('button', { type: 'button', class: 'danger quiet', onclick: () => removeChannel() }, 'Delete channel'), session);
  let name = '';

  async function removeChannel() {
    if (!confirm(`Delete the channel ${name} with its statistics and output files?`)) return;
    alert.show();
    try {
      await client.request('DELETE', '/live/v1/channels/{id}', undefined, { params: { id } });
      location.hash = '#/channels';
    } catch (e) {
      alert.show(errorText(e));
    }
  }

  async function act(action) {
    alert.show();
    try {
      await client.request('POST', `/live/v1/channels/{id}/${action}`, undefined, { params: { id } });
    } catch (e) {
      alert.show(errorText(e));
    }
    read();
  }

  function draw(c) {
    name = c.name;
    fill(title, c.name);
    fill(status, badge(c.status));
    const running = c.status === 'On' || c.status === 'Starting';
    if (session.canWrite) {
      start.disabled = running || c.status === 'Stopping';
      stop.disabled = !running;
      remove.disabled = c.status !== 'Off' && c.status !== 'Error';
      remove.title = remove.disabled ? 'Stop the channel before deleting it.' : '';
    }
    // Built again only when the endpoints change: a button replaced at each read could swallow a click.
    const key = (c.endpoints ?? []).map((e) => e.url).join(' ');
    if (previewButtons.dataset.endpoints !== key) {
      previewButtons.dataset.endpoints = key;
      fill(
        previewButtons,
        (c.endpoints ?? []).map((e) =>
          h('button', { type: 'button', class: 'quiet', 'aria-label': `Preview ${e.format}`, onclick: () => player.start(e) }, `Preview ${e.format}`),
        ),
      );
    }
    for (const b of previewButtons.querySelectorAll('button')) b.disabled = c.status !== 'On';
  }

  async function read() {
    try {
      draw(await client.request('GET', '/live/v1/channels/{id}', undefined, { params: { id }, signal }));
      alert.show();
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  }
  (async () => {
    while (!signal.aborted) {
      await read();
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  })();
  showIngest(session, id, ingest, { signal });

  return h(
    'section',
    {},
    h('p', {}, h('a', { href: '#/channels' }, '← All channels')),
    h('div', { class: 'title-row' }, title, status, h('span', { class: 'spacer' }), start, stop, remove),
    session.canWrite ? null : h('p', { class: 'note' }, session.readOnlyReason),
    alert,
    h('div', { class: 'grid two' }, player.card, h('div', { class: 'card' }, h('h2', {}, 'Ingest'), ingest)),
    statsCard(session, id, { signal }),
    eventsCard(session, id, { signal }),
    channelEditCard(session, id, { signal, saved: () => read() }),
    recordingsCard(session, id, { signal, onPlay: (e) => player.start(e) }),
  );
}
