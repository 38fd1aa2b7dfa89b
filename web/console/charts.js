// Charts drawn by uPlot (a small, well-kept chart library from npm, served from node_modules at /console/lib/): a line
// chart of a series over time, and a strip of states over time. uPlot draws on a canvas, which neither a screen reader
// nor a test can read, so each chart is a `figure` whose plot is a role="img" element named by a spoken summary
// (range, lowest, highest and latest values), with the values themselves in a table under "Values of …".
// uPlot is loaded on the first chart drawn, not with the console's first page (it is about 145 kB).
import { h } from '/console/dom.js';

const SVG = 'http://www.w3.org/2000/svg';
const HEIGHT = 180;
const STRIP_HEIGHT = 70;
const ACCENT = '#2459d6';
const AXIS = { stroke: '#5f6b7a', grid: { stroke: '#dfe3ea', width: 1 }, ticks: { stroke: '#dfe3ea', width: 1 } };

let library;
/** uPlot and its stylesheet, fetched once, when the first chart is drawn. */
function loadUPlot() {
  library ??= (async () => {
    document.head.append(h('link', { rel: 'stylesheet', href: '/console/lib/uPlot.min.css' }));
    return (await import('/console/lib/uPlot.esm.js')).default;
  })();
  return library;
}

/** The charts on screen; one whose figure has left the page is destroyed (uPlot keeps window listeners per chart). */
const live = new Set();
function sweep() {
  for (const chart of live) {
    if (chart.box.isConnected) continue;
    chart.observer.disconnect();
    chart.plot.destroy();
    live.delete(chart);
  }
}

/**
 * Draws `options(uPlot)` and `data` with uPlot into `box` once the library is there, at the box's width, and again at
 * each width it takes (a card that narrows on a phone). A failure to load says so in the box instead of a blank.
 */
async function draw(box, optionsOf, data) {
  let uPlot;
  try {
    uPlot = await loadUPlot();
  } catch {
    box.append(h('p', { class: 'muted' }, 'The chart could not be drawn (its library did not load); the values are below.'));
    return;
  }
  sweep();
  const options = optionsOf(uPlot);
  const width = () => Math.max(box.clientWidth, 200);
  const plot = new uPlot({ ...options, width: width() }, data, box);
  const observer = new window.ResizeObserver(() => {
    if (Math.abs(plot.width - width()) >= 1) plot.setSize({ width: width(), height: options.height });
  });
  observer.observe(box);
  live.add({ box, plot, observer });
}

/** A legend's square of colour: an SVG `fill` attribute, as the CSP allows no inline style. */
function swatch(colour) {
  const svg = document.createElementNS(SVG, 'svg');
  for (const [k, v] of Object.entries({ width: 12, height: 12, 'aria-hidden': 'true' })) svg.setAttribute(k, String(v));
  const rect = document.createElementNS(SVG, 'rect');
  for (const [k, v] of Object.entries({ width: 12, height: 12, fill: colour })) rect.setAttribute(k, String(v));
  svg.append(rect);
  return svg;
}

const time = (ms, span) =>
  span > 36 * 3600_000
    ? new Date(ms).toLocaleDateString(undefined, { month: 'short', day: 'numeric' }) +
      ' ' +
      new Date(ms).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
    : new Date(ms).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });

export const formatValue = (v) => (Number.isInteger(v) ? String(v) : v >= 100 ? v.toFixed(0) : v.toFixed(2).replace(/\.?0+$/, ''));

/**
 * uPlot's columns for `data` ([{ time, value }], oldest first): times in seconds, and a null between two values
 * further apart than `gapMs`, which uPlot leaves as a gap in the line. Also answers the indexes of lone values (no
 * neighbour joined to them), drawn as dots: a line of one point would not show.
 */
function columns(data, gapMs) {
  const xs = [];
  const ys = [];
  const joined = [];
  let last;
  for (const p of data) {
    const t = Date.parse(p.time);
    const near = last !== undefined && t - last <= gapMs;
    if (last !== undefined && !near) {
      xs.push((last + 1) / 1000);
      ys.push(null);
      joined.push(false);
    }
    if (near) joined[joined.length - 1] = true;
    xs.push(t / 1000);
    ys.push(p.value);
    joined.push(near);
    last = t;
  }
  const lone = ys.flatMap((y, i) => (y !== null && !joined[i] ? [i] : []));
  return { xs, ys, lone, runs: data.length === 0 ? 0 : ys.filter((y) => y === null).length + 1 };
}

