// A streaming asset's chapters (`POST /streaming/v1/assets/{id}/chapters`, `DELETE .../chapters/{chapterId}`): the
// list in order of start, "Add chapter", and "Edit" and "Delete" on each. The API has no operation that changes a
// chapter: an edit deletes it and adds the new one, and adds the old one back if the new one is refused (an overlap),
// so a refusal loses nothing.
import { alertBox, errorText, fill, guard, h } from '/console/dom.js';

/** `75`, `1:15` or `0:01:15` as seconds; undefined when it is none of these. */
export function parseSeconds(text) {
  const t = text.trim();
  if (/^\d+$/.test(t)) return Number(t);
  const m = /^(?:(\d+):)?(\d+):([0-5]\d)$/.exec(t);
  return m ? Number(m[1] ?? 0) * 3600 + Number(m[2]) * 60 + Number(m[3]) : undefined;
}

/** Seconds as `m:ss`, or `h:mm:ss` from an hour on. */
export function formatSeconds(s) {
  const hours = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return hours ? `${hours}:${String(mm).padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
}

const body = (c) => ({ chapters: [{ title: c.title ?? undefined, startSecond: c.startSecond, endSecond: c.endSecond }] });

export function chaptersCard(session, id, { changed }) {
  const { client } = session;
  const params = { assetId: id };
  const alert = alertBox();
  const rows = h('tbody');
  const formTitle = h('h3', {}, 'Add a chapter');
  const title = guard(h('input', { id: 'chapter-title', maxLength: 1024 }), session);
  const start = guard(h('input', { id: 'chapter-start', inputMode: 'numeric', placeholder: '0:00', 'aria-describedby': 'chapter-times-help' }), session);
  const end = guard(h('input', { id: 'chapter-end', inputMode: 'numeric', placeholder: 'the end', 'aria-describedby': 'chapter-times-help' }), session);
  const submit = guard(h('button', { type: 'submit' }, 'Add chapter'), session);
  const cancel = h('button', { type: 'button', class: 'quiet', hidden: true, onclick: () => editing(undefined) }, 'Cancel');
  const formAlert = alertBox();
  /** The chapter being edited, or undefined while the form adds one. */
  let current;

  function editing(chapter) {
    current = chapter;
    formAlert.show();
    fill(formTitle, chapter ? `Edit chapter ${chapter.title ?? ''}`.trim() : 'Add a chapter');
    submit.textContent = chapter ? 'Save chapter' : 'Add chapter';
    cancel.hidden = !chapter;
    title.value = chapter?.title ?? '';
    start.value = chapter ? formatSeconds(chapter.startSecond) : '';
    end.value = chapter ? formatSeconds(chapter.endSecond) : '';
    if (chapter) title.focus();
  }

  async function save(event) {
    event.preventDefault();
    formAlert.show();
    const startSecond = start.value.trim() ? parseSeconds(start.value) : 0;
    const endSecond = end.value.trim() ? parseSeconds(end.value) : undefined;
    if (startSecond === undefined || (end.value.trim() && endSecond === undefined))
      return formAlert.show('Times are seconds (75) or minutes and seconds (1:15).');
    if (endSecond !== undefined && endSecond <= startSecond) return formAlert.show('The end must be after the start.');
    const next = { title: title.value.trim() || undefined, startSecond, endSecond };
    submit.disabled = true;
    try {
      if (current) await replace(current, next);
      else await client.request('POST', '/streaming/v1/assets/{assetId}/chapters', body(next), { params });
      editing(undefined);
      changed();
    } catch (e) {
      formAlert.show(errorText(e));
    }
    submit.disabled = !session.canWrite;
  }

  async function replace(old, next) {
    await client.request('DELETE', '/streaming/v1/assets/{assetId}/chapters/{chapterId}', undefined, { params: { ...params, chapterId: old.id } });
    try {
      await client.request('POST', '/streaming/v1/assets/{assetId}/chapters', body(next), { params });
    } catch (e) {
      await client.request('POST', '/streaming/v1/assets/{assetId}/chapters', body(old), { params }).catch(() => {});
      changed();
      throw e;
    }
  }

  async function remove(chapter) {
    if (!confirm(`Delete the chapter ${chapter.title ?? formatSeconds(chapter.startSecond)}?`)) return;
    alert.show();
    try {
      await client.request('DELETE', '/streaming/v1/assets/{assetId}/chapters/{chapterId}', undefined, { params: { ...params, chapterId: chapter.id } });
      if (current?.id === chapter.id) editing(undefined);
      changed();
    } catch (e) {
      alert.show(errorText(e));
    }
  }

  const card = h(
    'section',
    { class: 'card', 'aria-labelledby': 'chapters-title' },
    h('h2', { id: 'chapters-title' }, 'Chapters'),
    alert,
    h(
      'div',
      { class: 'table-scroll' },
      h(
        'table',
        { class: 'chapters', 'aria-label': 'Chapters' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ['Title', 'Start', 'End'].map((c) => h('th', { scope: 'col' }, c)),
            h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions')),
          ),
        ),
        rows,
      ),
    ),
    h(
      'form',
      { class: 'add-output', onsubmit: save },
      formTitle,
      h('label', { for: 'chapter-title' }, 'Chapter title'),
      title,
      h(
        'div',
        { class: 'row' },
        h('div', {}, h('label', { for: 'chapter-start' }, 'Starts at'), start),
        h('div', {}, h('label', { for: 'chapter-end' }, 'Ends at'), end),
      ),
      h('p', { id: 'chapter-times-help', class: 'muted small' }, 'Seconds (75) or minutes and seconds (1:15); no end: the end of the asset.'),
      formAlert,
      h('div', { class: 'buttons' }, submit, cancel),
    ),
  );

  return {
    card,
    load(asset) {
      fill(
        rows,
        asset.chapters.length === 0
          ? h('tr', {}, h('td', { colSpan: 4, class: 'muted' }, 'No chapters yet.'))
          : asset.chapters.map((c) =>
              h(
                'tr',
                { 'data-chapter': c.id },
                h('td', {}, c.title ?? '–'),
                h('td', {}, formatSeconds(c.startSecond)),
                h('td', {}, formatSeconds(c.endSecond)),
                h(
                  'td',
                  { class: 'actions' },
                  guard(
                    h('button', { type: 'button', class: 'quiet', 'aria-label': `Edit chapter ${c.title ?? c.id}`, onclick: () => editing(c) }, 'Edit'),
                    session,
                  ),
                  guard(
                    h(
                      'button',
                      { type: 'button', class: 'danger quiet', 'aria-label': `Delete chapter ${c.title ?? c.id}`, onclick: () => remove(c) },
                      'Delete',
                    ),
                    session,
                  ),
                ),
              ),
            ),
      );
    },
  };
}
