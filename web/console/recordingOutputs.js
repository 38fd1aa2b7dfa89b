// The transcoded outputs of a recording (`POST /cvr/v1/recordings/{id}/outputs` with a preset of
// `GET /transcoder/v1/presets`, `DELETE .../outputs/{outputId}`): each one's status and progress
// (`POST /cvr/v1/recordings/outputs/progress`), its endpoints with "Play" and "Copy URL", "Remove"; and "Add output".
import { alertBox, badge, copyButton, errorText, fill, formatBytes, guard, h } from '/console/dom.js';

const DONE = new Set(['Available', 'Error']);
/** Statuses whose progress the API counts: an output waits (`Pending`) until its recording is recorded. */
const MAKING = new Set(['Queued', 'Processing']);

/** The progress of every output being made, by `recordingId/outputId`; a read that fails leaves it unknown (0). */
export async function outputsProgress(client, recordings, signal) {
  const wanted = recordings
    .map((r) => ({ id: r.id, outputs: r.outputs.filter((o) => MAKING.has(o.status)).map((o) => ({ id: o.id })) }))
    .filter((r) => r.outputs.length > 0);
  const progress = new Map();
  if (wanted.length === 0) return progress;
  try {
    for (const r of await client.request('POST', '/cvr/v1/recordings/outputs/progress', wanted, { signal }))
      for (const o of r.outputs) progress.set(`${r.id}/${o.id}`, o.progressPercent);
  } catch {
    // A recording deleted meanwhile (404) or a read that failed: the next read has it again.
  }
  return progress;
}

/** Answers `{ draw(recording, title, progress) }`; `onPlay(endpoint)` plays an endpoint, `changed()` reads again. */
export function recordingOutputs(session, { signal, onPlay, changed }) {
  const { client } = session;
  /** The presets, read once for every recording's picker. */
  const presets = (async () => {
    const all = [];
    for await (const p of client.paginate('/transcoder/v1/presets', {}, { signal })) all.push(p);
    return all;
  })();
  presets.catch(() => {});
  /** Each recording's "Add output" form, kept over the reads that draw the list again (its choice kept). */
  const forms = new Map();

  function formFor(r, title) {
    if (forms.has(r.id)) return forms.get(r.id);
    const id = `rec-output-${r.id}`;
    const select = guard(h('select', { id, 'aria-describedby': `${id}-help` }, h('option', { value: '' }, 'Loading presets…')), session);
    const help = h('p', { id: `${id}-help`, class: 'muted small' });
    const alert = alertBox();
    const add = guard(h('button', { type: 'submit', 'aria-label': `Add output to ${title}` }, 'Add output'), session);
    let list = [];
    const describe = () => fill(help, list.find((p) => p.id === select.value)?.description ?? '');
    select.addEventListener('change', describe);
    presets.then(
      (all) => {
        list = all;
        fill(
          select,
          all.map((p) => h('option', { value: p.id }, p.name || p.id)),
        );
        // The download first: one MP4 file of the whole recording.
        if (all.some((p) => p.id === 'mp4-h264-download')) select.value = 'mp4-h264-download';
        describe();
      },
      (e) => alert.show(errorText(e)),
    );
    const form = h(
      'form',
      {
        class: 'add-output',
        onsubmit: async (event) => {
          event.preventDefault();
          alert.show();
          if (!select.value) return alert.show('Choose a preset first.');
          add.disabled = true;
          try {
            await client.request('POST', '/cvr/v1/recordings/{id}/outputs', { preset: select.value }, { params: { id: r.id } });
            changed();
          } catch (e) {
            alert.show(errorText(e));
          }
          add.disabled = !session.canWrite;
        },
      },
      h('div', { class: 'inline-field' }, h('label', { for: id }, 'Preset of a new output'), select, add),
      help,
      alert,
    );
    forms.set(r.id, form);
    return form;
  }

  async function remove(r, o, alert) {
    if (!confirm(`Remove the ${o.preset} output of this recording and its files?`)) return;
    alert.show();
    try {
      await client.request('DELETE', '/cvr/v1/recordings/{recordingId}/outputs/{outputId}', undefined, { params: { recordingId: r.id, outputId: o.id } });
    } catch (e) {
      alert.show(errorText(e));
    }
    changed();
  }

  function endpointTable(o) {
    return h(
      'table',
      { class: 'stacking', 'aria-label': `Endpoints of the ${o.preset} output` },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'Format'),
          h('th', { scope: 'col' }, 'URL'),
          h('th', { scope: 'col' }, 'Size'),
          h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions')),
        ),
      ),
      h(
        'tbody',
        {},
        o.endpoints.map((e) =>
          h(
            'tr',
            {},
            h('td', {}, e.format, e.protection && e.protection !== 'None' ? ` (${e.protection})` : ''),
            h('td', { class: 'url' }, h('code', {}, e.url)),
            h('td', {}, e.size ? formatBytes(e.size) : ''),
            h(
              'td',
              { class: 'actions' },
              // The visible words begin the accessible name, which says which endpoint (WCAG 2.5.3).
              h('button', { type: 'button', class: 'quiet', 'aria-label': `Play ${o.preset} ${e.format}`, onclick: () => onPlay(e) }, 'Play'),
              copyButton('Copy URL', () => e.url, `Copy URL of ${o.preset} ${e.format}`),
            ),
          ),
        ),
      ),
    );
  }

  function draw(r, title, progress) {
    const alert = alertBox();
    return h(
      'div',
      { class: 'recording-outputs' },
      h('h3', {}, 'Outputs'),
      alert,
      r.outputs.length === 0 ? h('p', { class: 'muted' }, 'No output: add one below.') : null,
      r.outputs.map((o) => {
        const percent = o.status === 'Available' ? 100 : (progress.get(`${r.id}/${o.id}`) ?? 0);
        return h(
          'div',
          { class: 'output', 'data-output': o.id },
          h(
            'div',
            { class: 'output-head' },
            h('strong', {}, o.preset),
            badge(o.status),
            DONE.has(o.status) ? null : h('progress', { max: 100, value: percent, 'aria-label': `Progress of the ${o.preset} output` }),
            DONE.has(o.status) ? null : h('span', { class: 'muted' }, o.status === 'Pending' ? 'made once the recording is recorded' : `${percent}%`),
            h('span', { class: 'spacer' }),
            guard(
              h(
                'button',
                { type: 'button', class: 'danger quiet', 'aria-label': `Remove the ${o.preset} output`, onclick: () => remove(r, o, alert) },
                'Remove',
              ),
              session,
            ),
          ),
          o.errorMessage ? h('p', { class: 'error-text' }, o.errorMessage) : null,
          o.endpoints.length === 0 ? null : endpointTable(o),
        );
      }),
      formFor(r, title),
    );
  }

  return { draw };
}
