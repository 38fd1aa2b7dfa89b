// Editing one DRM policy's fields (`PATCH /drm/v1/policies/{id}`): its name, the license duration, the rental window
// and playback duration (empty: no limit), persistence, the license types it grants and the concurrent streams.
import { alertBox, errorText, h, manageGuard } from '/console/dom.js';

/** Seconds as people read them: `2 d`, `48 h`, `90 s`; `null` is no limit. */
export const seconds = (n) => (n === null || n === undefined ? 'no limit' : n % 86400 === 0 ? `${n / 86400} d` : n % 3600 === 0 ? `${n / 3600} h` : `${n} s`);

const OUTPUTS = [
  ['Aes128', 'Aes128 (the HLS AES-128 key)'],
  ['ClearKey', 'ClearKey (the DASH ClearKey license)'],
];

/** The edit form of a policy; `done(policy)` after a save (the policy as the API answered it), `done()` on "Cancel". */
export function policyForm(session, policy, done) {
  const { client } = session;
  const id = (name) => `policy-edit-${name}`;
  const number = (name, value, attrs = {}) =>
    manageGuard(h('input', { id: id(name), type: 'number', step: 1, min: 1, value: value ?? '', 'aria-describedby': `${id(name)}-help`, ...attrs }), session);
  const name = manageGuard(h('input', { id: id('name'), required: true, maxLength: 256, value: policy.name }), session);
  const license = number('license', policy.licenseDurationSeconds, { required: true });
  const rental = number('rental', policy.rentalWindowSeconds);
  const playback = number('playback', policy.playbackDurationSeconds);
  const streams = number('streams', policy.concurrentStreams, { max: 1000 });
  const persistent = manageGuard(h('input', { type: 'checkbox', id: id('persistent'), checked: policy.persistent }), session);
  const outputs = OUTPUTS.map(([value]) =>
    manageGuard(h('input', { type: 'checkbox', id: id(value), value, checked: policy.allowedOutputs.includes(value) }), session),
  );
  const save = manageGuard(h('button', { type: 'submit' }, 'Save policy'), session);
  const alert = alertBox();
  // Empty means no limit (null); the API checks the ranges and says so in its own words.
  const orNull = (input) => (input.value.trim() === '' ? null : Number(input.value));
  const field = (input, label, text) =>
    h('div', {}, h('label', { for: input.id }, label), input, h('p', { class: 'muted small', id: `${input.id}-help` }, text));

  return h(
    'form',
    {
      class: 'add-output',
      'aria-label': `Edit policy ${policy.name}`,
      onsubmit: async (event) => {
        event.preventDefault();
        alert.show();
        const allowedOutputs = outputs.filter((o) => o.checked).map((o) => o.value);
        save.disabled = true;
        try {
          const saved = await client.request(
            'PATCH',
            '/drm/v1/policies/{id}',
            {
              name: name.value.trim(),
              licenseDurationSeconds: Number(license.value),
              rentalWindowSeconds: orNull(rental),
              playbackDurationSeconds: orNull(playback),
              persistent: persistent.checked,
              allowedOutputs,
              concurrentStreams: orNull(streams),
            },
            { params: { id: policy.id } },
          );
          done(saved);
        } catch (e) {
          alert.show(errorText(e));
          save.disabled = false;
        }
      },
    },
    h('h3', {}, `Edit policy ${policy.name}`),
    h(
      'div',
      { class: 'row' },
      h('div', {}, h('label', { for: id('name') }, 'Name'), name),
      field(license, 'License duration (seconds)', 'How long a license, and the token that obtains it, is valid.'),
      field(rental, 'Rental window (seconds)', 'From the viewer’s first license of a content; empty: no window.'),
      field(playback, 'Playback duration (seconds)', 'From a token’s first license; empty: no limit.'),
      field(streams, 'Concurrent streams', 'Tokens of one user holding a license at once; empty: no limit.'),
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Allowed outputs'),
      h(
        'div',
        { class: 'checks' },
        outputs.map((o, i) => h('span', {}, o, h('label', { for: o.id, class: 'inline' }, OUTPUTS[i][1]))),
      ),
    ),
    h('div', { class: 'checks' }, h('span', {}, persistent, h('label', { for: id('persistent'), class: 'inline' }, 'Persistent (offline) licenses'))),
    alert,
    h('div', { class: 'buttons' }, save, h('button', { type: 'button', class: 'quiet', onclick: () => done() }, 'Cancel')),
  );
}
