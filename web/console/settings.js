// Settings (`#/settings`): the tenant's API keys (`/core/v1/api-key`: a new key's secret shown once, with a copy
// button), its webhooks (`/notifications/v1/webhook`: create, "Send test", delete, the event log with each delivery's
// attempts) and the secret that signs their deliveries, with its rotation.
import { alertBox, badge, copyButton, errorText, fill, formatDate, h, manageGuard } from '/console/dom.js';

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

function webhooksCard(session, { signal }) {
  const { client } = session;
  const alert = alertBox();
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const result = h('p', { role: 'status', class: 'muted' });

  async function refresh() {
    try {
      const hooks = [];
      for await (const w of client.paginate('/notifications/v1/webhook', {}, { signal })) hooks.push(w);
      fill(list, hooks.length === 0 ? h('p', { class: 'muted' }, 'No webhooks yet.') : hooks.map(webhook));
      alert.show();
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  }

  function webhook(w) {
    const log = h('div', { class: 'event-log', hidden: true });
    const toggle = h('button', { type: 'button', class: 'quiet', 'aria-expanded': 'false', 'aria-label': `Event log of ${w.name}` }, 'Event log');
    toggle.addEventListener('click', async () => {
      const show = log.hidden;
      log.hidden = !show;
      toggle.setAttribute('aria-expanded', String(show));
      if (show) await readLog(w, log);
    });
    return h(
      'div',
      { class: 'output', 'data-webhook': w.id },
      h(
        'div',
        { class: 'output-head' },
        h('strong', {}, w.name),
        badge(w.isEnabled ? w.status : 'Disabled'),
        h('span', { class: 'spacer' }),
        manageGuard(h('button', { type: 'button', 'aria-label': `Send test to ${w.name}`, onclick: () => sendTest(w) }, 'Send test'), session),
        toggle,
        manageGuard(
          h('button', { type: 'button', class: 'danger quiet', 'aria-label': `Delete webhook ${w.name}`, onclick: () => remove(w) }, 'Delete'),
          session,
        ),
      ),
      h('p', { class: 'muted' }, h('code', {}, w.url), ' · ', w.eventTypes.join(', ')),
      log,
    );
  }

  async function readLog(w, into) {
    fill(into, h('p', { class: 'muted' }, 'Loading…'));
    try {
      const page = await client.request('GET', '/notifications/v1/webhook-events', undefined, {
        query: { webhookId: w.id, limit: 20, sort: 'OccuredAt', desc: true },
        signal,
      });
      fill(
        into,
        page.items.length === 0
          ? h('p', { class: 'muted' }, 'No events sent to this webhook yet.')
          : h(
              'table',
              { class: 'stacking', 'aria-label': `Events sent to ${w.name}` },
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  ['Event', 'Status', 'Occurred', 'Attempts'].map((t) => h('th', { scope: 'col' }, t)),
                ),
              ),
              h(
                'tbody',
                {},
                page.items.map((e) =>
                  h(
                    'tr',
                    {},
                    h('td', {}, e.type),
                    h('td', {}, badge(e.status)),
                    h('td', {}, formatDate(e.occuredAt)),
                    h('td', {}, e.sendAttempts.map((a) => `${formatDate(a.time)}: ${a.responseCode || 'no answer'}`).join('; ') || 'none yet'),
                  ),
                ),
              ),
            ),
      );
    } catch (e) {
      if (!signal.aborted) fill(into, h('p', { class: 'error-text' }, errorText(e)));
    }
  }

  async function sendTest(w) {
    alert.show();
    result.textContent = `Sending a test event to ${w.name}…`;
    try {
      const r = await client.request('POST', '/notifications/v1/webhook/{id}/test', undefined, { params: { id: w.id } });
      result.textContent = `${w.name} answered ${r.responseCode}${r.responseContent ? `: ${r.responseContent.slice(0, 200)}` : ''}`;
    } catch (e) {
      result.textContent = '';
      alert.show(errorText(e));
    }
  }

  async function remove(w) {
    if (!confirm(`Delete the webhook ${w.name}? Its pending deliveries are dropped.`)) return;
    try {
      await client.request('DELETE', '/notifications/v1/webhook/{id}', undefined, { params: { id: w.id } });
    } catch (e) {
      alert.show(errorText(e));
    }
    refresh();
  }

  const name = manageGuard(h('input', { id: 'hook-name', required: true, maxLength: 256 }), session);
  const url = manageGuard(h('input', { id: 'hook-url', type: 'url', required: true, placeholder: 'https://example.com/hooks/mediaplane' }), session);
  const types = h('div', { class: 'checks types' }, h('span', { class: 'muted' }, 'Loading the event types…'));
  const create = manageGuard(h('button', { type: 'submit' }, 'Create webhook'), session);
  const formAlert = alertBox();
  (async () => {
    try {
      const { data } = await client.request('GET', '/notifications/v1/webhook-events/types', undefined, { signal });
      fill(
        types,
        data.map((t, i) =>
          h(
            'span',
            {},
            manageGuard(h('input', { type: 'checkbox', id: `hook-type-${i}`, value: t }), session),
            h('label', { for: `hook-type-${i}`, class: 'inline' }, t),
          ),
        ),
      );
    } catch (e) {
      if (!signal.aborted) fill(types, h('span', { class: 'error-text' }, errorText(e)));
    }
  })();
  const form = h(
    'form',
    {
      class: 'add-output',
      onsubmit: async (event) => {
        event.preventDefault();
        formAlert.show();
        const eventTypes = [...types.querySelectorAll('input:checked')].map((i) => i.value);
        if (eventTypes.length === 0) return formAlert.show('Choose at least one event type.');
        try {
          await client.request('POST', '/notifications/v1/webhook', { name: name.value.trim(), url: url.value.trim(), eventTypes });
          name.value = '';
          url.value = '';
          for (const i of types.querySelectorAll('input:checked')) i.checked = false;
          refresh();
        } catch (e) {
          formAlert.show(errorText(e));
        }
      },
    },
    h('h3', {}, 'Create a webhook'),
    h('div', { class: 'row' }, h('div', {}, h('label', { for: 'hook-name' }, 'Webhook name'), name), h('div', {}, h('label', { for: 'hook-url' }, 'URL'), url)),
    h('fieldset', {}, h('legend', {}, 'Event types'), types),
    formAlert,
    create,
  );
  refresh();
  return h('section', { class: 'card', 'aria-labelledby': 'hooks-title' }, h('h2', { id: 'hooks-title' }, 'Webhooks'), alert, result, list, form);
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
