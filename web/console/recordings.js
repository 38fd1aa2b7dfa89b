// The recordings of a channel (`GET /cvr/v1/recordings?channelId=`): each one's status, its catch-up and archive with
// "Play" and "Copy URL", and its outputs with their progress, added and removed (recordingOutputs.js); "Record" makes
// one from now (or the last minutes) until the channel stops, with catch-up, archive and an output as chosen.
import { alertBox, badge, copyButton, errorText, fill, formatDate, formatDuration, guard, h } from '/console/dom.js';
import { presetPicker } from '/console/presets.js';
import { outputsProgress, recordingOutputs } from '/console/recordingOutputs.js';

const POLL_MS = 3000;
const SETTLED = new Set(['Available', 'Error']);

/** Answers the card; `onPlay(endpoint)` plays an endpoint in the page's player. */
export function recordingsCard(session, channelId, { signal, onPlay }) {
  const { client } = session;
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const alert = alertBox();

  /** True while something is still to come (a recording or an output not settled, or a read that failed). */
  async function refresh() {
    try {
      const page = await client.request('GET', '/cvr/v1/recordings', undefined, { query: { channelId, limit: 20, sort: 'CreateDate', desc: true }, signal });
      const full = await Promise.all(page.items.map((r) => client.request('GET', '/cvr/v1/recordings/{id}', undefined, { params: { id: r.id }, signal })));
      const progress = await outputsProgress(client, full, signal);
      fill(list, full.length === 0 ? h('p', { class: 'muted' }, 'No recording of this channel yet.') : full.map((r) => recording(r, progress)));
      alert.show();
      return full.some((r) => !SETTLED.has(r.status) || r.outputs.some((o) => !SETTLED.has(o.status)));
    } catch (e) {
      // A read that failed (the network, a restart) is shown and tried again: stopping here would leave a recording
      // shown as Live for good.
      if (!signal.aborted) alert.show(errorText(e));
      return true;
    }
  }
  // One loop at a time; "Record" asks for more reads, so a read already under way that saw everything settled does not
  // end the loop before the new recording is shown.
  let polling = false;
  let asked = false;
  async function poll() {
    asked = true;
    if (polling) return;
    polling = true;
    while (!signal.aborted) {
      asked = false;
      if (!(await refresh()) && !asked) break;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    polling = false;
  }
  const outputs = recordingOutputs(session, { signal, onPlay, changed: poll });
  poll();

  const endpointButtons = (what, endpoints) =>
    endpoints.map((e) =>
      h(
        'span',
        { class: 'actions' },
        `${e.format} `,
        // The visible words begin the accessible name, which says which endpoint (WCAG 2.5.3, "label in name").
        h('button', { type: 'button', class: 'quiet', 'aria-label': `Play ${what} ${e.format}`, onclick: () => onPlay(e) }, 'Play'),
        copyButton('Copy URL', () => e.url, `Copy URL of ${what} ${e.format}`),
      ),
    );

  async function remove(r, title) {
    if (!confirm(`Delete the recording ${title} with its catch-up, archive and outputs?`)) return;
    alert.show();
    try {
      await client.request('DELETE', '/cvr/v1/recordings/{id}', undefined, { params: { id: r.id } });
    } catch (e) {
      alert.show(errorText(e));
    }
    refresh();
  }

  function recording(r, progress) {
    const title = r.metadata?.title || r.title || formatDate(r.source.liveChannelDetails.start);
    return h(
      'div',
      { class: 'output', 'data-recording': r.id },
      h(
        'div',
        { class: 'output-head' },
        h('strong', {}, title),
        badge(r.status),
        h('span', { class: 'muted' }, formatDuration(r.durationMilliseconds)),
        h('span', { class: 'spacer' }),
        guard(
          h('button', { type: 'button', class: 'danger quiet', 'aria-label': `Delete recording ${title}`, onclick: () => remove(r, title) }, 'Delete'),
          session,
        ),
      ),
      r.errorMessage ? h('p', { class: 'error-text' }, r.errorMessage) : null,
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Range'),
        h(
          'dd',
          {},
          formatDate(r.source.liveChannelDetails.start),
          ' → ',
          r.source.liveChannelDetails.end ? formatDate(r.source.liveChannelDetails.end) : 'until the channel stops',
        ),
        h('dt', {}, 'Catch-up'),
        h('dd', {}, r.catchup.enabled ? (r.catchup.endpoints.length ? endpointButtons('catch-up', r.catchup.endpoints) : 'not yet') : 'off'),
        h('dt', {}, 'Archive'),
        h('dd', {}, r.archive.enabled ? [r.archive.status ?? 'scheduled', ' ', endpointButtons('archive', r.archive.endpoints)] : 'off'),
      ),
      outputs.draw(r, title, progress),
    );
  }

  // "Record": from now, or the last minutes still retained, until the channel stops.
  const title = guard(h('input', { id: 'rec-title', maxLength: 1024 }), session);
  const from = guard(
    h(
      'select',
      { id: 'rec-from' },
      h('option', { value: '0' }, 'Now'),
      h('option', { value: '5' }, '5 minutes ago'),
      h('option', { value: '30' }, '30 minutes ago'),
    ),
    session,
  );
  const catchup = guard(h('input', { type: 'checkbox', id: 'rec-catchup', checked: true }), session);
  const archive = guard(h('input', { type: 'checkbox', id: 'rec-archive' }), session);
  const { field: presetField, select: preset } = presetPicker(session, signal, { id: 'rec-preset', label: 'Output', first: '', none: 'No output' });
  const record = guard(h('button', { type: 'submit' }, 'Record'), session);
  const formAlert = alertBox();
  const form = h(
    'form',
    {
      class: 'add-output',
      onsubmit: async (event) => {
        event.preventDefault();
        formAlert.show();
        record.disabled = true;
        const start = new Date(Date.now() - Number(from.value) * 60_000).toISOString();
        try {
          await client.request('POST', '/cvr/v1/recordings', {
            source: { type: 'LiveChannel', liveChannelDetails: { channelId, start } },
            catchup: { enabled: catchup.checked },
            archive: { enabled: archive.checked },
            ...(preset.value ? { outputs: [{ preset: preset.value }] } : {}),
            ...(title.value.trim() ? { title: title.value.trim() } : {}),
          });
          title.value = '';
          poll();
        } catch (e) {
          formAlert.show(errorText(e));
        }
        record.disabled = !session.canWrite;
      },
    },
    h('h3', {}, 'Record this channel'),
    h(
      'div',
      { class: 'row' },
      h('div', {}, h('label', { for: 'rec-title' }, 'Recording title'), title),
      h('div', {}, h('label', { for: 'rec-from' }, 'From'), from),
    ),
    h(
      'div',
      { class: 'checks' },
      h('span', {}, catchup, h('label', { for: 'rec-catchup', class: 'inline' }, 'Catch-up while it records')),
      h('span', {}, archive, h('label', { for: 'rec-archive', class: 'inline' }, 'Archive when done')),
    ),
    presetField,
    formAlert,
    record,
  );
  return h('div', { class: 'card' }, h('h2', {}, 'Recordings'), alert, list, form);
}
