// The "Edit" form of an asset: title, tags (comma-separated) and metadata (`key: value` lines), sent with
// `PATCH /vod/v1/assets/{id}`; the API's refusal is shown in its own words.
import { alertBox, errorText, guard, h } from '/console/dom.js';

/** Answers `{ card, load(asset) }`; `load` fills the fields from the asset unless the person is editing them. */
export function assetEditCard(session, { assetId, saved }) {
  const { client } = session;
  const title = guard(h('input', { id: 'asset-title', maxLength: 1024 }), session);
  const tags = guard(h('input', { id: 'asset-tags', 'aria-describedby': 'asset-tags-help', spellcheck: false }), session);
  const metadata = guard(h('textarea', { id: 'asset-metadata', rows: 4, spellcheck: false, 'aria-describedby': 'asset-metadata-help' }), session);
  const save = guard(h('button', { type: 'submit' }, 'Save changes'), session);
  const alert = alertBox();
  const done = h('p', { class: 'muted', role: 'status' });
  let dirty = false;

  const form = h(
    'form',
    {
      class: 'card',
      oninput: () => (dirty = true),
      onsubmit: async (event) => {
        event.preventDefault();
        alert.show();
        done.textContent = '';
        const meta = {};
        for (const line of metadata.value.split('\n')) {
          if (!line.trim()) continue;
          const cut = line.indexOf(':');
          if (cut <= 0) return alert.show(`Metadata: "${line.trim()}" is not a line "name: value".`);
          meta[line.slice(0, cut).trim()] = line.slice(cut + 1).trim();
        }
        save.disabled = true;
        try {
          const body = {
            title: title.value.trim(),
            tags: tags.value
              .split(',')
              .map((t) => t.trim())
              .filter(Boolean),
            metadata: meta,
          };
          const asset = await client.request('PATCH', '/vod/v1/assets/{id}', body, { params: { id: assetId } });
          dirty = false;
          load(asset);
          done.textContent = 'Saved.';
          saved(asset);
        } catch (e) {
          alert.show(errorText(e));
        }
        save.disabled = !session.canWrite;
      },
    },
    h('h2', {}, 'Edit'),
    h('label', { for: 'asset-title' }, 'Title'),
    title,
    h('label', { for: 'asset-tags' }, 'Tags'),
    tags,
    h('p', { id: 'asset-tags-help', class: 'muted small' }, 'Separated by commas.'),
    h('label', { for: 'asset-metadata' }, 'Metadata'),
    metadata,
    h('p', { id: 'asset-metadata-help', class: 'muted small' }, 'Your own fields, one a line: name: value.'),
    alert,
    h('div', { class: 'buttons' }, save, done),
  );

  function load(asset) {
    if (dirty) return;
    title.value = asset.title ?? '';
    tags.value = (asset.tags ?? []).join(', ');
    metadata.value = Object.entries(asset.metadata ?? {})
      .map(([k, v]) => `${k}: ${v}`)
      .join('\n');
  }
  return { card: form, load };
}
