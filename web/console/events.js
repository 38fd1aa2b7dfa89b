// A channel's events on a schedule (`GET /live/v1/events?channelId=&searchStart=&searchEnd=`): a week as seven rows of
// 24 hours with each event drawn where it falls, and the same events as an agenda with their status, "Edit"
// (eventEdit.js) and "Delete"; "Schedule an event" creates one (`POST /live/v1/events`). The week's drawing is shared
// with the schedule of all channels (schedule.js).
import { alertBox, badge, errorText, fill, guard, h } from '/console/dom.js';
import { eventForm, localInput } from '/console/eventEdit.js';

const SVG = 'http://www.w3.org/2000/svg';
export const DAY = 24 * 3600_000;
const POLL_MS = 30_000;
const COLOURS = { Scheduled: '#2459d6', Live: '#16a34a', Finished: '#9ca3af' };

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) el.setAttribute(k, String(v));
  for (const c of children.flat(Infinity)) if (c !== undefined && c !== null) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

export const startOfDay = (ms) => {
  const d = new Date(ms);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
};
export const dayName = (ms) => new Date(ms).toLocaleDateString(undefined, { weekday: 'short', month: 'short', day: 'numeric' });
export const clock = (ms) => new Date(ms).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });

/** Each event's lane: events that overlap get different lanes, so neither hides the other. Answers `{ lane, lanes }`. */
function laneOf(events) {
  const ends = [];
  const lane = new Map();
  for (const e of [...events].sort((a, b) => Date.parse(a.start) - Date.parse(b.start))) {
    let i = ends.findIndex((end) => end <= Date.parse(e.start));
    if (i < 0) i = ends.push(0) - 1;
    ends[i] = Date.parse(e.end);
    lane.set(e, i);
  }
  return { lane, lanes: Math.max(ends.length, 1) };
}

/**
 * The week from `from` as seven rows of 24 hours, each event a bar in the rows it covers; events at the same time are
 * drawn in lanes one above the other. `name(e)` is how an event is called (its title; with its channel's name across
 * channels) and `onOpen(e)`, when given, what a click on its bar does (the agenda's links are the keyboard's way).
 */
export function weekChart(events, from, { name = (e) => e.title ?? 'Event', onOpen } = {}) {
  const W = 760;
  const LEFT = 104;
  const ROW = 26;
  const x = (ms, day) => LEFT + ((ms - day) / DAY) * (W - LEFT - 8);
  const { lane, lanes } = laneOf(events);
  const height = (ROW - 6) / lanes;
  const rows = [];
  for (let i = 0; i < 7; i++) {
    const day = from + i * DAY;
    const bars = events
      .filter((e) => Date.parse(e.start) < day + DAY && Date.parse(e.end) > day)
      .map((e) => {
        const a = Math.max(Date.parse(e.start), day);
        const b = Math.min(Date.parse(e.end), day + DAY);
        const bar = s(
          'rect',
          {
            x: x(a, day),
            y: 20 + i * ROW + 3 + lane.get(e) * height,
            width: Math.max(x(b, day) - x(a, day), 2),
            height: Math.max(height - (lanes > 1 ? 1 : 0), 1),
            rx: 3,
            fill: COLOURS[e.status] ?? '#6b7280',
            class: onOpen ? 'link' : undefined,
          },
          s('title', {}, `${name(e)}: ${clock(Date.parse(e.start))}–${clock(Date.parse(e.end))} (${e.status})`),
        );
        if (onOpen) bar.addEventListener('click', () => onOpen(e));
        return bar;
      });
    rows.push(
      s('line', { x1: LEFT, x2: W - 8, y1: 20 + i * ROW, y2: 20 + i * ROW, class: 'grid-line' }),
      s('text', { x: 4, y: 20 + i * ROW + 17 }, dayName(day)),
      bars,
    );
  }
  const hours = [0, 6, 12, 18, 24].map((hr) =>
    s(
      'text',
      { x: x(from + hr * 3600_000, from), y: 14, 'text-anchor': hr === 0 ? 'start' : hr === 24 ? 'end' : 'middle' },
      `${String(hr).padStart(2, '0')}:00`,
    ),
  );
  const label =
    events.length === 0
      ? `No events from ${dayName(from)} to ${dayName(from + 6 * DAY)}`
      : `${events.length} event${events.length === 1 ? '' : 's'} from ${dayName(from)} to ${dayName(from + 6 * DAY)}: ` +
        events.map((e) => `${name(e)} ${dayName(Date.parse(e.start))} ${clock(Date.parse(e.start))} to ${clock(Date.parse(e.end))}`).join('; ');
  return s('svg', { viewBox: `0 0 ${W} ${20 + 7 * ROW + 4}`, role: 'img', 'aria-label': label, class: 'chart schedule' }, hours, rows);
}

