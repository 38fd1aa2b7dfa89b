// Editing one event of a channel's schedule (`PATCH /live/v1/events/{id}`): its title, times, "Start and stop the
// channel for it", tags and metadata. The API changes a start only while the event is Scheduled and an end until it is
// Finished, so those fields are fixed then, with the reason; only the times that changed are sent.
import { alertBox, errorText, guard, h } from '/console/dom.js';

/** A `datetime-local` input's value for a time (local, to the minute). */
export const localInput = (ms) => {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
};

/** The edit form of an event; `done(event)` after a save (as the API answered it), `done()` on "Cancel". */
export function eventForm(session, e, done) {
  const { client } = session;
  const id = (name) => `event-edit-${name}`;
  const fixed = (input, reason) => {
    if (!reason) return input;
    input.disabled = true;
    input.title = reason;
    return input;
  };
  const startValue = localInput(Date.parse(e.start));
  const endValue = localInput(Date.parse(e.end));
  const title = guard(h('input', { id: id('title'), maxLength: 1024, value: e.title ?? '' }), session);
  const start = fixed(
    guard(h('input', { id: id('start'), type: 'datetime-local', required: true, value: startValue }), session),
    e.status !== 'Scheduled' && `The event is ${e.status}: its start can no longer change.`,
  );
  const end = fixed(
    guard(h('input', { id: id('end'), type: 'datetime-local', required: true, value: endValue }), session),
    e.status === 'Finished' && 'The event is Finished: its end can no longer change.',
  );
  const ensure = guard(h('input', { type: 'checkbox', id: id('ensure'), checked: e.ensureChannel }), session);
  const tags = guard(h('input', { id: id('tags'), spellcheck: false, value: (e.tags ?? []).join(', '), 'aria-describedby': id('tags-help') }), session);
  const metadata = guard(
    h('textarea', {
      id: id('metadata'),
      rows: 3,
      spellcheck: false,
      'aria-describedby': id('metadata-help'),
      value: Object.entries(e.metadata ?? {})
        .map(([k, v]) => `${k}: ${v}`)
        .join('\n'),
    }),
    session,
  );
  const save = guard(h('button', { type: 'submit' }, 'Save event'), session);
  const alert = alertBox();

  return h(
    'form',
    {
      class: 'add-output',
      'aria-label': `Edit event ${e.title ?? 'Event'}`,
      onsubmit: async (event) => {
        event.preventDefault();
        alert.show();
        const a = new Date(start.value).getTime();
        const b = new Date(end.value).getTime();
        if (!(b > a)) return alert.show('The end must be after the start.');
        const meta = {};
        for (const line of metadata.value.split('\n')) {
          if (!line.trim()) continue;
          const cut = line.indexOf(':');
          if (cut <= 0) return alert.show(`Metadata: "${line.trim()}" is not a line "name: value".`);
          meta[line.slice(0, cut).trim()] = line.slice(cut + 1).trim();
        }
        // A time left as it was is not sent: the field holds minutes, the event may have seconds.
        const body = {
          ...(start.value !== startValue ? { start: new Date(a).toISOString() } : {}),
          ...(end.value !== endValue ? { end: new Date(b).toISOString() } : {}),
          ...(ensure.checked !== e.ensureChannel ? { ensureChannel: ensure.checked } : {}),
          title: title.value.trim() || null,
          tags: tags.value
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean),
          metadata: meta,
        };
        save.disabled = true;
        try {
          done(await client.request('PATCH', '/live/v1/events/{id}', body, { params: { id: e.id } }));
        } catch (err) {
          alert.show(errorText(err));
          save.disabled = false;
        }
      },
    },
    h('h3', {}, `Edit event ${e.title ?? 'Event'}`),
    h(
      'div',
      { class: 'row' },
      h('div', {}, h('label', { for: id('title') }, 'Title'), title),
      h('div', {}, h('label', { for: id('start') }, 'Start'), start),
      h('div', {}, h('label', { for: id('end') }, 'End'), end),
    ),
    h(
      'div',
      { class: 'row' },
      h('div', {}, h('label', { for: id('tags') }, 'Tags'), tags, h('p', { id: id('tags-help'), class: 'muted small' }, 'Separated by commas.')),
      h(
        'div',
        {},
        h('label', { for: id('metadata') }, 'Metadata'),
        metadata,
        h('p', { id: id('metadata-help'), class: 'muted small' }, 'Your own fields, one a line: name: value.'),
      ),
    ),
    h('div', { class: 'checks' }, h('span', {}, ensure, h('label', { for: id('ensure'), class: 'inline' }, 'Start and stop the channel for it'))),
    alert,
    h('div', { class: 'buttons' }, save, h('button', { type: 'button', class: 'quiet', onclick: () => done() }, 'Cancel')),
  );
}
