// A streaming asset's images and frames. Images: the asset's `images` (key → name and URL), added by URL
// (`POST /streaming/v1/assets/{id}/images`) or uploaded (`.../images/uploaded/start`, the parts PUT to their presigned
// URLs, `.../complete`, which keeps only a real image), each with "Delete" (an uploaded one's file with it:
// `DELETE .../images/uploaded/{fileId}`). Frames: the stills the platform takes from the video
// (`GET .../images/frames`, which answers 202 while it takes them: asked again).
import { alertBox, copyButton, errorText, fill, formatBytes, guard, h } from '/console/dom.js';
import { formatSeconds } from '/console/chapters.js';

const FRAMES_RETRY_MS = 2000;

/** A file's name as the upload takes it (and the image's key): letters, digits and underscores, and its extension. */
const uploadName = (name) => {
  const dot = name.lastIndexOf('.');
  const stem = (dot > 0 ? name.slice(0, dot) : name).replace(/[^A-Za-z0-9_]/g, '_').slice(0, 128) || 'image';
  const ext =
    dot > 0
      ? name
          .slice(dot + 1)
          .replace(/[^A-Za-z0-9]/g, '')
          .slice(0, 8)
      : '';
  return ext ? `${stem}.${ext}` : stem;
};

/** Uploads `file` as an image of the asset: start, every part PUT (its ETag kept), complete. Answers the completion. */
async function uploadImage(client, assetId, file, { onPart, signal }) {
  const params = { assetId };
  const start = await client.request(
    'POST',
    '/streaming/v1/assets/{assetId}/images/uploaded/start',
    { name: uploadName(file.name), fileSize: file.size },
    { params, signal },
  );
  const parts = [];
  for (const [i, url] of start.multipartUrls.entries()) {
    const res = await fetch(url, { method: 'PUT', body: file.slice(i * start.partSize, Math.min(file.size, (i + 1) * start.partSize)), signal });
    if (!res.ok) throw new Error(`Part ${i + 1} of ${file.name}: the store answered ${res.status}.`);
    parts.push({ partNumber: i + 1, eTag: res.headers.get('etag') ?? '' });
    onPart(i + 1, start.partsCount);
  }
  return client.request('POST', '/streaming/v1/assets/{assetId}/images/uploaded/complete', { fileId: start.fileId, parts }, { params, signal });
}

