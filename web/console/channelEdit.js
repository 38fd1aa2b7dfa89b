// The "Settings" form of a channel: name, qualities and frame rate, endpoints, input loss and restreams, read from the
// channel's configuration and sent with `PATCH /live/v1/channels/{id}`. Latency and redundancy are fixed at creation
// (the API refuses to change them) and shown as such. Restream keys read masked; sent back as read, the API keeps them.
import { alertBox, errorText, fill, guard, h } from '/console/dom.js';

const QUALITIES = ['1080p', '720p', '480p', '360p', '240p', '144p'];
const RATES = [25, 30, 50, 60];
// A quality without a frame rate keeps the encoder's own, up to 30 (sent without `frameRate`).
const SOURCE_RATE = 'source';
const ENDPOINTS = [
  ['Hls', 'HLS'],
  ['Dash', 'DASH'],
];

/** Answers the form at once; it is filled when the configuration has been read. */
export function channelEditCard(session, id, options) {
  const card = h(
    'form',
    { class: 'card', 'aria-labelledby': 'channel-settings' },
    h('h2', { id: 'channel-settings' }, 'Settings'),
    h('p', { class: 'muted' }, 'Loading…'),
  );
  build(session, id, card, options);
  return card;
}

async function build(session, id, card, { signal, saved = () => {} }) {
  const { client } = session;
  let config;
  try {
    config = await client.request('GET', '/live/v1/channels/{id}/configuration', undefined, { params: { id }, signal });
  } catch (e) {
    return fill(card, h('h2', { id: 'channel-settings' }, 'Settings'), h('p', { class: 'alert', role: 'alert' }, errorText(e)));
  }
  const g = (el) => guard(el, session);
  const name = g(h('input', { id: 'edit-name', value: config.name, required: true, maxLength: 1024 }));
  const chosen = new Set(config.qualities.map((q) => q.resolution));
  const qualityBoxes = QUALITIES.map((q) => g(h('input', { type: 'checkbox', id: `quality-${q}`, value: q, checked: chosen.has(q) })));
  const rate = g(
    h('select', { id: 'edit-rate' }, [
      h('option', { value: SOURCE_RATE, selected: config.qualities[0]?.followsSourceFrameRate !== false }, "The encoder's (up to 30 fps)"),
      ...RATES.map((r) =>
        h('option', { value: r, selected: config.qualities[0]?.followsSourceFrameRate === false && r === config.qualities[0].frameRate }, `${r} fps`),
      ),
    ]),
  );
  const types = new Set(config.endpoints.map((e) => e.type));
  const endpointBoxes = ENDPOINTS.map(([type]) => g(h('input', { type: 'checkbox', id: `endpoint-${type}`, value: type, checked: types.has(type) })));
  const loss = config.input?.inputLoss ?? { type: 'COLOR', color: '#000000' };
  const lossType = g(h('select', { id: 'edit-loss' }, h('option', { value: 'COLOR' }, 'A colour'), h('option', { value: 'SLATE' }, 'A picture (slate)')));
  lossType.value = loss.type;
  const color = g(h('input', { id: 'edit-color', type: 'color', value: loss.color || '#000000' }));
  const slate = g(h('input', { id: 'edit-slate', type: 'url', value: loss.imageSlateUri ?? '', placeholder: 'https://…/slate.png' }));
  const colorField = h('div', {}, h('label', { for: 'edit-color' }, 'Colour'), color);
  const slateField = h('div', {}, h('label', { for: 'edit-slate' }, 'Picture URL'), slate);
  const showLoss = () => {
    colorField.hidden = lossType.value !== 'COLOR';
    slateField.hidden = lossType.value !== 'SLATE';
  };
  lossType.addEventListener('change', showLoss);
  showLoss();

  const restreamRows = h('div', { class: 'restreams' });
  let n = 0;
  function restreamRow(r = { id: `restream-${Date.now().toString(36)}`, destination: '', rtmpDestinations: [{ url: '', streamKey: '' }] }) {
    const k = n++;
    const dest = r.rtmpDestinations[0] ?? { url: '', streamKey: '' };
    const fields = {
      destination: g(h('input', { id: `rs-name-${k}`, value: r.destination, required: true })),
      url: g(h('input', { id: `rs-url-${k}`, value: dest.url, required: true, placeholder: 'rtmp://a.example.com/live' })),
      streamKey: g(h('input', { id: `rs-key-${k}`, type: 'password', value: dest.streamKey, required: true, autocomplete: 'off' })),
    };
    const row = h(
      'fieldset',
      { class: 'restream' },
      h('legend', {}, `Restream ${k + 1}`),
      h('div', {}, h('label', { for: `rs-name-${k}` }, 'Destination name'), fields.destination),
      h('div', {}, h('label', { for: `rs-url-${k}` }, 'RTMP URL'), fields.url),
      h('div', {}, h('label', { for: `rs-key-${k}` }, 'Stream key'), fields.streamKey),
      g(h('button', { type: 'button', class: 'quiet', 'aria-label': `Remove restream ${k + 1}`, onclick: () => row.remove() }, 'Remove')),
    );
    row.value = () => ({
      protocol: 'RTMP',
      id: r.id,
      destination: fields.destination.value.trim(),
      ...(r.label ? { label: r.label } : {}),
      rtmpDestinations: [{ url: fields.url.value.trim(), streamKey: fields.streamKey.value }],
    });
    restreamRows.append(row);
  }
  for (const r of config.restreams ?? []) restreamRow(r);

  const alert = alertBox();
  const done = h('p', { class: 'muted', role: 'status' });
  const save = g(h('button', { type: 'submit' }, 'Save settings'));
  card.onsubmit = async (event) => {
    event.preventDefault();
    alert.show();
    done.textContent = '';
    const frameRate = rate.value === SOURCE_RATE ? {} : { frameRate: Number(rate.value) };
    const qualities = qualityBoxes.filter((b) => b.checked).map((b) => ({ resolution: b.value, ...frameRate }));
    if (qualities.length === 0) return alert.show('Choose at least one quality.');
    const kept = config.endpoints.filter((e) => !ENDPOINTS.some(([type]) => type === e.type));
    const endpoints = [...endpointBoxes.filter((b) => b.checked).map((b) => ({ type: b.value })), ...kept];
    if (endpoints.length === 0) return alert.show('Choose at least one endpoint.');
    const inputLoss = lossType.value === 'COLOR' ? { type: 'COLOR', color: color.value.toUpperCase() } : { type: 'SLATE', imageSlateUri: slate.value.trim() };
    const body = { name: name.value.trim(), qualities, endpoints, input: { inputLoss }, restreams: [...restreamRows.children].map((r) => r.value()) };
    save.disabled = true;
    try {
      await client.request('PATCH', '/live/v1/channels/{id}', body, { params: { id } });
      done.textContent = config.status?.value === 'On' ? 'Saved: qualities, endpoints and input loss apply at the next start.' : 'Saved.';
      saved(body);
    } catch (e) {
      alert.show(errorText(e));
    }
    save.disabled = false;
  };

  const fixed = `${config.latency === 'ReducedLatency' ? 'Reduced latency (LL-HLS, low-latency DASH)' : 'Normal latency'} · ${config.redundancy === 'DoubleInput' ? 'two inputs' : 'one input'}`;
  fill(
    card,
    h('h2', { id: 'channel-settings' }, 'Settings'),
    h('label', { for: 'edit-name' }, 'Name'),
    name,
    h(
      'fieldset',
      {},
      h('legend', {}, 'Qualities'),
      h(
        'div',
        { class: 'checks' },
        qualityBoxes.map((b) => h('span', {}, b, h('label', { for: b.id, class: 'inline' }, b.value))),
      ),
      h('div', { class: 'inline-field' }, h('label', { for: 'edit-rate' }, 'Frame rate'), rate),
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Endpoints'),
      h(
        'div',
        { class: 'checks' },
        endpointBoxes.map((b, i) => h('span', {}, b, h('label', { for: b.id, class: 'inline' }, ENDPOINTS[i][1]))),
      ),
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'When the input is lost, show'),
      h('label', { for: 'edit-loss', class: 'sr-only' }, 'Input loss'),
      lossType,
      colorField,
      slateField,
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Restreams'),
      h('p', { class: 'muted small' }, 'The channel is also sent to these RTMP destinations while it is on (YouTube, Twitch…).'),
      restreamRows,
      g(h('button', { type: 'button', class: 'quiet', onclick: () => restreamRow() }, 'Add restream')),
    ),
    h('p', { class: 'muted' }, 'Latency and inputs, fixed when the channel was created: ', fixed, '.'),
    alert,
    h('div', { class: 'buttons' }, save, done),
  );
}