/**
 * A line chart of `data` ([{ time, value }], oldest first) over [from, to] (ms). Points further apart than `gapMs`
 * are not joined (a channel not running between them); `empty` says why there is none. Answers a `figure`.
 */
export function lineChart({ name, unit, description, data, from, to, gapMs, empty = 'No values in this range: the channel was not running.' }) {
  const span = Math.max(to - from, 1);
  const values = data.map((d) => d.value);
  const { xs, ys, lone, runs } = columns(data, gapMs);
  const summary =
    data.length === 0
      ? `${name}: no values from ${time(from, span)} to ${time(to, span)}`
      : `${name} in ${unit}: ${data.length} value${data.length === 1 ? '' : 's'} from ${time(from, span)} to ${time(to, span)}, ${runs === 1 ? 'with no gap' : `in ${runs} stretches`}, lowest ${formatValue(Math.min(...values))}, highest ${formatValue(Math.max(...values))}, latest ${formatValue(values.at(-1))}`;
  const box = h('div', { class: 'chart-plot', role: 'img', 'aria-label': summary });
  draw(
    box,
    () => ({
      height: HEIGHT,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      scales: {
        x: { time: true, range: [from / 1000, to / 1000] },
        y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
      },
      axes: [
        { ...AXIS, size: 30 },
        { ...AXIS, size: 52, values: (_u, splits) => splits.map(formatValue) },
      ],
      series: [
        {},
        {
          label: name,
          stroke: ACCENT,
          width: 2,
          points: { size: 6, fill: ACCENT, filter: (_u, _i, show) => (show ? null : lone) },
        },
      ],
    }),
    [xs, ys],
  );
  return h(
    'figure',
    { class: 'chart-figure', 'data-metric': name },
    h('figcaption', {}, h('strong', {}, name), ` (${unit})`, description ? h('span', { class: 'muted' }, ` · ${description}`) : null),
    box,
    data.length === 0
      ? h('p', { class: 'muted' }, empty)
      : h(
          'details',
          {},
          h('summary', {}, `Values of ${name}`),
          h(
            'table',
            {},
            h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Time'), h('th', { scope: 'col' }, unit))),
            h(
              'tbody',
              {},
              data.map((p) => h('tr', {}, h('td', {}, new Date(p.time).toLocaleString()), h('td', {}, formatValue(p.value)))),
            ),
          ),
        ),
  );
}

/**
 * A strip of states over time: `spans` is [{ state, from, to }] (ms), coloured by state, with a legend. Each state is
 * one series, 1 while it holds and 0 otherwise, drawn as a filled step. Answers a `figure`.
 */
export function stateStrip({ name, spans, from, to, colours }) {
  const summary = `${name}: ${spans.map((p) => `${p.state} from ${time(p.from, 0)}`).join(', ')}`;
  const states = [...new Set(spans.map((p) => p.state))];
  const xs = [...spans.map((p) => Math.max(p.from, from) / 1000), Math.max(spans.at(-1)?.to ?? to, from + 1) / 1000];
  const holds = (state) => [...spans.map((p) => (p.state === state ? 1 : 0)), spans.at(-1)?.state === state ? 1 : 0];
  const box = h('div', { class: 'chart-plot', role: 'img', 'aria-label': summary });
  if (spans.length > 0) {
    draw(
      box,
      (uPlot) => ({
        height: STRIP_HEIGHT,
        legend: { show: false },
        cursor: { show: false },
        scales: { x: { time: true, range: [from / 1000, to / 1000] }, y: { range: [0, 1] } },
        // The page's seconds, not uPlot's fractions of them: the strip spans as long as the page has been open.
        axes: [
          {
            ...AXIS,
            size: 30,
            space: 90,
            incrs: [1, 5, 10, 15, 30, 60, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400],
            grid: { show: false },
            values: (_u, splits) =>
              splits.map((t) => new Date(t * 1000).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' })),
          },
          { show: false },
        ],
        series: [
          {},
          ...states.map((state) => ({
            label: state,
            stroke: 'transparent',
            width: 0,
            fill: colours[state] ?? '#9ca3af',
            fillTo: 0,
            points: { show: false },
            // A state holds from its start until the next one begins.
            paths: uPlot.paths.stepped({ align: 1 }),
          })),
        ],
      }),
      [xs, ...states.map(holds)],
    );
  }
  return h(
    'figure',
    { class: 'chart-figure', 'data-metric': name },
    h('figcaption', {}, h('strong', {}, name)),
    box,
    h(
      'ul',
      { class: 'legend' },
      states.map((st) => h('li', {}, swatch(colours[st] ?? '#9ca3af'), ' ', st)),
    ),
  );
}
