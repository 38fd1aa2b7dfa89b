// A channel's status and statistics over time: the status as read from `GET /live/v1/channels/{id}/status` while the
// page is open (a strip of states), and the per-minute statistics of `GET /live/v1/channels/{id}/stats` as one line
// chart per metric, over the last hour, 6 hours, day or week.
import { alertBox, errorText, fill, h } from '/console/dom.js';
import { lineChart, stateStrip } from '/console/charts.js';

const STATUS_MS = 3000;
const STATS_MS = 30_000;
/** The ranges offered, each with the period that keeps a chart to at most a few hundred points. */
const RANGES = [
  { label: 'Last hour', ms: 3600_000, period: 60 },
  { label: 'Last 6 hours', ms: 6 * 3600_000, period: 300 },
  { label: 'Last 24 hours', ms: 24 * 3600_000, period: 900 },
  { label: 'Last 7 days', ms: 7 * 24 * 3600_000, period: 3600 },
];
/** Counters are summed over a period; rates and levels are averaged. */
const SUMMED = new Set(['droppedFrames', 'segmentsWritten', 'ingestConnectedSeconds']);
/** The order and names the charts are shown with; a metric the API adds later is shown after them by its id. */
const NAMES = {
  inputBitrate: 'Input bitrate',
  inputFrameRate: 'Input frame rate',
  concurrentViewers: 'Viewers',
  droppedFrames: 'Dropped frames',
  segmentsWritten: 'Segments written',
  ingestConnectedSeconds: 'Encoder connected',
  restreamsActive: 'Restreams sending',
};
export const STATUS_COLOURS = { Off: '#9ca3af', Starting: '#60a5fa', On: '#16a34a', Stopping: '#f59e0b', Error: '#dc2626' };

export function statsCard(session, id, { signal }) {
  const { client } = session;
  const alert = alertBox();
  // One grid: the status strip first, then a chart per metric (`display: contents` lays them out in the grid).
  const statusBox = h('div', {}, h('p', { class: 'muted' }, 'Reading the status…'));
  const metrics = h('div', { class: 'contents' }, h('p', { class: 'muted' }, 'Loading…'));
  const charts = h('div', { class: 'charts' }, statusBox, metrics);
  const range = h(
    'select',
    { id: 'stats-range', onchange: () => readStats() },
    RANGES.map((r, i) => h('option', { value: String(i) }, r.label)),
  );

  /** The states seen since the page opened: [{ state, from, to }]. */
  const spans = [];
  const opened = Date.now();
  async function readStatus() {
    try {
      const { status } = await client.request('GET', '/live/v1/channels/{id}/status', undefined, { params: { id }, signal });
      const now = Date.now();
      const last = spans.at(-1);
      if (last && last.state === status) last.to = now;
      else {
        if (last) last.to = now;
        spans.push({ state: status, from: last ? now : opened, to: now });
      }
      fill(statusBox, stateStrip({ name: 'Status since this page opened', spans, from: opened, to: Math.max(now, opened + 1), colours: STATUS_COLOURS }));
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  }

  let reading;
  async function readStats() {
    const r = RANGES[Number(range.value)];
    const to = Date.now();
    const from = to - r.ms;
    const query = (aggregationFunction) => ({
      start: new Date(from).toISOString(),
      end: new Date(to).toISOString(),
      periodSeconds: r.period,
      aggregationFunction,
    });
    const mine = (reading = {});
    try {
      const [avg, sum] = await Promise.all(
        ['Avg', 'Sum'].map((f) => client.request('GET', '/live/v1/channels/{id}/stats', undefined, { params: { id }, query: query(f), signal })),
      );
      if (mine !== reading) return; // a later range was asked for meanwhile
      const ids = [...Object.keys(NAMES).filter((m) => m in avg.metrics), ...Object.keys(avg.metrics).filter((m) => !(m in NAMES))];
      fill(
        metrics,
        ids.map((m) => {
          const metric = (SUMMED.has(m) ? sum : avg).metrics[m];
          return lineChart({
            name: NAMES[m] ?? m,
            unit: metric.unitSymbol,
            description: metric.description,
            data: metric.data,
            from,
            to,
            gapMs: r.period * 1000,
          });
        }),
      );
      alert.show();
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  }

  (async () => {
    let lastStats = 0;
    while (!signal.aborted) {
      await readStatus();
      if (Date.now() - lastStats >= STATS_MS) {
        lastStats = Date.now();
        await readStats();
      }
      await new Promise((resolve) => setTimeout(resolve, STATUS_MS));
    }
  })();

  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'stats-title' },
    h(
      'div',
      { class: 'title-row' },
      h('h2', { id: 'stats-title' }, 'Status and statistics'),
      h('span', { class: 'spacer' }),
      h('label', { for: 'stats-range', class: 'inline' }, 'Range'),
      range,
    ),
    alert,
    charts,
  );
}
