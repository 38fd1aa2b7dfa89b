// Charts as plain SVG: a line chart of a series over time, and a strip of states over time. Each is a `figure` whose
// SVG has role="img" and a spoken summary, with the values in a table under "Values" for whoever cannot see it.
import { h } from '/console/dom.js';

const SVG = 'http://www.w3.org/2000/svg';
const W = 480;
const H = 180;
const PAD = { left: 48, right: 12, top: 12, bottom: 26 };

/** An SVG element (`s('path', { d })`), attributes only. */
function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  for (const c of children.flat(Infinity)) if (c !== undefined && c !== null) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

const time = (ms, span) =>
  span > 36 * 3600_000
    ? new Date(ms).toLocaleDateString(undefined, { month: 'short', day: 'numeric' }) +
      ' ' +
      new Date(ms).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
    : new Date(ms).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });

/** 1, 2 or 5 times a power of ten, at least `v`: the top of the value axis. */
function niceTop(v) {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 5, 10].map((m) => m * p).find((n) => n >= v);
}

export const formatValue = (v) => (Number.isInteger(v) ? String(v) : v >= 100 ? v.toFixed(0) : v.toFixed(2).replace(/\.?0+$/, ''));

/**
 * A line chart of `data` ([{ time, value }], oldest first) over [from, to] (ms). Points further apart than `gapMs`
 * are not joined (a channel not running between them); `empty` says why there is none. Answers a `figure`.
 */
export function lineChart({ name, unit, description, data, from, to, gapMs, empty = 'No values in this range: the channel was not running.' }) {
  const span = Math.max(to - from, 1);
  const values = data.map((d) => d.value);
  const top = niceTop(Math.max(0, ...values));
  const x = (ms) => PAD.left + ((ms - from) / span) * (W - PAD.left - PAD.right);
  const y = (v) => PAD.top + (1 - v / top) * (H - PAD.top - PAD.bottom);
  let d = '';
  let last;
  for (const p of data) {
    const t = Date.parse(p.time);
    d += `${last !== undefined && t - last <= gapMs ? 'L' : 'M'}${x(t).toFixed(1)},${y(p.value).toFixed(1)} `;
    last = t;
  }
  const grid = [0, 0.5, 1].map((f) =>
    s(
      'g',
      {},
      s('line', { x1: PAD.left, x2: W - PAD.right, y1: y(top * f), y2: y(top * f), class: 'grid-line' }),
      s('text', { x: PAD.left - 6, y: y(top * f) + 4, 'text-anchor': 'end' }, formatValue(top * f)),
    ),
  );
  const ticks = [0, 0.5, 1].map((f) =>
    s('text', { x: x(from + span * f), y: H - 4, 'text-anchor': f === 0 ? 'start' : f === 1 ? 'end' : 'middle' }, time(from + span * f, span)),
  );
  const summary =
    data.length === 0
      ? `${name}: no values from ${time(from, span)} to ${time(to, span)}`
      : `${name} in ${unit}: ${data.length} values from ${time(from, span)} to ${time(to, span)}, lowest ${formatValue(Math.min(...values))}, highest ${formatValue(Math.max(...values))}, latest ${formatValue(values.at(-1))}`;
  const svg = s(
    'svg',
    { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': summary, class: 'chart' },
    grid,
    ticks,
    s('path', { d: d.trim(), class: 'series' }),
    // A lone value (a minute between gaps) is a dot, not an invisible zero-length line.
    data.map((p) => s('circle', { cx: x(Date.parse(p.time)), cy: y(p.value), r: 2.5, class: 'point' })),
  );
  return h(
    'figure',
    { class: 'chart-figure', 'data-metric': name },
    h('figcaption', {}, h('strong', {}, name), ` (${unit})`, description ? h('span', { class: 'muted' }, ` · ${description}`) : null),
    svg,
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
 * A strip of states over time: `spans` is [{ state, from, to }] (ms), coloured by state, with a legend and a list of
 * the changes. Answers a `figure`.
 */
export function stateStrip({ name, spans, from, to, colours }) {
  const span = Math.max(to - from, 1);
  const x = (ms) => PAD.left + ((Math.max(ms, from) - from) / span) * (W - PAD.left - PAD.right);
  const summary = `${name}: ${spans.map((p) => `${p.state} from ${time(p.from, 0)}`).join(', ')}`;
  const svg = s(
    'svg',
    { viewBox: `0 0 ${W} 54`, role: 'img', 'aria-label': summary, class: 'chart strip' },
    spans.map((p) =>
      s('rect', { x: x(p.from), y: 4, width: Math.max(x(p.to) - x(p.from), 1), height: 24, fill: colours[p.state] ?? '#9ca3af' }, s('title', {}, p.state)),
    ),
    s('text', { x: PAD.left, y: 48, 'text-anchor': 'start' }, time(from, 0)),
    s('text', { x: W - PAD.right, y: 48, 'text-anchor': 'end' }, time(to, 0)),
  );
  const states = [...new Set(spans.map((p) => p.state))];
  return h(
    'figure',
    { class: 'chart-figure', 'data-metric': name },
    h('figcaption', {}, h('strong', {}, name)),
    svg,
    h(
      'ul',
      { class: 'legend' },
      states.map((st) =>
        h('li', {}, s('svg', { width: 12, height: 12, 'aria-hidden': 'true' }, s('rect', { width: 12, height: 12, fill: colours[st] ?? '#9ca3af' })), ' ', st),
      ),
    ),
  );
}
