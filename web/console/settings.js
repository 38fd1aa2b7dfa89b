// Settings (`#/settings`): the tenant's API keys (`/core/v1/api-key`: a new key's secret shown once, with a copy
// button), its webhooks (webhooks.js) and the secret that signs their deliveries, with its rotation.
import { alertBox, copyButton, errorText, fill, formatDate, h, manageGuard } from '/console/dom.js';
import { webhooksCard } from '/console/webhooks.js';

const ROLES = ['Viewer', 'Editor', 'Admin'];

function apiKeysCard(session, { signal }) {
  const { client } = session;
  const alert = alertBox();
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const secret = h('div', { class: 'secret-once', hidden: true });

  async function refresh() {
    try {
      const keys = [];
      for await (const k of client.paginate('/core/v1/api-key', {}, { signal })) keys.push(k);
      fill(
        list,
        h(
          'table',
          { class: 'stacking' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['Name', 'Role', 'Created', ''].map((t) => h('th', { scope: 'col' }, t)),
            ),
          ),
          h(
            'tbody',
            {},
            keys.map((k) =>
              h(
                'tr',
                { 'data-key': k.id },
                h('td', {}, k.name),
                h('td', {}, k.roleType),
                h('td', {}, formatDate(k.createdAt)),
                h(
                  'td',
                  {},
                  manageGuard(
                    h('button', { type: 'button', class: 'danger quiet', 'aria-label': `Delete API key ${k.name}`, onclick: () => remove(k) }, 'Delete'),
                    session,
                  ),
                ),
              ),
            ),
          ),
        ),
      );
      alert.show();
    } catch (e) {
      // A key that may not manage keys reads the API's refusal here.
      if (!signal.aborted) fill(list, h('p', { class: 'muted' }, errorText(e)));
    }
  }

  async function remove(k) {
    if (!confirm(`Delete the API key ${k.name}? Whatever uses it stops working at once.`)) return;
    try {
      await client.request('DELETE', '/core/v1/api-key/{id}', undefined, { params: { id: k.id } });
    } catch (e) {
      alert.show(errorText(e));
    }
    refresh();
  }

  const name = manageGuard(h('input', { id: 'key-name', required: true, maxLength: 256 }), session);
  const role = manageGuard(
    h(
      'select',
      { id: 'key-role' },
      ROLES.map((r) => h('option', { value: r }, r)),
    ),
    session,
  );
  const create = manageGuard(h('button', { type: 'submit' }, 'Create API key'), session);
  const form = h(
    'form',
    {
      class: 'add-output',
      onsubmit: async (event) => {
        event.preventDefault();
        alert.show();
        try {
          const made = await client.request('POST', '/core/v1/api-key', { name: name.value.trim(), roleType: role.value });
          name.value = '';
          // The secret is in this answer only: shown now, with a copy button, and gone when the screen is left.
          fill(
            secret,
            h('p', {}, h('strong', {}, `The secret of ${made.name}`), ' (shown only now: copy it to where it is used):'),
            h('code', { class: 'key-secret' }, made.key),
            ' ',
            copyButton('Copy', () => made.key, 'Copy the new API key'),
          );
          secret.hidden = false;
          refresh();
        } catch (e) {
          alert.show(errorText(e));
        }
      },
    },
    h('h3', {}, 'Create an API key'),
    h('div', { class: 'row' }, h('div', {}, h('label', { for: 'key-name' }, 'Key name'), name), h('div', {}, h('label', { for: 'key-role' }, 'Role'), role)),
    create,
  );
  refresh();
  return h('section', { class: 'card', 'aria-labelledby': 'keys-title' }, h('h2', { id: 'keys-title' }, 'API keys'), alert, secret, list, form);
}

/** The secret that signs every delivery: hidden until asked for, copied, rotated (the old one keeps signing for a day). */
function signingCard(session, { signal }) {
  const { client } = session;
  const alert = alertBox();
  const value = h('code', { class: 'secret' }, '••••••••••••');
  let secret;
  const reveal = manageGuard(
    h(
      'button',
      {
        type: 'button',
        class: 'quiet',
        onclick: async () => {
          alert.show();
          try {
            secret = (await client.request('GET', '/notifications/v1/webhook/signature-secret', undefined, { signal })).secret;
            value.textContent = secret;
            copy.hidden = false;
          } catch (e) {
            alert.show(errorText(e));
          }
        },
      },
      'Show signing secret',
    ),
    session,
  );
  const copy = copyButton('Copy', () => secret, 'Copy the signing secret');
  copy.hidden = true;
  const rotate = manageGuard(
    h(
      'button',
      {
        type: 'button',
        class: 'danger quiet',
        onclick: async () => {
          if (!confirm('Make a new signing secret? Deliveries are also signed with the old one for 24 hours: give receivers the new one meanwhile.')) return;
          alert.show();
          try {
            const r = await client.request('POST', '/notifications/v1/webhook/signature-secret/rotate', {});
            secret = r.secret;
            value.textContent = secret;
            copy.hidden = false;
            status.textContent = r.previousSecretExpirationDate
              ? `Rotated: the old secret also signs until ${formatDate(r.previousSecretExpirationDate)}.`
              : 'Rotated.';
          } catch (e) {
            alert.show(errorText(e));
          }
        },
      },
      'Rotate signing secret',
    ),
    session,
  );
  const status = h('p', { role: 'status', class: 'muted' });
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'signing-title' },
    h('h2', { id: 'signing-title' }, 'Webhook signing secret'),
    h('p', { class: 'muted' }, 'Every delivery carries a signature made with this secret; receivers check it.'),
    alert,
    h('p', {}, value, ' ', copy),
    h('div', { class: 'buttons' }, reveal, rotate),
    status,
  );
}

export function settingsScreen(session, { signal }) {
  return h(
    'section',
    {},
    h('h1', {}, 'Settings'),
    session.tenant.grants.includes('manage')
      ? null
      : h('p', { class: 'note' }, `This API key's role is ${session.tenant.roleType}: only an Admin key reads and manages API keys and webhooks.`),
    apiKeysCard(session, { signal }),
    webhooksCard(session, { signal }),
    signingCard(session, { signal }),
  );
}
