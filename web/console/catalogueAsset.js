// One streaming asset (`#/streaming/<id>`, `GET /streaming/v1/assets/{id}`): its details, the streaming title and
// description (`PATCH /streaming/v1/assets/{id}`), its playback settings (assetSettings.js), tags, chapters, images and
// frames, its embed and QR codes (with a playback token when it needs one) and its analytics. What streaming sets is the catalogue's own: a VOD asset's title and tags in VOD stay as they are.
import { alertBox, badge, errorText, fill, formatDate, formatDuration, guard, h } from '/console/dom.js';
import { TYPES } from '/console/catalogue.js';
import { chaptersCard } from '/console/chapters.js';
import { framesCard, imagesCard } from '/console/images.js';
import { embedCard } from '/console/embed.js';
import { analyticsCard } from '/console/analytics.js';
import { assetSettingsCard } from '/console/assetSettings.js';

/** Where the module that owns an asset shows it, when the console has a page for it. */
const OWNER_PAGE = { Vod: (a) => `#/assets/${a.id}`, LiveChannel: (a) => `#/channels/${a.id}` };
const setting = (s) => `${s.asset ?? `${s.tenant} (the tenant's)`}`;

function editCard(session, id, { saved }) {
  const { client } = session;
  const title = guard(h('input', { id: 'streaming-title', maxLength: 1024 }), session);
  const description = guard(h('textarea', { id: 'streaming-description', rows: 3, maxLength: 10_000 }), session);
  const save = guard(h('button', { type: 'submit' }, 'Save title and description'), session);
  const alert = alertBox();
  const done = h('p', { class: 'muted', role: 'status' });
  let dirty = false;
  const card = h(
    'form',
    {
      class: 'card',
      oninput: () => (dirty = true),
      onsubmit: async (event) => {
        event.preventDefault();
        alert.show();
        done.textContent = '';
        try {
          // Empty clears the catalogue's own: the module's title shows again.
          const body = { title: title.value.trim() || null, description: description.value.trim() || null };
          const asset = await client.request('PATCH', '/streaming/v1/assets/{assetId}', body, { params: { assetId: id } });
          dirty = false;
          done.textContent = 'Saved.';
          saved(asset);
        } catch (e) {
          alert.show(errorText(e));
        }
      },
    },
    h('h2', {}, 'Title and description'),
    h('label', { for: 'streaming-title' }, 'Title'),
    title,
    h('label', { for: 'streaming-description' }, 'Description'),
    description,
    h('p', { class: 'muted small' }, "Shown by the catalogue and the player; left empty, the module's own title shows."),
    alert,
    h('div', { class: 'buttons' }, save, done),
  );
  return {
    card,
    load(asset) {
      if (dirty) return;
      title.value = asset.title ?? '';
      description.value = asset.description ?? '';
    },
  };
}

/** The catalogue's tags (`POST .../tags`, `DELETE .../tags/{tag}`), each with "Remove", and a field to add some. */
function tagsCard(session, id, { changed }) {
  const { client } = session;
  const alert = alertBox();
  const list = h('ul', { class: 'agenda', 'aria-label': 'Tags' });
  const names = guard(h('input', { id: 'tag-names', 'aria-describedby': 'tag-names-help', spellcheck: false }), session);
  const add = guard(h('button', { type: 'submit' }, 'Add tags'), session);

  const run = async (work) => {
    alert.show();
    try {
      await work();
      changed();
    } catch (e) {
      alert.show(errorText(e));
    }
  };
  return {
    card: h(
      'section',
      { class: 'card', 'aria-labelledby': 'tags-title' },
      h('h2', { id: 'tags-title' }, 'Tags'),
      alert,
      list,
      h(
        'form',
        {
          class: 'add-output',
          onsubmit: (event) => {
            event.preventDefault();
            const tags = names.value
              .split(',')
              .map((t) => t.trim())
              .filter(Boolean)
              .map((name) => ({ name }));
            if (tags.length === 0) return alert.show('Name at least one tag.');
            run(async () => {
              await client.request('POST', '/streaming/v1/assets/{assetId}/tags', { tags }, { params: { assetId: id } });
              names.value = '';
            });
          },
        },
        h('label', { for: 'tag-names' }, 'Tags to add'),
        names,
        h('p', { id: 'tag-names-help', class: 'muted small' }, 'Separated by commas; a tag the asset has (in any case) is kept once.'),
        add,
      ),
    ),
    load(asset) {
      fill(
        list,
        asset.tags.length === 0
          ? h('li', { class: 'muted' }, 'No tags.')
          : asset.tags.map((t) =>
              h(
                'li',
                {},
                h('span', { class: 'tag' }, t.name),
                h('span', { class: 'spacer' }),
                guard(
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'danger quiet',
                      'aria-label': `Remove tag ${t.name}`,
                      onclick: () =>
                        run(() => client.request('DELETE', '/streaming/v1/assets/{assetId}/tags/{tag}', undefined, { params: { assetId: id, tag: t.id } })),
                    },
                    'Remove',
                  ),
                  session,
                ),
              ),
            ),
      );
    },
  };
}

export function catalogueAssetScreen(session, { signal, params: [id] }) {
  const { client } = session;
  const title = h('h1', {}, 'Streaming asset');
  const facts = h('dl', { class: 'facts' });
  const alert = alertBox();
  const reload = () => read();
  const edit = editCard(session, id, { saved: (asset) => draw(asset) });
  const tags = tagsCard(session, id, { changed: reload });
  const chapters = chaptersCard(session, id, { changed: reload });
  const images = imagesCard(session, id, { signal, changed: reload });
  const settings = assetSettingsCard(session, id, { saved: (asset) => draw(asset) });
  const embed = embedCard(session, id, { signal });

  function draw(asset) {
    fill(title, asset.title || asset.id);
    const owner = OWNER_PAGE[asset.type];
    fill(
      facts,
      [
        ['Type', TYPES[asset.type] ?? asset.type],
        ['Status', badge(asset.status)],
        ['ID', h('code', {}, asset.id)],
        ['Duration', formatDuration(asset.durationMilliseconds) || '–'],
        ['Preset', asset.preset ?? '–'],
        ['DRM', asset.isDrm ? 'Yes' : 'No'],
        ['Token required', setting(asset.settings.tokenRequired)],
        ['Cap', setting(asset.settings.cap)],
        ['Analytics', setting(asset.settings.analytics)],
        ['Created', formatDate(asset.createDate)],
        ['Changed', formatDate(asset.lastModificationDate)],
        owner ? ['Source', h('a', { href: owner(asset) }, `Open in ${asset.type === 'Vod' ? 'VOD' : 'Live'}`)] : null,
      ]
        .filter(Boolean)
        .flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
    );
    edit.load(asset);
    tags.load(asset);
    chapters.load(asset);
    images.load(asset);
    settings.load(asset);
    embed.load(asset);
  }

  async function read() {
    try {
      draw(await client.request('GET', '/streaming/v1/assets/{assetId}', undefined, { params: { assetId: id }, signal }));
      alert.show();
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  }
  read();

  return h(
    'section',
    {},
    h('p', {}, h('a', { href: '#/streaming' }, '← Streaming')),
    title,
    session.canWrite ? null : h('p', { class: 'note' }, session.readOnlyReason),
    alert,
    h('div', { class: 'grid two' }, h('div', { class: 'card' }, h('h2', {}, 'Details'), facts), embed.card),
    settings.card,
    chapters.card,
    h('div', { class: 'grid two' }, tags.card, edit.card),
    images.card,
    framesCard(session, id, { signal }),
    analyticsCard(session, { signal, assetId: id }),
  );
}
