// The tenant's watermarking settings (`GET`/`PATCH /watermarking/v1/settings`): the user numbers' length, the segment
// duration and mark strength of assets prepared from now on, the redirector tokens' lifetime and the detection
// threshold. Changing them needs an Admin key (`manage`); the API checks each value and its refusal is shown as it is.
import { alertBox, errorText, fill, h, manageGuard } from '/console/dom.js';

/** Each setting: its field, label, input step, and what it means with the API's limits (src/modules/watermarking/schemas.ts). */
const FIELDS = [
  [
    'userNumberBits',
    'Code length (bits)',
    1,
    '4 to 40 bits of user number: viewers numbered 0 to 2^bits − 1; a code word is these bits and an 8-bit checksum.',
  ],
  ['segmentDuration', 'Segment duration (seconds)', 1, '1 to 10: one bit of the code a segment, in assets prepared from now on.'],
  ['strength', 'Mark strength', 1, '1 to 6 luma levels at the mark’s peaks, in assets prepared from now on: stronger survives more, shows more.'],
  ['tokenTtlSeconds', 'Session token lifetime (seconds)', 1, '60 to 31536000: how long a viewer’s playlist URL plays, unless asked otherwise.'],
  ['minConfidence', 'Detection threshold', 0.01, '0.1 to 1: the smallest mean vote every bit needs before detection names a viewer.'],
];

/** Answers the card; `changed(settings)` is told the settings after a save (the minimum asset length depends on them). */
export function watermarkingSettingsCard(session, { signal, changed }) {
  const { client } = session;
  const alert = alertBox();
  const status = h('p', { role: 'status', class: 'muted' });
  const inputs = Object.fromEntries(
    FIELDS.map(([name, , step]) => [
      name,
      manageGuard(h('input', { id: `wm-setting-${name}`, type: 'number', step, 'aria-describedby': `wm-setting-${name}-help` }), session),
    ]),
  );
  const save = manageGuard(h('button', { type: 'submit' }, 'Save watermarking settings'), session);
  let settings;

  const show = (s) => {
    settings = s;
    for (const [name] of FIELDS) inputs[name].value = String(s[name]);
  };

  (async () => {
    try {
      show(await client.request('GET', '/watermarking/v1/settings', undefined, { signal }));
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  })();

  const form = h(
    'form',
    {
      // The API checks the values and says what is wrong in its own words: the browser's own checks would say less.
      noValidate: true,
      onsubmit: async (event) => {
        event.preventDefault();
        alert.show();
        fill(status);
        if (!settings) return;
        // Only what changed is sent: another Admin's change of another setting is kept.
        const patch = {};
        for (const [name] of FIELDS) {
          const raw = inputs[name].value.trim();
          const value = raw === '' ? null : Number(raw);
          if (value !== settings[name]) patch[name] = value;
        }
        if (Object.keys(patch).length === 0) return fill(status, 'Nothing changed.');
        save.disabled = true;
        try {
          show(await client.request('PATCH', '/watermarking/v1/settings', patch));
          fill(status, 'Saved. Assets prepared before keep the settings they were prepared with.');
          changed(settings);
        } catch (e) {
          alert.show(errorText(e));
        }
        save.disabled = false;
      },
    },
    h(
      'div',
      { class: 'row' },
      FIELDS.map(([name, label, , help]) =>
        h('div', {}, h('label', { for: `wm-setting-${name}` }, label), inputs[name], h('p', { class: 'muted small', id: `wm-setting-${name}-help` }, help)),
      ),
    ),
    alert,
    h('div', { class: 'buttons' }, save, status),
  );
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'wm-settings-title' },
    h('h2', { id: 'wm-settings-title' }, 'Watermarking settings'),
    session.tenant.grants.includes('manage')
      ? null
      : h('p', { class: 'note' }, `This API key's role is ${session.tenant.roleType}: only an Admin key changes these.`),
    form,
  );
}
