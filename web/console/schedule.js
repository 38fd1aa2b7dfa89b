// The events of every channel at once, on the Live screen (`#/channels`): a week of `GET /live/v1/events` without a
// channel (every page of it), drawn as a channel's schedule is (events.js: seven rows of 24 hours, events at the same
// time in lanes), and listed as an agenda whose every event names its channel and links to its page, where the event
// is edited. Reads only: scheduling, editing and deleting are on the channel's page.
import { alertBox, badge, errorText, fill, h } from '/console/dom.js';
import { clock, DAY, dayName, startOfDay, weekChart } from '/console/events.js';

const POLL_MS = 30_000;

export function allEventsCard(session, { signal }) {
  const { client } = session;
  const alert = alertBox();
  const chart = h('div', {});
  const agenda = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const weekTitle = h('span', { class: 'muted' });
  let from = startOfDay(Date.now());
  /** Channel names by id, read with the events: an event names its channel by id only. */
  let names = new Map();

  async function refresh() {
    const shown = from;
    try {
      const query = { searchStart: new Date(shown).toISOString(), searchEnd: new Date(shown + 7 * DAY).toISOString(), sort: 'Start' };
      const events = [];
      const channels = new Map();
      await Promise.all([
        (async () => {
          for await (const e of client.paginate('/live/v1/events', query, { signal })) events.push(e);
        })(),
        (async () => {
          for await (const c of client.paginate('/live/v1/channels', { includeCloudData: false }, { signal })) channels.set(c.id, c.name);
        })(),
      ]);
      if (shown !== from) return; // the week was moved meanwhile: its own read draws it
      names = channels;
      fill(weekTitle, `${dayName(from)} – ${dayName(from + 6 * DAY)}`);
      fill(
        chart,
        weekChart(events, from, { name: (e) => `${e.title ?? 'Event'} on ${channelName(e)}`, onOpen: (e) => (location.hash = `#/channels/${e.channelId}`) }),
      );
      fill(
        agenda,
        events.length === 0
          ? h('p', { class: 'muted' }, 'No events of any channel this week.')
          : h('ul', { class: 'agenda', 'aria-label': 'Events of all channels this week' }, events.map(eventItem)),
      );
      alert.show();
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  }

  /** A channel deleted since (its events go with it) or not listed yet is named by its id. */
  const channelName = (e) => names.get(e.channelId) ?? e.channelId;

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
      // The visible words begin the accessible name (WCAG 2.5.3), which says which event it opens the channel of.
      h('a', { href: `#/channels/${e.channelId}`, 'aria-label': `${channelName(e)}: channel of ${title}` }, channelName(e)),
    );
  }

  const move = (days) => {
    from = days === 0 ? startOfDay(Date.now()) : from + days * DAY;
    refresh();
  };

  refresh();
  (async () => {
    while (!signal.aborted) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      if (!signal.aborted) await refresh();
    }
  })();

  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'all-events-title' },
    h(
      'div',
      { class: 'title-row' },
      h('h2', { id: 'all-events-title' }, 'Schedule of all channels'),
      weekTitle,
      h('span', { class: 'spacer' }),
      h('button', { type: 'button', class: 'quiet', onclick: () => move(-7) }, 'Previous week'),
      h('button', { type: 'button', class: 'quiet', onclick: () => move(0) }, 'This week'),
      h('button', { type: 'button', class: 'quiet', onclick: () => move(7) }, 'Next week'),
    ),
    alert,
    chart,
    agenda,
    h('p', { class: 'muted small' }, "An event is scheduled, edited and deleted on its channel's page."),
  );
}
