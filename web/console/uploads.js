// The upload panel of the VOD screen: files chosen or dropped (several at once) go up in parallel parts through the
// SDK's uploadFile, each with a progress bar, speed and time left, and "Cancel". Where each upload stands is kept in
// localStorage (no secret: the file's id and the ETags of its parts), so that an upload a reload interrupted is
// resumed: the page asks for the file again (it cannot keep a chosen file over a reload) and sends the missing parts.
import { alertBox, errorText, fill, formatBytes, guard, h } from '/console/dom.js';
import { presetPicker } from '/console/presets.js';

const storageKey = (session) => `mediaplane.console.uploads.${session.tenant.id}`;
const readSaved = (session) => JSON.parse(localStorage.getItem(storageKey(session)) ?? '[]');
function writeSaved(session, list) {
  if (list.length === 0) localStorage.removeItem(storageKey(session));
  else localStorage.setItem(storageKey(session), JSON.stringify(list));
}
function save(session, record) {
  writeSaved(session, [...readSaved(session).filter((r) => r.state.fileId !== record.state.fileId), record]);
}
function forget(session, fileId) {
  writeSaved(
    session,
    readSaved(session).filter((r) => r.state.fileId !== fileId),
  );
}

/** The "Upload" card: a drop zone with the file input, the preset picker, and a row per upload. */
export function uploadPanel(session, signal) {
  const files = guard(h('input', { id: 'upload-files', type: 'file', multiple: true, accept: 'video/*,audio/*' }), session);
  const upload = guard(h('button', { type: 'submit' }, 'Upload'), session);
  const rows = h('ul', { class: 'uploads', 'aria-label': 'Uploads' });
  const alert = alertBox();
  const { field: presetField, select: preset } = presetPicker(session, signal, { id: 'preset', onError: (text) => alert.show(text) });

  const start = (list) => {
    alert.show();
    if (list.length === 0) return alert.show('Choose one or more files first.');
    for (const file of list) rows.append(uploadRow(session, file, { preset: preset.value }));
  };

  const zone = h(
    'div',
    { class: 'dropzone' },
    h('label', { for: 'upload-files' }, 'Files'),
    files,
    h('p', { class: 'muted' }, 'Choose files, or drop them anywhere on this card: each goes up in parallel parts.'),
  );
  const form = h(
    'form',
    {
      class: 'card',
      onsubmit: (event) => {
        event.preventDefault();
        start([...files.files]);
        files.value = '';
      },
    },
    h('h2', {}, 'Upload'),
    session.canWrite ? null : h('p', { class: 'note' }, session.readOnlyReason),
    h('div', { class: 'row' }, zone, presetField),
    alert,
    upload,
    rows,
  );
  if (session.canWrite) {
    form.addEventListener('dragover', (e) => {
      e.preventDefault();
      form.classList.add('dragging');
    });
    form.addEventListener('dragleave', (e) => {
      if (!form.contains(e.relatedTarget)) form.classList.remove('dragging');
    });
    form.addEventListener('drop', (e) => {
      e.preventDefault();
      form.classList.remove('dragging');
      start([...(e.dataTransfer?.files ?? [])]);
    });
  }
  for (const record of readSaved(session)) rows.append(interruptedRow(session, record, signal));
  return form;
}

/**
 * An upload a reload interrupted: still `Uploading` on the platform, it asks for its file again (the same name and
 * size) and resumes; gone or finished there, it is forgotten.
 */
function interruptedRow(session, record, signal) {
  const { client } = session;
  const { name, size } = record;
  const inputId = `resume-${record.state.fileId}`;
  const input = h('input', { id: inputId, type: 'file', accept: 'video/*,audio/*', class: 'inline-file' });
  const alert = alertBox();
  const row = h(
    'li',
    {},
    h('span', { class: 'name' }, name),
    h('span', { class: 'muted' }, `Interrupted at ${Math.round((100 * record.state.parts.length) / record.state.partsCount)}% · `),
    h('label', { for: inputId, class: 'inline' }, `Choose ${name} again to resume`),
    input,
    h('button', { type: 'button', class: 'quiet', 'aria-label': `Cancel upload of ${name}`, onclick: () => cancel() }, 'Cancel'),
    alert,
  );
  async function cancel() {
    await client.request('POST', '/vod/v1/files/{id}/cancel', { delete: true }, { params: { id: record.state.fileId } }).catch(() => {});
    forget(session, record.state.fileId);
    row.remove();
  }
  input.addEventListener('change', () => {
    const file = input.files[0];
    if (!file) return;
    if (file.name !== name || file.size !== size)
      return alert.show(`${file.name} (${formatBytes(file.size)}) is not the file this upload started with: ${name} (${formatBytes(size)}).`);
    row.replaceWith(uploadRow(session, file, record));
  });
  client
    .request('GET', '/vod/v1/files/{id}', undefined, { params: { id: record.state.fileId }, signal })
    .then((f) => {
      if (f.status !== 'Uploading') throw new Error('not uploading');
    })
    .catch(() => {
      if (signal.aborted) return;
      forget(session, record.state.fileId);
      row.remove();
    });
  return row;
}

