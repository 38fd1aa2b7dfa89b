// Streaming analytics (docs/decisions/analytics.md) over a range, for the tenant or one asset: plays, played seconds
// and concurrent viewers per interval as charts (`queries/count` of IMPRESSION_ID, `queries/sum` of PLAYED_SECONDS,
// `metrics/max_concurrentviewers`, each with `interval`), and the quality of experience of the range as figures
// (startup time, rebuffering, failures, exits before the start, bitrate) with the startup time and the rebuffering
// per interval as charts. Read again every minute while the screen is open.
import { alertBox, errorText, fill, h } from '/console/dom.js';
import { formatValue, lineChart } from '/console/charts.js';

const READ_MS = 60_000;
/** The ranges offered, each by an interval that keeps a chart to at most 168 points (the API answers 200 rows). */
const RANGES = [
  { label: 'Last hour', ms: 3600_000, interval: 'MINUTE', step: 60_000 },
  { label: 'Last 24 hours', ms: 24 * 3600_000, interval: 'HOUR', step: 3600_000 },
  { label: 'Last 7 days', ms: 7 * 24 * 3600_000, interval: 'HOUR', step: 3600_000 },
  { label: 'Last 30 days', ms: 30 * 24 * 3600_000, interval: 'DAY', step: 24 * 3600_000 },
];
/** Charts per interval: an interval without rows had none of it (0) for counts, and no value for averages. */
const CHARTS = [
  { name: 'Plays', unit: 'plays', path: 'queries/count', dimension: 'IMPRESSION_ID', zero: true, description: 'playback sessions that sent anything' },
  { name: 'Played seconds', unit: 's', path: 'queries/sum', dimension: 'PLAYED_SECONDS', zero: true, description: 'seconds of content played' },
  { name: 'Concurrent viewers', unit: 'viewers', path: 'metrics/max_concurrentviewers', zero: true, description: 'the most watching at once' },
  { name: 'Startup time', unit: 'ms', path: 'queries/avg', dimension: 'STARTUP_TIME_MS', description: 'from the play request to the first frame, average' },
  { name: 'Rebuffering', unit: '%', path: 'queries/avg', dimension: 'REBUFFER_PERCENTAGE', description: 'share of the watching time spent stalled' },
];
/** The quality-of-experience figures of the whole range, each one query. */
const FIGURES = [
  { name: 'Plays', path: 'queries/count', dimension: 'IMPRESSION_ID', format: (v) => formatValue(v) },
  { name: 'Watch time', path: 'queries/sum', dimension: 'PLAYED_SECONDS', format: (v) => `${formatValue(v)} s` },
  { name: 'Most concurrent viewers', path: 'metrics/max_concurrentviewers', format: (v) => formatValue(v) },
  { name: 'Startup time (median)', path: 'queries/median', dimension: 'STARTUP_TIME_MS', format: (v) => `${formatValue(v)} ms` },
  { name: 'Rebuffering', path: 'queries/avg', dimension: 'REBUFFER_PERCENTAGE', format: (v) => `${formatValue(v)} %` },
  { name: 'Stalls', path: 'queries/count', dimension: 'BUFFERING_MS', format: (v) => formatValue(v) },
  { name: 'Playback failures', path: 'queries/avg', dimension: 'PLAYBACK_FAILURE_PERCENTAGE', format: (v) => `${formatValue(v)} %` },
  { name: 'Exits before the start', path: 'queries/avg', dimension: 'EXIT_BEFORE_START_PERCENTAGE', format: (v) => `${formatValue(v)} %` },
  { name: 'Average bitrate', path: 'queries/avg', dimension: 'VIDEO_BITRATE', format: (v) => `${formatValue(v / 1000)} kb/s` },
];

export function analyticsCard(session, { signal, assetId }) {
  const { client } = session;
  const alert = alertBox();
  const figures = h('dl', { class: 'facts' });
  const charts = h('div', { class: 'charts' }, h('p', { class: 'muted' }, 'Loading…'));
  const range = h(
    'select',
    { id: 'analytics-range', onchange: () => read() },
    RANGES.map((r, i) => h('option', { value: String(i) }, r.label)),
  );
  const filters = assetId ? [{ name: 'ASSET_ID', operator: 'EQ', value: assetId }] : [];
  const ask = (path, body) => client.request('POST', `/streaming/v1/analytics/${path}`, { filters, ...body }, { signal });

  let reading;
  async function read() {
    const r = RANGES[Number(range.value)];
    const to = Date.now();
    // Whole intervals (UTC, as the API counts them): the first one starts at or before the range.
    const from = Math.floor((to - r.ms) / r.step) * r.step;
    const period = { start: new Date(from).toISOString(), end: new Date(to).toISOString() };
    const mine = (reading = {});
    try {
      const [series, totals] = await Promise.all([
        Promise.all(CHARTS.map((c) => ask(c.path, { ...period, interval: r.interval, limit: 200, ...(c.dimension ? { dimension: c.dimension } : {}) }))),
        Promise.all(FIGURES.map((f) => ask(f.path, { ...period, ...(f.dimension ? { dimension: f.dimension } : {}) }))),
      ]);
      if (mine !== reading) return; // a later range was asked for meanwhile
      fill(
        figures,
        FIGURES.flatMap((f, i) => {
          const value = totals[i].rows[0]?.[0];
          return [h('dt', {}, f.name), h('dd', {}, value === null || value === undefined ? '–' : f.format(value))];
        }),
      );
      fill(
        charts,
        CHARTS.map((c, i) => {
          const byTime = new Map(series[i].rows.map(([interval, value]) => [Date.parse(interval), value]));
          const data = [];
          // Nothing at all is said as such, not as a line of zeros.
          if (byTime.size > 0 || !c.zero)
            for (let t = from; t <= to; t += r.step) {
              const value = byTime.get(t) ?? (c.zero ? 0 : undefined);
              if (value !== undefined && value !== null) data.push({ time: new Date(t).toISOString(), value });
            }
          return lineChart({
            name: c.name,
            unit: c.unit,
            description: c.description,
            data,
            from,
            to,
            gapMs: r.step * 1.5,
            empty: 'No values in this range: nothing was played.',
          });
        }),
      );
      alert.show();
    } catch (e) {
      if (!signal.aborted) alert.show(errorText(e));
    }
  }

  (async () => {
    while (!signal.aborted) {
      await read();
      await new Promise((resolve) => setTimeout(resolve, READ_MS));
    }
  })();

  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'analytics-title' },
    h(
      'div',
      { class: 'title-row' },
      h('h2', { id: 'analytics-title' }, assetId ? 'Analytics of this asset' : 'Analytics'),
      h('span', { class: 'spacer' }),
      h('label', { for: 'analytics-range', class: 'inline' }, 'Range'),
      range,
    ),
    alert,
    figures,
    charts,
  );
}
