// A preset picker: the platform's presets (`GET /transcoder/v1/presets`), the chosen one's description shown under it.
import { errorText, fill, guard, h } from '/console/dom.js';

/** Answers `{ field, select }`: `field` holds the label, the select and the description; `none` labels an empty choice. */
export function presetPicker(session, signal, { id, label = 'Preset', first = 'remux-hls-mp4', none, onError = () => {} }) {
  const select = guard(h('select', { id, 'aria-describedby': `${id}-help` }, h('option', { value: '' }, 'Loading presets…')), session);
  const help = h('p', { id: `${id}-help`, class: 'muted' });
  const presets = [];
  const describe = () => fill(help, presets.find((p) => p.id === select.value)?.description ?? '');
  select.addEventListener('change', describe);
  (async () => {
    for await (const p of session.client.paginate('/transcoder/v1/presets', {}, { signal })) presets.push(p);
    fill(
      select,
      none ? h('option', { value: '' }, none) : null,
      presets.map((p) => h('option', { value: p.id }, p.name || p.id)),
    );
    // The fastest preset first when the platform has it: a first upload plays soonest.
    if (presets.some((p) => p.id === first)) select.value = first;
    describe();
  })().catch((e) => onError(errorText(e)));
  return { field: h('div', {}, h('label', { for: id }, label), select, help), select };
}