export function imagesCard(session, id, { signal, changed }) {
  const { client } = session;
  const params = { assetId: id };
  const alert = alertBox();
  const list = h('ul', { class: 'images', 'aria-label': 'Images' });

  const key = guard(h('input', { id: 'image-key', required: true, pattern: '[A-Za-z0-9_.\\-]{1,128}', 'aria-describedby': 'image-key-help' }), session);
  const name = guard(h('input', { id: 'image-name', maxLength: 256 }), session);
  const url = guard(h('input', { id: 'image-url', type: 'url', required: true, placeholder: 'https://…' }), session);
  const addAlert = alertBox();
  const byUrl = h(
    'form',
    {
      class: 'add-output',
      onsubmit: async (event) => {
        event.preventDefault();
        addAlert.show();
        try {
          const image = { Url: url.value.trim(), ...(name.value.trim() ? { Name: name.value.trim() } : {}) };
          await client.request('POST', '/streaming/v1/assets/{assetId}/images', { images: { [key.value.trim()]: image } }, { params });
          for (const field of [key, name, url]) field.value = '';
          changed();
        } catch (e) {
          addAlert.show(errorText(e));
        }
      },
    },
    h('h3', {}, 'Add an image by URL'),
    h(
      'div',
      { class: 'row' },
      h('div', {}, h('label', { for: 'image-key' }, 'Image key'), key),
      h('div', {}, h('label', { for: 'image-name' }, 'Image name'), name),
    ),
    h(
      'p',
      { id: 'image-key-help', class: 'muted small' },
      'Letters, digits, dots, dashes and underscores: thumbnail, poster… A key the asset has is replaced.',
    ),
    h('label', { for: 'image-url' }, 'Image URL'),
    url,
    addAlert,
    guard(h('button', { type: 'submit' }, 'Add image'), session),
  );

  const file = guard(h('input', { id: 'image-file', type: 'file', accept: 'image/png,image/jpeg,image/webp,image/gif,image/bmp' }), session);
  const upload = guard(h('button', { type: 'submit' }, 'Upload image'), session);
  const uploadStatus = h('p', { class: 'muted', role: 'status' });
  const uploadAlert = alertBox();
  const byUpload = h(
    'form',
    {
      class: 'add-output',
      onsubmit: async (event) => {
        event.preventDefault();
        uploadAlert.show();
        const chosen = file.files?.[0];
        if (!chosen) return uploadAlert.show('Choose an image file first.');
        upload.disabled = true;
        uploadStatus.textContent = `Uploading ${chosen.name} (${formatBytes(chosen.size)})…`;
        try {
          const done = await uploadImage(client, id, chosen, {
            signal,
            onPart: (n, count) => count > 1 && (uploadStatus.textContent = `Uploading ${chosen.name}: part ${n} of ${count} sent…`),
          });
          uploadStatus.textContent = `Uploaded ${chosen.name}.`;
          file.value = '';
          changed(done);
        } catch (e) {
          uploadStatus.textContent = '';
          if (!signal.aborted) uploadAlert.show(errorText(e));
        }
        upload.disabled = !session.canWrite;
      },
    },
    h('h3', {}, 'Upload an image'),
    h('label', { for: 'image-file' }, 'Image file'),
    file,
    h('p', { class: 'muted small' }, 'PNG, JPEG, WebP, GIF or BMP, up to 50 MiB: it becomes an image of the asset under its file name.'),
    uploadAlert,
    h('div', { class: 'buttons' }, upload, uploadStatus),
  );

  async function remove(imageKey, image, uploaded) {
    if (!confirm(`Delete the image ${image.Name ?? imageKey}?`)) return;
    alert.show();
    try {
      if (uploaded)
        await client.request('DELETE', '/streaming/v1/assets/{assetId}/images/uploaded/{fileId}', undefined, { params: { ...params, fileId: image.Id } });
      else await client.request('DELETE', '/streaming/v1/assets/{assetId}/images/{imageKey}', undefined, { params: { ...params, imageKey } });
      changed();
    } catch (e) {
      alert.show(errorText(e));
    }
  }

  return {
    card: h(
      'section',
      { class: 'card', 'aria-labelledby': 'images-title' },
      h('h2', { id: 'images-title' }, 'Images'),
      alert,
      list,
      // Side by side where there is room, one above the other on a phone.
      h('div', { class: 'row' }, h('div', {}, byUrl), h('div', {}, byUpload)),
    ),
    async load(asset) {
      const entries = Object.entries(asset.images);
      let uploaded = new Set();
      try {
        // An uploaded image is deleted with its file; its entry's Id is the file's id.
        if (entries.length > 0) {
          const files = await client.request('GET', '/streaming/v1/assets/{assetId}/images/uploaded', undefined, { params, query: { limit: 100 }, signal });
          uploaded = new Set(files.items.map((f) => f.id));
        }
      } catch (e) {
        if (!signal.aborted) alert.show(errorText(e));
      }
      fill(
        list,
        entries.length === 0
          ? h('li', { class: 'muted' }, 'No images yet.')
          : entries.map(([imageKey, image]) =>
              h(
                'li',
                { 'data-image': imageKey },
                h('img', { src: image.Url, alt: image.Name ?? imageKey, loading: 'lazy' }),
                h(
                  'div',
                  {},
                  h('strong', {}, imageKey),
                  image.Name && image.Name !== imageKey ? h('span', { class: 'muted' }, ` · ${image.Name}`) : null,
                  uploaded.has(image.Id) ? h('span', { class: 'muted' }, ' · uploaded') : null,
                  h('p', { class: 'small' }, h('code', {}, image.Url)),
                  copyButton('Copy URL', () => image.Url, `Copy URL of ${imageKey}`),
                  guard(
                    h(
                      'button',
                      {
                        type: 'button',
                        class: 'danger quiet',
                        'aria-label': `Delete image ${imageKey}`,
                        onclick: () => remove(imageKey, image, uploaded.has(image.Id)),
                      },
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

/** The frames taken from the asset's video, the poster first; asked again while the platform takes them. */
export function framesCard(session, id, { signal }) {
  const { client } = session;
  const alert = alertBox();
  const list = h('ul', { class: 'images frames', 'aria-label': 'Frames' }, h('li', { class: 'muted' }, 'Reading the frames…'));
  const again = h('button', { type: 'button', class: 'quiet', hidden: true, onclick: () => read() }, 'Try again');

  async function read() {
    alert.show();
    again.hidden = true;
    while (!signal.aborted) {
      try {
        const frames = await client.request('GET', '/streaming/v1/assets/{assetId}/images/frames', undefined, { params: { assetId: id }, signal });
        const entries = Object.entries(frames ?? {});
        if (entries.length === 0) {
          // 202: the frames are being taken.
          fill(list, h('li', { class: 'muted' }, 'Taking the frames from the video…'));
          await new Promise((resolve) => setTimeout(resolve, FRAMES_RETRY_MS));
          continue;
        }
        entries.sort(([a, fa], [b, fb]) => (a === 'poster' ? -1 : b === 'poster' ? 1 : (fa.second ?? 0) - (fb.second ?? 0)));
        fill(
          list,
          entries.map(([key, f]) => {
            const label = key === 'poster' ? 'Poster' : `At ${formatSeconds(Math.round(f.second ?? 0))}`;
            return h('li', { 'data-frame': key }, h('img', { src: f.url, alt: `Frame: ${label}`, loading: 'lazy' }), h('span', {}, label));
          }),
        );
        return;
      } catch (e) {
        if (signal.aborted) return;
        // 409: no video to take them from (yet); 422: taking them failed. Either may change: offer to ask again.
        fill(list);
        alert.show(errorText(e));
        again.hidden = false;
        return;
      }
    }
  }
  read();

  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'frames-title' },
    h('h2', { id: 'frames-title' }, 'Frames'),
    h('p', { class: 'muted' }, 'Stills the platform takes from the video: the first frame, one every 10 seconds, and a poster.'),
    alert,
    list,
    again,
  );
}
