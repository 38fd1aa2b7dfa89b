// A streaming asset's own playback settings (`PATCH /streaming/v1/assets/{id}/settings`): whether its media needs a
// playback token, concurrent access protection (cap) and analytics, each over the tenant default
// (`PATCH /streaming/v1/settings`, on the Streaming screen), which is shown beside it.
import { alertBox, errorText, fill, guard, h } from '/console/dom.js';

/** The settings offered (docs/decisions/streaming.md): the API's name, the label, what it does. */
const SETTINGS = [
  ['tokenRequired', 'Playback token required', 'Every manifest and segment needs a token (POST /streaming/v1/tokens); the embed code below carries one.'],
  ['cap', 'Concurrent access protection (cap)', 'A token (or a viewer without one) plays at most the tenant’s cap limit of sessions at once.'],
  ['analytics', 'Analytics', 'The embed player sends its quality-of-experience beacons for this asset.'],
];

/** What applies: the asset's own state, else the tenant's. */
export const applies = (setting) => (setting.asset ?? setting.tenant) === 'Enabled';

/** Answers `{ card, load(asset) }`; `saved(asset)` is told the asset as the API answers it after a change. */
export function assetSettingsCard(session, id, { saved }) {
  const { client } = session;
  const alert = alertBox();
  const status = h('p', { class: 'muted', role: 'status' });
  const selects = Object.fromEntries(
    SETTINGS.map(([name]) => [name, guard(h('select', { id: `asset-setting-${name}`, 'aria-describedby': `asset-setting-${name}-help` }), session)]),
  );
  const helps = Object.fromEntries(SETTINGS.map(([name]) => [name, h('p', { class: 'muted small', id: `asset-setting-${name}-help` })]));
  const save = guard(h('button', { type: 'submit' }, 'Save playback settings'), session);
  let current;
  let dirty = false;

  function load(asset) {
    if (dirty) return;
    current = asset.settings;
    for (const [name, , what] of SETTINGS) {
      const { asset: own, tenant } = asset.settings[name];
      fill(
        selects[name],
        // "As the tenant" is null to the API: the asset follows the tenant's default again.
        h('option', { value: '' }, `As the tenant: ${tenant}`),
        h('option', { value: 'Enabled' }, 'Enabled'),
        h('option', { value: 'Disabled' }, 'Disabled'),
      );
      selects[name].value = own ?? '';
      fill(
        helps[name],
        what,
        ' ',
        own === null ? `This asset follows the tenant default (${tenant}).` : `This asset's own setting; the tenant default is ${tenant}.`,
      );
    }
  }

  const form = h(
    'form',
    {
      oninput: () => (dirty = true),
      onsubmit: async (event) => {
        event.preventDefault();
        alert.show();
        fill(status);
        const patch = {};
        for (const [name] of SETTINGS) {
          const chosen = selects[name].value || null;
          if (chosen !== current?.[name].asset) patch[name] = chosen;
        }
        if (Object.keys(patch).length === 0) {
          dirty = false;
          return fill(status, 'Nothing changed.');
        }
        save.disabled = true;
        try {
          const asset = await client.request('PATCH', '/streaming/v1/assets/{assetId}/settings', patch, { params: { assetId: id } });
          dirty = false;
          fill(status, 'Saved.');
          saved(asset);
        } catch (e) {
          alert.show(errorText(e));
        }
        save.disabled = !session.canWrite;
      },
    },
    SETTINGS.map(([name, label]) => h('div', {}, h('label', { for: `asset-setting-${name}` }, label), selects[name], helps[name])),
    alert,
    h('div', { class: 'buttons' }, save, status),
  );
  return {
    card: h('section', { class: 'card', 'aria-labelledby': 'asset-settings-title' }, h('h2', { id: 'asset-settings-title' }, 'Playback settings'), form),
    load,
  };
}
