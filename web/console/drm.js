// DRM (`#/drm`): the license statistics of a range (`GET /drm/v1/statistics/license-metrics` as figures and
// `.../requests-histogram` as charts of requests, licenses and refusals) and the license log of that range
// (drmLog.js), the tenant's policies (`/drm/v1/policies`: list, create from a template, edit in drmPolicy.js, delete),
// and the DRM settings with the packager certificate (drmSettings.js). Changing them needs an Admin key (`manage`).
import { alertBox, errorText, fill, formatDate, h, manageGuard } from '/console/dom.js';
import { formatValue, lineChart } from '/console/charts.js';
import { licenseLogCard } from '/console/drmLog.js';
import { policyForm, seconds } from '/console/drmPolicy.js';
import { drmSettingsCard } from '/console/drmSettings.js';

const RANGES = [
  { label: 'Last 24 hours', ms: 24 * 3600_000, interval: 'Hour', step: 3600_000 },
  { label: 'Last hour', ms: 3600_000, interval: 'Minute', step: 60_000 },
  { label: 'Last 30 days', ms: 30 * 24 * 3600_000, interval: 'Day', step: 24 * 3600_000 },
];

function statisticsCard(session, { signal, onRange }) {
  const { client } = session;
  const alert = alertBox();
  const figures = h('dl', { class: 'facts' });
  const charts = h('div', { class: 'charts' });
  const range = h(
    'select',
    { id: 'drm-range', onchange: () => read() },
    RANGES.map((r, i) => h('option', { value: String(i) }, r.label)),
  );
  async function read() {
    const r = RANGES[Number(range.value)];
    const to = Date.now();
    const from = to - r.ms;
    const query = { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
    onRange(query);
    try {
      const [m, hist] = await Promise.all([
        client.request('GET', '/drm/v1/statistics/license-metrics', undefined, { query, signal }),
        client.request('GET', '/drm/v1/statistics/requests-histogram', undefined, { query: { ...query, interval: r.interval }, signal }),
      ]);
      fill(
        figures,
        [
          ['License requests', m.licenseRequests],
          ['Licenses granted', m.licenses],
          ['Refused', m.errors],
          ['Refusal rate', `${formatValue(m.errorRate * 100)} %`],
          ['Viewers', m.uniqueUsers],
          ['Contents', m.uniqueContents],
        ].flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, String(v))]),
      );
      const series = (key) => hist.items.map((i) => ({ time: i.time, value: i[key] }));
      fill(
        charts,
        [
          ['License requests', 'requests'],
          ['Licenses granted', 'licenses'],
          ['Refused requests', 'errors'],
        ].map(([name, key]) => lineChart({ name, unit: `per ${r.interval.toLowerCase()}`, data: series(key), from, to, gapMs: r.step * 1.5 })),
      );
      alert.show();
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  }
  read();
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'drm-stats-title' },
    h(
      'div',
      { class: 'title-row' },
      h('h2', { id: 'drm-stats-title' }, 'License statistics'),
      h('span', { class: 'spacer' }),
      h('label', { for: 'drm-range', class: 'inline' }, 'Range'),
      range,
    ),
    alert,
    figures,
    charts,
  );
}

