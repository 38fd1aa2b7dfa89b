// Suspect files of the Watermarking screen: a capture found elsewhere goes up in parallel parts to presigned URLs, as
// VOD files do (the SDK's uploadFile with `module: 'watermarking'`), a detection job reads it
// (`POST /watermarking/v1/detectjobs`), and its result says which viewer's session the marks spell, with the
// confidence, or why none was named (the API's own message: no asset recognised, bits too weak, a checksum...).
import { alertBox, badge, errorText, fill, formatBytes, formatDate, guard, h } from '/console/dom.js';

const PAGE_SIZE = 20;
const POLL_MS = 2000;
const detecting = (f) => f.detection && (f.detection.status === 'Pending' || f.detection.status === 'Processing');

/** What the detection found, in words: the viewer named, or the reason none was. */
function result(f) {
  const d = f.detection;
  if (f.uploadStatus !== 'Completed') return h('span', { class: 'muted' }, 'Not uploaded whole: no detection.');
  if (!d) return h('span', { class: 'muted' }, 'Not read yet.');
  if (detecting(f)) return h('span', { class: 'muted' }, `${d.progress}% read`);
  const confidence = typeof d.confidence === 'number' ? `confidence ${d.confidence.toFixed(2)}` : '';
  if (d.status === 'Detected')
    return h(
      'span',
      {},
      d.userName ? h('strong', {}, d.userName) : h('strong', {}, 'No session'),
      ` · user number ${d.userNumber}`,
      confidence ? ` · ${confidence}` : '',
      // A valid word with no session: the message says so.
      d.message ? h('span', { class: 'muted' }, ` · ${d.message}`) : null,
    );
  return h('span', {}, d.message ?? '', confidence ? h('span', { class: 'muted' }, ` (${confidence})`) : null);
}

export function suspectsCard(session, { signal }) {
  const { client } = session;
  const alert = alertBox();
  const body = h('tbody');
  const pager = h('div', { class: 'pager' });
  const uploads = h('ul', { class: 'uploads', 'aria-label': 'Suspect uploads' });
  let page = 1;
  let timer;

  async function load() {
    clearTimeout(timer);
    try {
      const res = await client.request('GET', '/watermarking/v1/files', undefined, {
        query: { page, limit: PAGE_SIZE, sort: 'CreateDate', desc: true },
        signal,
      });
      fill(body, res.items.length === 0 ? h('tr', {}, h('td', { colSpan: 6, class: 'muted' }, 'No suspect file yet.')) : res.items.map(fileRow));
      fill(
        pager,
        h('button', { type: 'button', class: 'quiet', disabled: page <= 1, onclick: () => ((page -= 1), load()) }, 'Previous page'),
        h('span', { class: 'muted' }, `Page ${res.pageNumber} of ${Math.max(1, res.pageCount)} · ${res.totalCount} files`),
        h('button', { type: 'button', class: 'quiet', disabled: !res.hasMore, onclick: () => ((page += 1), load()) }, 'Next page'),
      );
      alert.show();
      if (res.items.some(detecting) && !signal.aborted) timer = setTimeout(load, POLL_MS);
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  }
  signal.addEventListener('abort', () => clearTimeout(timer));

  async function detect(fileId) {
    alert.show();
    try {
      await client.request('POST', '/watermarking/v1/detectjobs', { fileId });
    } catch (e) {
      alert.show(errorText(e));
    }
    await load();
  }

  function fileRow(f) {
    const d = f.detection;
    return h(
      'tr',
      { 'data-file': f.id },
      h('td', {}, f.orginalFileName),
      h('td', {}, formatBytes(f.fileSize)),
      h('td', { class: 'wide' }, formatDate(f.createDate)),
      h(
        'td',
        {},
        badge(f.uploadStatus === 'Completed' ? (d?.status ?? 'Uploaded') : f.uploadStatus),
        detecting(f) ? h('progress', { max: 100, value: d.progress, 'aria-label': `Detection in ${f.orginalFileName}` }) : null,
      ),
      h('td', { class: 'detection' }, result(f)),
      h(
        'td',
        {},
        f.uploadStatus === 'Completed' && !detecting(f)
          ? guard(
              h(
                'button',
                { type: 'button', class: 'quiet', 'aria-label': `${d ? 'Detect again in' : 'Detect in'} ${f.orginalFileName}`, onclick: () => detect(f.id) },
                d ? 'Detect again' : 'Detect',
              ),
              session,
            )
          : null,
      ),
    );
  }

  /** One capture's upload (progress, speed) and then its detection job. */
  function upload(file) {
    const bar = h('progress', { max: 100, value: 0, 'aria-label': `Upload of ${file.name}` });
    const status = h('span', { class: 'muted' }, 'Starting…');
    const rowAlert = alertBox();
    const row = h('li', {}, h('span', { class: 'name' }, file.name), bar, status, rowAlert);
    uploads.append(row);
    const started = performance.now();
    client
      .uploadFile(file, {
        module: 'watermarking',
        signal,
        onProgress: ({ loaded, total }) => {
          // 100% is kept for the upload completed: bytes handed to the network are not yet stored.
          bar.value = total ? Math.min(99, Math.floor((loaded / total) * 100)) : 0;
          const seconds = (performance.now() - started) / 1000;
          fill(status, `${formatBytes(loaded)} of ${formatBytes(total)}`, seconds > 0 ? ` · ${formatBytes(loaded / seconds)}/s` : '');
        },
      })
      .then(async ({ fileId }) => {
        bar.value = 100;
        fill(status, `Uploaded ${formatBytes(file.size)}: detection started`);
        await detect(fileId);
        row.remove();
      })
      .catch((e) => {
        if (signal.aborted) return;
        fill(status, 'Failed');
        rowAlert.show(errorText(e));
        load();
      });
  }

  const input = guard(h('input', { id: 'wm-suspect', type: 'file', multiple: true, accept: 'video/*' }), session);
  const send = guard(h('button', { type: 'submit' }, 'Upload and detect'), session);
  const formAlert = alertBox();
  const form = h(
    'form',
    {
      onsubmit: (event) => {
        event.preventDefault();
        formAlert.show();
        if (input.files.length === 0) return formAlert.show('Choose a capture first.');
        for (const file of input.files) upload(file);
        input.value = '';
      },
    },
    h('label', { for: 'wm-suspect' }, 'Suspect capture'),
    input,
    h('p', { class: 'muted small' }, 'A copy found elsewhere: detection reads which viewer’s marks it carries (a capture needs one whole code word).'),
    formAlert,
    send,
    uploads,
  );

  load();
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'wm-files-title' },
    h('h2', { id: 'wm-files-title' }, 'Suspect files'),
    form,
    alert,
    h(
      'table',
      { class: 'stacking', 'aria-label': 'Suspect files' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['File', 'Size', 'Uploaded', 'Detection', 'Result', ''].map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      body,
    ),
    pager,
  );
}
