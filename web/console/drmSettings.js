// The DRM settings (`/drm/v1/settings`: the policy of tokens that name none, the lifetime of tokens that ask for none)
// and the packager certificate (`/drm/v1/certificate`: once set, SPEKE answers keys only encrypted to it). Both need
// an Admin key (`manage`) to change.
import { alertBox, errorText, fill, formatDate, h, manageGuard } from '/console/dom.js';
import { seconds } from '/console/drmPolicy.js';

/** Answers `{ card, policiesChanged(policies) }`: the policies card tells it the policies (the default's picker). */
export function drmSettingsCard(session, { signal }) {
  const { client } = session;
  const alert = alertBox();
  const status = h('p', { role: 'status', class: 'muted' });
  const defaultPolicy = manageGuard(
    h('select', { id: 'drm-default-policy', onchange: () => (chosen = defaultPolicy.value) }, h('option', { value: '' }, 'Built-in: a day, both outputs')),
    session,
  );
  const ttl = manageGuard(
    h('input', { id: 'drm-token-ttl', type: 'number', min: 10, max: 86400, step: 1, required: true, 'aria-describedby': 'drm-token-ttl-help' }),
    session,
  );
  const ttlHelp = h('p', { class: 'muted small', id: 'drm-token-ttl-help' }, 'For tokens that ask for no lifetime: 10 to 86400 seconds.');
  const save = manageGuard(h('button', { type: 'submit' }, 'Save DRM settings'), session);
  let settings;
  let policies = [];
  /** The policy picked and not saved yet: kept when the list is drawn again (a policy renamed, added or deleted). */
  let chosen;

  function pick() {
    fill(
      defaultPolicy,
      h('option', { value: '' }, 'Built-in: a day, both outputs'),
      policies.map((p) => h('option', { value: p.id }, p.name)),
    );
    defaultPolicy.value = chosen ?? settings?.defaultPolicyId ?? '';
  }

  async function read() {
    try {
      settings = await client.request('GET', '/drm/v1/settings', undefined, { signal });
      ttl.value = String(settings.tokenTtlSeconds);
      ttlHelp.textContent = `For tokens that ask for no lifetime: 10 to 86400 seconds (now ${seconds(settings.tokenTtlSeconds)}).`;
      pick();
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  }

  const form = h(
    'form',
    {
      onsubmit: async (event) => {
        event.preventDefault();
        alert.show();
        status.textContent = '';
        save.disabled = true;
        try {
          settings = await client.request('PATCH', '/drm/v1/settings', { defaultPolicyId: defaultPolicy.value || null, tokenTtlSeconds: Number(ttl.value) });
          chosen = undefined;
          pick();
          status.textContent = `Saved ${formatDate(settings.lastModificationDate)}.`;
        } catch (e) {
          alert.show(errorText(e));
        }
        save.disabled = false;
      },
    },
    h(
      'div',
      { class: 'row' },
      h(
        'div',
        {},
        h('label', { for: 'drm-default-policy' }, 'Default policy'),
        defaultPolicy,
        h('p', { class: 'muted small' }, 'The policy of tokens that name none.'),
      ),
      h('div', {}, h('label', { for: 'drm-token-ttl' }, 'Token lifetime (seconds)'), ttl, ttlHelp),
    ),
    alert,
    h('div', { class: 'buttons' }, save, status),
  );
  read();
  const card = h(
    'section',
    { class: 'card', 'aria-labelledby': 'drm-settings-title' },
    h('h2', { id: 'drm-settings-title' }, 'DRM settings'),
    form,
    certificatePart(session, { signal, changed: read }),
  );
  return {
    card,
    policiesChanged(list) {
      policies = list;
      pick();
    },
  };
}

/** The packager certificate: what is set (subject, issuer, validity, fingerprint), a PEM to set, and its removal. */
function certificatePart(session, { signal, changed }) {
  const { client } = session;
  const alert = alertBox();
  const current = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const pem = manageGuard(
    h('textarea', {
      id: 'drm-certificate',
      rows: 5,
      spellcheck: false,
      placeholder: '-----BEGIN CERTIFICATE-----',
      'aria-describedby': 'drm-certificate-help',
    }),
    session,
  );
  const set = manageGuard(h('button', { type: 'submit' }, 'Set certificate'), session);
  const remove = manageGuard(h('button', { type: 'button', class: 'danger quiet', onclick: () => put(null) }, 'Remove certificate'), session);

  async function read() {
    try {
      show(await client.request('GET', '/drm/v1/certificate', undefined, { signal }));
    } catch (e) {
      if (signal.aborted) return;
      if (e.code === 'drm_certificate_not_found') return show(null);
      fill(current, h('p', { class: 'error-text' }, errorText(e)));
    }
  }
  function show(c) {
    remove.hidden = !c;
    fill(
      current,
      c
        ? h(
            'dl',
            { class: 'facts', 'aria-label': 'Packager certificate' },
            [
              ['Subject', c.subject],
              ['Issuer', c.issuer],
              ['Valid', `${formatDate(c.validFrom)} to ${formatDate(c.validTo)}`],
              ['SHA-256 fingerprint', h('code', {}, c.fingerprint256)],
            ].flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
          )
        : h('p', { class: 'muted' }, 'No certificate: SPEKE answers keys in clear to any caller with an Admin key.'),
    );
  }
  async function put(certificate) {
    if (certificate === null && !confirm('Remove the packager certificate? SPEKE then answers keys in clear again.')) return;
    alert.show();
    try {
      const c = await client.request('PUT', '/drm/v1/certificate', { certificate });
      show(c ?? null);
      pem.value = '';
      changed();
    } catch (e) {
      alert.show(errorText(e));
    }
  }
  read();
  return h(
    'form',
    {
      class: 'add-output',
      onsubmit: (event) => {
        event.preventDefault();
        if (!pem.value.trim()) return alert.show('Paste the certificate (PEM) first.');
        put(pem.value.trim());
      },
    },
    h('h3', {}, 'Packager certificate'),
    current,
    h('label', { for: 'drm-certificate' }, 'Certificate (PEM)'),
    pem,
    h(
      'p',
      { class: 'muted small', id: 'drm-certificate-help' },
      'An RSA certificate, not expired: SPEKE answers then encrypt every key to it (CPIX DeliveryKey).',
    ),
    alert,
    h('div', { class: 'buttons' }, set, remove),
  );
}