function policiesCard(session, { signal, onChange }) {
  const { client } = session;
  const alert = alertBox();
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const editing = h('div', {});
  const edit = (p) =>
    fill(
      editing,
      policyForm(session, p, (saved) => {
        fill(editing);
        if (saved) refresh();
      }),
    );

  async function refresh() {
    try {
      const policies = [];
      for await (const p of client.paginate('/drm/v1/policies', {}, { signal })) policies.push(p);
      onChange(policies);
      fill(
        list,
        policies.length === 0
          ? h('p', { class: 'muted' }, 'No policy yet: licenses follow the defaults.')
          : h(
              'table',
              { class: 'stacking', 'aria-label': 'DRM policies' },
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  ['Name', 'License', 'Outputs', 'Streams', 'Created', ''].map((t) => h('th', { scope: 'col' }, t)),
                ),
              ),
              h(
                'tbody',
                {},
                policies.map((p) =>
                  h(
                    'tr',
                    { 'data-policy': p.id },
                    h('td', {}, p.name),
                    h('td', {}, seconds(p.licenseDurationSeconds), p.persistent ? ', persistent' : ''),
                    h('td', {}, p.allowedOutputs.join(', ')),
                    h('td', {}, p.concurrentStreams ?? 'no limit'),
                    h('td', {}, formatDate(p.createDate)),
                    h(
                      'td',
                      {},
                      manageGuard(
                        h('button', { type: 'button', class: 'quiet', 'aria-label': `Edit policy ${p.name}`, onclick: () => edit(p) }, 'Edit'),
                        session,
                      ),
                      manageGuard(
                        h(
                          'button',
                          {
                            type: 'button',
                            class: 'danger quiet',
                            'aria-label': `Delete policy ${p.name}`,
                            onclick: async () => {
                              if (!confirm(`Delete the policy ${p.name}? Tokens naming it get no more licenses.`)) return;
                              try {
                                await client.request('DELETE', '/drm/v1/policies/{id}', undefined, { params: { id: p.id } });
                              } catch (e) {
                                alert.show(errorText(e));
                              }
                              refresh();
                            },
                          },
                          'Delete',
                        ),
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
      if (!signal.aborted) alert.show(errorText(e));
    }
  }

  const name = manageGuard(h('input', { id: 'policy-name', maxLength: 256 }), session);
  const template = manageGuard(h('select', { id: 'policy-template' }), session);
  const explain = h('p', { class: 'muted', id: 'policy-template-help' });
  template.setAttribute('aria-describedby', 'policy-template-help');
  let templates = [];
  template.addEventListener('change', () => {
    const t = templates.find((x) => x.id === template.value);
    explain.textContent = t ? t.description : '';
  });
  (async () => {
    try {
      const page = await client.request('GET', '/drm/v1/policies/templates', undefined, { query: { limit: 100 }, signal });
      templates = page.items;
      fill(
        template,
        templates.map((t) => h('option', { value: t.id }, t.name)),
      );
      template.dispatchEvent(new Event('change'));
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  })();
  const create = manageGuard(h('button', { type: 'submit' }, 'Create policy'), session);
  const formAlert = alertBox();
  const form = h(
    'form',
    {
      class: 'add-output',
      onsubmit: async (event) => {
        event.preventDefault();
        formAlert.show();
        try {
          await client.request('POST', '/drm/v1/policies', { templateId: template.value, ...(name.value.trim() ? { name: name.value.trim() } : {}) });
          name.value = '';
          refresh();
        } catch (e) {
          formAlert.show(errorText(e));
        }
      },
    },
    h('h3', {}, 'Create a policy'),
    h(
      'div',
      { class: 'row' },
      h('div', {}, h('label', { for: 'policy-template' }, 'Template'), template, explain),
      h('div', {}, h('label', { for: 'policy-name' }, 'Policy name'), name),
    ),
    formAlert,
    create,
  );
  refresh();
  return h('section', { class: 'card', 'aria-labelledby': 'policies-title' }, h('h2', { id: 'policies-title' }, 'Policies'), alert, list, editing, form);
}

export function drmScreen(session, { signal }) {
  const log = licenseLogCard(session, { signal });
  const settings = drmSettingsCard(session, { signal });
  return h(
    'section',
    {},
    h('h1', {}, 'DRM'),
    session.tenant.grants.includes('manage')
      ? null
      : h('p', { class: 'note' }, `This API key's role is ${session.tenant.roleType}: only an Admin key changes DRM policies and settings.`),
    statisticsCard(session, { signal, onRange: (range) => log.show(range) }),
    log.card,
    policiesCard(session, { signal, onChange: (policies) => settings.policiesChanged(policies) }),
    settings.card,
  );
}
