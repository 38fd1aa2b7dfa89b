// Streaming (`#/streaming`): the catalogue (catalogue.js, each asset's page in catalogueAsset.js), the tenant's
// analytics (analytics.js), playback tokens (whether the tenant's assets need one by default, the signing key's id,
// its rotation) from `GET`/`PATCH /streaming/v1/settings`, and the domains whose pages may play the media
// (`/streaming/v1/domains`: list, add, remove). Changing tokens or domains needs an Admin key (`manage`).
import { alertBox, errorText, fill, h, manageGuard } from '/console/dom.js';
import { catalogueCard } from '/console/catalogue.js';
import { analyticsCard } from '/console/analytics.js';

function tokensCard(session, { signal }) {
  const { client } = session;
  const alert = alertBox();
  const status = h('p', { role: 'status', class: 'muted' });
  const facts = h('dl', { class: 'facts' });
  const required = manageGuard(h('input', { type: 'checkbox', id: 'token-required' }), session);
  const key = h('code', { class: 'secret' });
  const show = h('button', { type: 'button', class: 'quiet' }, 'Show signing key');

  function draw(settings) {
    const auth = settings.contentAcquisitionInfo.authorization;
    required.checked = auth.tokenRequiredPolicy;
    fill(
      facts,
      h('dt', {}, 'Signing algorithm'),
      h('dd', {}, auth.signingAlgorithm),
      h('dt', {}, 'Signing key id'),
      h('dd', {}, h('code', {}, auth.signingKeyId)),
      h('dt', {}, 'Signing key'),
      // Hidden until asked for, like a stream key (a screen is shared more often than a password); a key that may not
      // manage the tenant reads it masked from the API anyway.
      h('dd', {}, key, ' ', session.tenant.grants.includes('manage') ? show : null),
    );
    key.textContent = '••••••••••••';
    show.onclick = () => {
      key.textContent = auth.signingKey;
    };
  }

  async function read() {
    try {
      draw(await client.request('GET', '/streaming/v1/settings', undefined, { signal }));
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  }

  required.addEventListener('change', async () => {
    alert.show();
    status.textContent = '';
    try {
      draw(await client.request('PATCH', '/streaming/v1/settings', { tokenRequired: required.checked ? 'Enabled' : 'Disabled' }));
      status.textContent = required.checked
        ? 'Saved: assets need a playback token unless their own setting says otherwise.'
        : 'Saved: assets play without a token unless their own setting asks for one.';
    } catch (e) {
      alert.show(errorText(e));
      read();
    }
  });

  const rotate = manageGuard(
    h(
      'button',
      {
        type: 'button',
        class: 'danger quiet',
        onclick: async () => {
          if (!confirm('Make a new playback signing key? Tokens signed with the old one keep playing only during the overlap.')) return;
          alert.show();
          try {
            const r = await client.request('POST', '/streaming/v1/settings/signing-key/rotate', {});
            status.textContent = `Rotated: the new key's id is ${r.signingKeyId}.`;
          } catch (e) {
            alert.show(errorText(e));
          }
          read();
        },
      },
      'Rotate signing key',
    ),
    session,
  );

  read();
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'tokens-title' },
    h('h2', { id: 'tokens-title' }, 'Playback tokens'),
    alert,
    h('div', { class: 'checks' }, h('span', {}, required, h('label', { for: 'token-required', class: 'inline' }, 'Require a playback token by default'))),
    facts,
    rotate,
    status,
  );
}

function domainsCard(session, { signal }) {
  const { client } = session;
  const alert = alertBox();
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));

  async function refresh() {
    try {
      const domains = await client.request('GET', '/streaming/v1/domains', undefined, { signal });
      fill(
        list,
        domains.length === 0
          ? h('p', { class: 'muted' }, 'No domain: pages of any site may play the media.')
          : h(
              'ul',
              { class: 'agenda', 'aria-label': 'Allowed domains' },
              domains.map((d) =>
                h(
                  'li',
                  {},
                  h('code', {}, d.url),
                  h('span', { class: 'spacer' }),
                  manageGuard(
                    h(
                      'button',
                      {
                        type: 'button',
                        class: 'danger quiet',
                        'aria-label': `Remove ${d.url}`,
                        onclick: async () => {
                          if (!confirm(`Remove ${d.url}? Its pages can no longer play the media (unless no domain is left).`)) return;
                          try {
                            await client.request('DELETE', '/streaming/v1/domains', undefined, { query: { playerDomainId: d.playerDomainId } });
                          } catch (e) {
                            alert.show(errorText(e));
                          }
                          refresh();
                        },
                      },
                      'Remove',
                    ),
                    session,
                  ),
                ),
              ),
            ),
      );
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  }

  const url = manageGuard(h('input', { id: 'domain-url', required: true, placeholder: 'example.com, *.example.com or https://www.example.com' }), session);
  const add = manageGuard(h('button', { type: 'submit' }, 'Add domain'), session);
  const formAlert = alertBox();
  const form = h(
    'form',
    {
      class: 'add-output',
      onsubmit: async (event) => {
        event.preventDefault();
        formAlert.show();
        try {
          await client.request('POST', '/streaming/v1/domains', { url: url.value.trim() });
          url.value = '';
          refresh();
        } catch (e) {
          formAlert.show(errorText(e));
        }
      },
    },
    h('label', { for: 'domain-url' }, 'Domain to allow'),
    url,
    formAlert,
    add,
  );
  refresh();
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'domains-title' },
    h('h2', { id: 'domains-title' }, 'Allowed domains'),
    h('p', { class: 'muted' }, 'Once there is one, only pages of these domains may play the media and embed the player.'),
    alert,
    list,
    form,
  );
}

export function streamingScreen(session, { signal }) {
  return h(
    'section',
    {},
    h('h1', {}, 'Streaming'),
    catalogueCard(session, { signal }),
    analyticsCard(session, { signal }),
    session.tenant.grants.includes('manage')
      ? null
      : h('p', { class: 'note' }, `This API key's role is ${session.tenant.roleType}: only an Admin key changes these settings.`),
    tokensCard(session, { signal }),
    domainsCard(session, { signal }),
  );
}
