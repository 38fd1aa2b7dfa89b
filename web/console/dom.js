// The console's few DOM helpers: elements built in code (no templates, no framework), text always as text.

/** `h('button', { type: 'button', onclick }, 'Save')`: an element with properties, attributes and children. */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else if (name === 'class') el.className = value;
    else if (name in el && !name.includes('-')) el[name] = value;
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces what an element holds. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** The API's own message for a failed call (`MediaplaneError.message`), else the error's text. */
export const errorText = (e) => (e && typeof e.message === 'string' && e.message ? e.message : String(e));

/** A message region that screen readers announce; `show(text)` sets it, `show()` clears it. */
export function alertBox() {
  const el = h('p', { class: 'alert', role: 'alert', hidden: true });
  el.show = (text) => {
    el.textContent = text ?? '';
    el.hidden = !text;
  };
  return el;
}

/** A "Copy" button that puts `text()` on the clipboard and says so; `name` is its accessible name when `label` is short. */
export function copyButton(label, text, name) {
  const button = h(
    'button',
    {
      type: 'button',
      class: 'quiet',
      'aria-label': name,
      onclick: async () => {
        let said;
        try {
          await navigator.clipboard.writeText(text());
          said = 'Copied';
        } catch {
          // Without clipboard access (an insecure origin), the value stays selectable on the page.
          said = 'Select and copy by hand';
        }
        // The accessible name keeps the visible words in it (WCAG 2.5.3), and says which value it was.
        button.textContent = said;
        if (name) button.setAttribute('aria-label', `${name}: ${said}`);
        setTimeout(() => {
          button.textContent = label;
          if (name) button.setAttribute('aria-label', name);
        }, 2000);
      },
    },
    label,
  );
  return button;
}

/** A write control for a key that may not write: disabled, with the reason as its description. */
export function guard(control, session) {
  if (session.canWrite) return control;
  control.disabled = true;
  control.title = session.readOnlyReason;
  return control;
}

/** A control for what only an Admin key may do (`manage`: API keys, webhooks, tenant settings): disabled with the reason. */
export function manageGuard(control, session) {
  if (session.tenant.grants.includes('manage')) return control;
  control.disabled = true;
  control.title = `This API key's role is ${session.tenant.roleType}: only an Admin key changes this.`;
  return control;
}

export const formatDate = (iso) => (iso ? new Date(iso).toLocaleString() : '');
export const formatBytes = (n) =>
  n < 1024
    ? `${n} B`
    : n < 1024 ** 2
      ? `${(n / 1024).toFixed(1)} KiB`
      : n < 1024 ** 3
        ? `${(n / 1024 ** 2).toFixed(1)} MiB`
        : `${(n / 1024 ** 3).toFixed(2)} GiB`;
export const formatDuration = (ms) => {
  if (ms === null || ms === undefined) return '';
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};

/** A status as a coloured badge (Available green, Processing blue, Error red, ...). */
export const badge = (status) => h('span', { class: `badge badge-${String(status).toLowerCase()}` }, status);
