// The webhooks of the Settings screen (`/notifications/v1/webhook`): each with its health, URL and event types;
// "Send test", the event log with each delivery's attempts, "Edit" (name, URL, event types, enabled: `PATCH`, which
// also makes an Unhealthy webhook Healthy again when it is enabled) and "Delete"; "Create a webhook".
import { alertBox, badge, errorText, fill, formatDate, h, manageGuard } from '/console/dom.js';

export function webhooksCard(session, { signal }) {
  const { client } = session;
  const alert = alertBox();
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const result = h('p', { role: 'status', class: 'muted' });
  // The event types, read once for the create form and every edit form.
  const typesRead = client.request('GET', '/notifications/v1/webhook-events/types', undefined, { signal }).then((r) => r.data);
  typesRead.catch(() => {});
  /** A checkbox per event type, `chosen` ticked; ids start with `prefix` (one page holds several such lists). */
  const typeChecks = (into, prefix, chosen = []) =>
    typesRead.then(
      (types) =>
        fill(
          into,
          types.map((t, i) =>
            h(
              'span',
              {},
              manageGuard(h('input', { type: 'checkbox', id: `${prefix}-${i}`, value: t, checked: chosen.includes(t) }), session),
              h('label', { for: `${prefix}-${i}`, class: 'inline' }, t),
            ),
          ),
        ),
      (e) => {
        if (!signal.aborted) fill(into, h('span', { class: 'error-text' }, errorText(e)));
      },
    );
  const checked = (into) => [...into.querySelectorAll('input:checked')].map((i) => i.value);

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
    const editing = h('div', {});
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
          h('button', { type: 'button', class: 'quiet', 'aria-label': `Edit webhook ${w.name}`, onclick: () => fill(editing, editForm(w, editing)) }, 'Edit'),
          session,
        ),
        manageGuard(
          h('button', { type: 'button', class: 'danger quiet', 'aria-label': `Delete webhook ${w.name}`, onclick: () => remove(w) }, 'Delete'),
          session,
        ),
      ),
      h('p', { class: 'muted' }, h('code', {}, w.url), ' · ', w.eventTypes.join(', ')),
      editing,
      log,
    );
  }

  /** "Edit": the webhook's name, URL, event types and whether it is enabled, sent with `PATCH`. */
  function editForm(w, into) {
    const id = (name) => `hook-edit-${w.id}-${name}`;
    const name = manageGuard(h('input', { id: id('name'), required: true, maxLength: 256, value: w.name }), session);
    const url = manageGuard(h('input', { id: id('url'), type: 'url', required: true, value: w.url }), session);
    const types = h('div', { class: 'checks types' }, h('span', { class: 'muted' }, 'Loading the event types…'));
    typeChecks(types, id('type'), w.eventTypes);
    const enabled = manageGuard(h('input', { type: 'checkbox', id: id('enabled'), checked: w.isEnabled }), session);
    const formAlert = alertBox();
    return h(
      'form',
      {
        class: 'add-output',
        'aria-label': `Edit webhook ${w.name}`,
        onsubmit: async (event) => {
          event.preventDefault();
          formAlert.show();
          const eventTypes = checked(types);
          if (eventTypes.length === 0) return formAlert.show('Choose at least one event type.');
          try {
            await client.request(
              'PATCH',
              '/notifications/v1/webhook/{id}',
              { name: name.value.trim(), url: url.value.trim(), eventTypes, isEnabled: enabled.checked },
              { params: { id: w.id } },
            );
            refresh();
          } catch (e) {
            formAlert.show(errorText(e));
          }
        },
      },
      h('div', { class: 'row' }, h('div', {}, h('label', { for: id('name') }, 'Name'), name), h('div', {}, h('label', { for: id('url') }, 'URL'), url)),
      h('fieldset', {}, h('legend', {}, 'Event types'), types),
      h(
        'div',
        { class: 'checks' },
        h(
          'span',
          {},
          enabled,
          // Enabling again is how an Unhealthy webhook (deliveries failing) gets its deliveries back.
          h('label', { for: id('enabled'), class: 'inline' }, w.status === 'Unhealthy' ? 'Enabled (and Healthy again: deliveries resume)' : 'Enabled'),
        ),
      ),
      formAlert,
      h(
        'div',
        { class: 'buttons' },
        manageGuard(h('button', { type: 'submit' }, 'Save webhook'), session),
        h('button', { type: 'button', class: 'quiet', onclick: () => fill(into) }, 'Cancel'),
      ),
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
  typeChecks(types, 'hook-type');
  const form = h(
    'form',
    {
      class: 'add-output',
      onsubmit: async (event) => {
        event.preventDefault();
        formAlert.show();
        const eventTypes = checked(types);
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
