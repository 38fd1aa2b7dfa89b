// The sign-in screen: a tenant id and an API key, checked by the API; its refusal is shown in the API's words.
import { alertBox, errorText, h } from '/console/dom.js';
import { signIn } from '/console/session.js';

export function signInScreen(onSignedIn) {
  const tenantId = h('input', { id: 'tenant-id', name: 'tenantId', required: true, autocomplete: 'username', spellcheck: false });
  const apiKey = h('input', { id: 'api-key', name: 'apiKey', type: 'password', required: true, autocomplete: 'current-password' });
  const submit = h('button', { type: 'submit' }, 'Sign in');
  const alert = alertBox();
  const form = h(
    'form',
    {
      class: 'card narrow',
      onsubmit: async (event) => {
        event.preventDefault();
        alert.show();
        submit.disabled = true;
        try {
          onSignedIn(await signIn(tenantId.value, apiKey.value));
        } catch (e) {
          alert.show(errorText(e));
          submit.disabled = false;
        }
      },
    },
    h('h1', {}, 'Sign in'),
    h('p', { class: 'muted' }, 'Your tenant id and an API key. The key stays in this browser tab until you close it.'),
    h('label', { for: 'tenant-id' }, 'Tenant ID'),
    tenantId,
    h('label', { for: 'api-key' }, 'API key'),
    apiKey,
    alert,
    submit,
  );
  return form;
}