export function eventsCard(session, channelId, { signal }) {
  const { client } = session;
  const alert = alertBox();
  const chart = h('div', {});
  const agenda = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const weekTitle = h('span', { class: 'muted' });
  const editing = h('div', {});
  let from = startOfDay(Date.now());

  async function refresh() {
    try {
      const page = await client.request('GET', '/live/v1/events', undefined, {
        query: { channelId, searchStart: new Date(from).toISOString(), searchEnd: new Date(from + 7 * DAY).toISOString(), sort: 'Start', limit: 100 },
        signal,
      });
      fill(weekTitle, `${dayName(from)} – ${dayName(from + 6 * DAY)}`);
      fill(chart, weekChart(page.items, from));
      fill(
        agenda,
        page.items.length === 0
          ? h('p', { class: 'muted' }, 'No events this week.')
          : h('ul', { class: 'agenda', 'aria-label': 'Events of the week' }, page.items.map(eventItem)),
      );
      alert.show();
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  }

  function eventItem(e) {
    const title = e.title ?? 'Event';
    return h(
      'li',
      { 'data-event': e.id },
      h('span', { class: 'when' }, dayName(Date.parse(e.start)), ' ', clock(Date.parse(e.start)), '–', clock(Date.parse(e.end))),
      h('strong', {}, title),
      badge(e.status),
      e.ensureChannel ? h('span', { class: 'muted' }, 'starts the channel') : null,
      h('span', { class: 'spacer' }),
      guard(
        h(
          'button',
          {
            type: 'button',
            class: 'quiet',
            'aria-label': `Edit event ${title}`,
            onclick: () =>
              fill(
                editing,
                eventForm(session, e, async (saved) => {
                  fill(editing);
                  if (!saved) return;
                  // Shown in the week on screen, or in the seven days from its new start.
                  const a = Date.parse(saved.start);
                  if (a >= from + 7 * DAY || Date.parse(saved.end) <= from) from = startOfDay(a);
                  await refresh();
                }),
              ),
          },
          'Edit',
        ),
        session,
      ),
      guard(
        h(
          'button',
          {
            type: 'button',
            class: 'danger quiet',
            'aria-label': `Delete event ${title}`,
            onclick: async () => {
              if (!confirm(`Delete the event ${title}?`)) return;
              try {
                await client.request('DELETE', '/live/v1/events/{id}', undefined, { params: { id: e.id } });
              } catch (err) {
                alert.show(errorText(err));
              }
              refresh();
            },
          },
          'Delete',
        ),
        session,
      ),
    );
  }

  const move = (days) => {
    from = days === 0 ? startOfDay(Date.now()) : from + days * DAY;
    refresh();
  };

  // "Schedule an event": a title, a start and an end (the next full hour, for an hour, to begin with).
  const nextHour = Math.ceil(Date.now() / 3600_000) * 3600_000;
  const title = guard(h('input', { id: 'event-title', maxLength: 1024 }), session);
  const start = guard(h('input', { id: 'event-start', type: 'datetime-local', required: true, value: localInput(nextHour) }), session);
  const end = guard(h('input', { id: 'event-end', type: 'datetime-local', required: true, value: localInput(nextHour + 3600_000) }), session);
  const ensure = guard(h('input', { type: 'checkbox', id: 'event-ensure' }), session);
  const create = guard(h('button', { type: 'submit' }, 'Schedule event'), session);
  const formAlert = alertBox();
  const form = h(
    'form',
    {
      class: 'add-output',
      onsubmit: async (event) => {
        event.preventDefault();
        formAlert.show();
        const a = new Date(start.value).getTime();
        const b = new Date(end.value).getTime();
        if (!(b > a)) return formAlert.show('The end must be after the start.');
        create.disabled = true;
        try {
          await client.request('POST', '/live/v1/events', {
            channelId,
            start: new Date(a).toISOString(),
            end: new Date(b).toISOString(),
            ...(title.value.trim() ? { title: title.value.trim() } : {}),
            ...(ensure.checked ? { ensureChannel: true } : {}),
          });
          title.value = '';
          // Shown in the week on screen, or in the seven days from its own.
          if (a < from || a >= from + 7 * DAY) from = startOfDay(a);
          await refresh();
        } catch (e) {
          formAlert.show(errorText(e));
        }
        create.disabled = !session.canWrite;
      },
    },
    h('h3', {}, 'Schedule an event'),
    h(
      'div',
      { class: 'row' },
      h('div', {}, h('label', { for: 'event-title' }, 'Event title'), title),
      h('div', {}, h('label', { for: 'event-start' }, 'Starts'), start),
      h('div', {}, h('label', { for: 'event-end' }, 'Ends'), end),
    ),
    h(
      'div',
      { class: 'checks' },
      h('span', {}, ensure, h('label', { for: 'event-ensure', class: 'inline' }, 'Start and stop the channel for it (an event-based channel)')),
    ),
    formAlert,
    create,
  );

  refresh();
  (async () => {
    while (!signal.aborted) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      if (!signal.aborted) await refresh();
    }
  })();

  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'events-title' },
    h(
      'div',
      { class: 'title-row' },
      h('h2', { id: 'events-title' }, 'Schedule'),
      weekTitle,
      h('span', { class: 'spacer' }),
      h('button', { type: 'button', class: 'quiet', onclick: () => move(-7) }, 'Previous week'),
      h('button', { type: 'button', class: 'quiet', onclick: () => move(0) }, 'This week'),
      h('button', { type: 'button', class: 'quiet', onclick: () => move(7) }, 'Next week'),
    ),
    alert,
    chart,
    agenda,
    editing,
    form,
  );
}
