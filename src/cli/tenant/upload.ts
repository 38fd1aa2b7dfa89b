import { statSync } from 'node:fs';
import { basename } from 'node:path';
import { ProcessingFailedError, type Asset, type Client } from '@mediaplane/sdk';
import { CliError, printJson } from './output.ts';
import { statusLine, uploadBar } from './progress.ts';
import { tenantClient, type TenantOptions } from './session.ts';

export interface UploadOptions extends TenantOptions {
  preset: string;
  title?: string;
  wait?: boolean;
  concurrency?: string;
}

interface Uploaded {
  file: string;
  fileId: string;
  fileKey: string;
  asset: Asset | { id: string };
}

/**
 * `mediaplane upload FILE...`: each file uploaded in parallel parts (a bar per file on a terminal), its audio tracks
 * found, an asset made with the preset; with --wait, each asset followed until it is Available (or failed).
 */
export async function upload(files: string[], opts: UploadOptions): Promise<void> {
  for (const file of files) {
    const stats = statSync(file, { throwIfNoEntry: false });
    if (!stats) throw new CliError(`${file}: no such file`);
    if (!stats.isFile()) throw new CliError(`${file}: not a file`);
  }
  const concurrency = opts.concurrency === undefined ? undefined : Number(opts.concurrency);
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency > 0)) throw new CliError('--concurrency takes a whole number above 0');
  const client = tenantClient(opts);
  const terminal = !opts.json && Boolean(process.stderr.isTTY);

  const results: Uploaded[] = [];
  for (const file of files) {
    const name = basename(file);
    const bar = uploadBar(name, statusLine(terminal));
    const { fileId, fileKey } = await client.uploadFile(file, { concurrency, onProgress: (p) => bar.progress(p.loaded, p.total) });
    bar.finish(statSync(file).size);
    const assetId = await createAsset(client, fileId, opts.preset, opts.title ?? name);
    results.push({ file, fileId, fileKey, asset: { id: assetId } });
    if (!opts.json) console.log(`${name}: file ${fileId}, asset ${assetId} (${opts.preset})`);
  }

  for (const r of results) {
    const id = r.asset.id;
    if (!opts.wait) {
      r.asset = await client.request('GET', '/vod/v1/assets/{id}', undefined, { params: { id } });
      continue;
    }
    try {
      r.asset = await waitWithProgress(client, id, basename(r.file), terminal);
    } catch (e) {
      if (!(e instanceof ProcessingFailedError)) throw e;
      r.asset = e.resource as Asset;
      process.exitCode = 1;
      process.stderr.write(`Error: the asset ${id} of ${r.file} failed: ${e.message}\n`);
    }
  }

  if (opts.json) return printJson(results);
  for (const { file, asset } of results) {
    if (!('status' in asset)) continue;
    console.log(`${basename(file)}: asset ${asset.id} ${asset.status}`);
    for (const e of asset.endpoints ?? []) console.log(`  ${e.format.padEnd(5)} ${e.url}`);
  }
}

/** An asset of the file with `preset`, with every audio track the file has (none listed would make a muted output). */
async function createAsset(client: Client, fileId: string, preset: string, title: string): Promise<string> {
  const { tracks } = await client.request('POST', '/vod/v1/files/{id}/detect', undefined, { params: { id: fileId } });
  const audio = tracks
    .filter((t) => t.type === 'Audio')
    .map((t) => ({ trackSelector: { trackId: t.trackSelector.trackId }, type: 'Audio', ...(t.language ? { language: t.language } : {}) }));
  const created = await client.request('POST', '/vod/v1/assets', {
    preset,
    title,
    transcodedSources: [{ fileId, ...(audio.length ? { transcodingTracks: audio } : {}) }],
  });
  return created.id;
}

/** `waitForAsset`, with its status and its first output's percentage on a terminal. */
async function waitWithProgress(client: Client, id: string, name: string, terminal: boolean): Promise<Asset> {
  const line = statusLine(terminal);
  const started = Date.now();
  let percent: number | undefined;
  const show = (asset: Asset) => {
    const output = asset.outputs?.[0];
    if (terminal && output && asset.status !== 'Available') {
      client
        .request('GET', '/vod/v1/assets/{assetId}/outputs/{outputId}/progress', undefined, { params: { assetId: id, outputId: output.id } })
        .then((p) => (percent = p.progressPercent))
        .catch(() => {});
    }
    const seconds = Math.round((Date.now() - started) / 1000);
    line.update(`${name}: asset ${id} ${asset.status}${percent !== undefined ? ` ${Math.round(percent)}%` : ''}  (${seconds} s)`);
  };
  const asset = await client.waitForAsset(id, { onUpdate: show });
  line.done(`${name}: asset ${id} ${asset.status} after ${Math.round((Date.now() - started) / 1000)} s`);
  return asset;
}
