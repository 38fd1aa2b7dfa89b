// The outputs of an asset: each one's status and progress, its endpoints with "Play" and "Copy URL", "Remove output";
// and "Add output" with a preset picker.
import { alertBox, badge, copyButton, errorText, fill, formatBytes, guard, h } from '/console/dom.js';
import { presetPicker } from '/console/presets.js';

/** Answers `{ card, draw(asset, progress) }`; `onPlay(endpoint, siblings)` plays an endpoint, `changed()` reads again. */
export function outputsCard(session, signal, { assetId, onPlay, changed }) {
  const { client } = session;
  const list = h('div');
  const alert = alertBox();
  const { field, select } = presetPicker(session, signal, { id: 'output-preset', label: 'Preset of the new output', first: 'hls-h264-ladder' });
  const add = guard(h('button', { type: 'submit' }, 'Add output'), session);
  const form = h(
    'form',
    {
      class: 'add-output',
      onsubmit: async (event) => {
        event.preventDefault();
        alert.show();
        add.disabled = true;
        try {
          await client.request('POST', '/vod/v1/assets/{id}/outputs', { preset: select.value, assetId }, { params: { id: assetId } });
          changed();
        } catch (e) {
          alert.show(errorText(e));
        }
        add.disabled = false;
      },
    },
    h('h3', {}, 'Add an output'),
    field,
    add,
  );

  async function remove(output) {
    if (!confirm(`Remove the ${output.preset} output and its files?`)) return;
    alert.show();
    try {
      await client.request('DELETE', '/vod/v1/assets/{id}/outputs/{outputId}', undefined, { params: { id: assetId, outputId: output.id } });
      changed();
    } catch (e) {
      alert.show(errorText(e));
    }
  }

  function draw(asset, progress) {
    fill(
      list,
      asset.outputs.length === 0 ? h('p', { class: 'muted' }, 'No output: add one below.') : null,
      asset.outputs.map((o) => {
        const percent = o.status === 'Available' ? 100 : (progress.get(o.id) ?? 0);
        const mp4s = o.endpoints.filter((e) => e.format === 'MP4');
        return h(
          'div',
          { class: 'output', 'data-output': o.id },
          h(
            'div',
            { class: 'output-head' },
            h('strong', {}, o.preset),
            badge(o.status),
            h('progress', { max: 100, value: percent, 'aria-label': `Progress of the ${o.preset} output` }),
            h('span', { class: 'muted' }, `${percent}%`),
            h('span', { class: 'spacer' }),
            guard(h('button', { type: 'button', class: 'quiet', 'aria-label': `Remove the ${o.preset} output`, onclick: () => remove(o) }, 'Remove'), session),
          ),
          o.errorMessage ? h('p', { class: 'error-text' }, o.errorMessage) : null,
          o.endpoints.length === 0 ? null : endpointTable(o.endpoints, mp4s),
        );
      }),
    );
  }

  function endpointTable(endpoints, mp4s) {
    return h(
      'table',
      { class: 'stacking' },
      h('thead', {}, h('tr', {}, h('th', {}, 'Format'), h('th', {}, 'URL'), h('th', {}, 'Size'), h('th', {}, h('span', { class: 'sr-only' }, 'Actions')))),
      h(
        'tbody',
        {},
        endpoints.map((e) =>
          h(
            'tr',
            {},
            h('td', {}, e.format, e.protection && e.protection !== 'None' ? ` (${e.protection})` : ''),
            h('td', { class: 'url' }, h('code', {}, e.url)),
            h('td', {}, e.size ? formatBytes(e.size) : ''),
            h(
              'td',
              { class: 'actions' },
              h(
                'button',
                {
                  type: 'button',
                  class: 'quiet',
                  'aria-label': `Play ${e.format}${e.format === 'MP4' ? ` ${e.url.split('/').pop()}` : ''}`,
                  onclick: () => onPlay(e, mp4s),
                },
                'Play',
              ),
              copyButton('Copy URL', () => e.url),
            ),
          ),
        ),
      ),
    );
  }

  const card = h('div', { class: 'card' }, h('h2', {}, 'Outputs'), alert, list, form);
  return { card, draw };
}
