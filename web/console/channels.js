// The Live screen: the tenant's channels with Start and Stop, each one's ingest (ingest.js) a click away, a link to
// its own page (channel.js), a form to create one, and the events of all channels on one schedule (schedule.js).
import { alertBox, badge, errorText, fill, guard, h } from '/console/dom.js';
import { showIngest } from '/console/ingest.js';
import { allEventsCard } from '/console/schedule.js';

const POLL_MS = 3000;
const MOVING = new Set(['Starting', 'Stopping']);

export function channelsScreen(session, { signal }) {
  const { client } = session;
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const alert = alertBox();
  /** The channels whose ingest details are open, kept over a refresh of the list. */
  const open = new Set();

  async function refresh() {
    try {
      const channels = [];
      for await (const c of client.paginate('/live/v1/channels', { includeCloudData: false, sort: 'CreateDate' }, { signal })) channels.push(c);
      fill(list, channels.length === 0 ? h('p', { class: 'muted' }, 'No channels yet: create one below.') : channels.map(channelCard));
      return channels.some((c) => MOVING.has(c.status));
    } catch (e) {
      // Shown and read again: a channel starting or stopping would otherwise stay shown so.
      if (!signal.aborted) alert.show(errorText(e));
      return true;
    }
  }

  /** Refreshes, and again every few seconds while a channel is starting or stopping. */
  async function watch() {
    while ((await refresh()) && !signal.aborted) await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }

  async function act(id, action) {
    alert.show();
    try {
      await client.request('POST', `/live/v1/channels/{id}/${action}`, undefined, { params: { id } });
    } catch (e) {
      alert.show(errorText(e));
    }
    watch();
  }

  function channelCard(c) {
    const running = c.status === 'On' || c.status === 'Starting';
    const details = h('div', { class: 'ingest', hidden: !open.has(c.id) });
    const toggle = h('button', { type: 'button', class: 'quiet', 'aria-expanded': String(open.has(c.id)), 'aria-label': `Ingest of ${c.name}` }, 'Ingest');
    toggle.addEventListener('click', () => {
      const show = details.hidden;
      details.hidden = !show;
      toggle.setAttribute('aria-expanded', String(show));
      if (show) open.add(c.id);
      else open.delete(c.id);
      if (show) showIngest(session, c.id, details, { signal });
    });
    if (open.has(c.id)) showIngest(session, c.id, details, { signal });
    return h(
      'div',
      { class: 'output', 'data-channel': c.id },
      h(
        'div',
        { class: 'output-head' },
        h('a', { href: `#/channels/${c.id}`, class: 'strong' }, c.name),
        badge(c.status),
        h('span', { class: 'spacer' }),
        guard(
          h(
            'button',
            { type: 'button', 'aria-label': `Start ${c.name}`, disabled: running || c.status === 'Stopping', onclick: () => act(c.id, 'start') },
            'Start',
          ),
          session,
        ),
        guard(
          h('button', { type: 'button', class: 'danger', 'aria-label': `Stop ${c.name}`, disabled: !running, onclick: () => act(c.id, 'stop') }, 'Stop'),
          session,
        ),
        toggle,
      ),
      details,
    );
  }

  const name = guard(h('input', { id: 'channel-name', required: true, maxLength: 1024 }), session);
  const latency = guard(
    h(
      'select',
      { id: 'channel-latency' },
      h('option', { value: 'NormalLatency' }, 'Normal latency'),
      h('option', { value: 'ReducedLatency' }, 'Reduced latency (LL-HLS, low-latency DASH)'),
    ),
    session,
  );
  const createAlert = alertBox();
  const create = guard(h('button', { type: 'submit' }, 'Create channel'), session);
  const form = h(
    'form',
    {
      class: 'card',
      onsubmit: async (event) => {
        event.preventDefault();
        createAlert.show();
        create.disabled = true;
        try {
          await client.request('POST', '/live/v1/channels', { name: name.value.trim(), latency: latency.value, input: { inputLoss: { type: 'COLOR' } } });
          name.value = '';
          await refresh();
        } catch (e) {
          createAlert.show(errorText(e));
        }
        create.disabled = false;
      },
    },
    h('h2', {}, 'Create a channel'),
    session.canWrite ? null : h('p', { class: 'note' }, session.readOnlyReason),
    h(
      'div',
      { class: 'row' },
      h('div', {}, h('label', { for: 'channel-name' }, 'Channel name'), name),
      h('div', {}, h('label', { for: 'channel-latency' }, 'Latency'), latency),
    ),
    createAlert,
    create,
  );

  watch();
  return h(
    'section',
    {},
    h('h1', {}, 'Live channels'),
    alert,
    h('div', { class: 'card' }, h('h2', {}, 'Channels'), list),
    form,
    allEventsCard(session, { signal }),
  );
}