/** One file's upload: progress, speed and time left, "Cancel"; then "Create asset" with the preset picked. */
function uploadRow(session, file, { preset, state }) {
  const { client } = session;
  const bar = h('progress', { max: 100, value: 0, 'aria-label': `Upload of ${file.name}` });
  const status = h('span', { class: 'muted' }, state ? 'Resuming…' : 'Starting…');
  const actions = h('span');
  const alert = alertBox();
  const row = h('li', {}, h('span', { class: 'name' }, file.name), bar, status, actions, alert);
  let saved = state;
  let cancel;

  function run() {
    cancel = new AbortController();
    const started = performance.now();
    let first;
    let latest;
    let drawing;
    const draw = () => {
      drawing = undefined;
      if (cancel.signal.aborted || !latest) return;
      const { loaded, total } = latest;
      // 100% is kept for the upload completed: bytes handed to the network are not yet stored.
      bar.value = total ? Math.min(99, Math.floor((loaded / total) * 100)) : 0;
      const seconds = (performance.now() - started) / 1000;
      const speed = seconds > 0 ? (loaded - first) / seconds : 0;
      const left = speed > 0 ? Math.ceil((total - loaded) / speed) : 0;
      fill(status, `${formatBytes(loaded)} of ${formatBytes(total)}`, speed > 0 ? ` · ${formatBytes(speed)}/s` : '', left > 0 ? ` · ${left} s left` : '');
    };
    fill(actions, h('button', { type: 'button', class: 'quiet', 'aria-label': `Cancel upload of ${file.name}`, onclick: onCancel }, 'Cancel'));
    alert.show();
    client
      .uploadFile(file, {
        signal: cancel.signal,
        keep: true,
        resume: saved,
        onState: (s) => {
          saved = s;
          save(session, { name: file.name, size: file.size, preset, state: s });
        },
        onProgress: (progress) => {
          first ??= progress.loaded;
          latest = progress;
          // Drawn at most every 250 ms: the browser reports progress many times a second per part in flight, and
          // drawing each report took a third of an upload's speed (bench/console).
          drawing ??= setTimeout(draw, 250);
        },
      })
      .then(({ fileId }) => {
        clearTimeout(drawing);
        forget(session, fileId);
        bar.value = 100;
        fill(status, `Uploaded ${formatBytes(file.size)}`);
        fill(actions, createButton(fileId));
      })
      .catch((e) => {
        clearTimeout(drawing);
        if (cancel.signal.aborted) return;
        // Kept on the platform: "Resume" sends the parts still missing.
        fill(status, 'Interrupted');
        fill(actions, h('button', { type: 'button', class: 'quiet', 'aria-label': `Resume upload of ${file.name}`, onclick: run }, 'Resume'));
        alert.show(errorText(e));
      });
  }

  async function onCancel() {
    cancel.abort(new Error('Upload cancelled'));
    fill(status, 'Cancelled');
    fill(actions);
    if (!saved) return;
    await client.request('POST', '/vod/v1/files/{id}/cancel', { delete: true }, { params: { id: saved.fileId } }).catch(() => {});
    forget(session, saved.fileId);
  }

  function createButton(fileId) {
    const create = guard(h('button', { type: 'button', 'aria-label': `Create asset from ${file.name}` }, 'Create asset'), session);
    create.addEventListener('click', async () => {
      create.disabled = true;
      alert.show();
      try {
        const title = file.name.replace(/\.[^.]+$/, '');
        const { id } = await client.request('POST', '/vod/v1/assets', { transcodedSources: [{ fileId }], preset, title });
        location.hash = `#/assets/${id}`;
      } catch (e) {
        alert.show(errorText(e));
        create.disabled = false;
      }
    });
    return create;
  }

  run();
  return row;
}
