// `assets`, `files`, `channels` and `keys`: one SDK call each, printed as a table (or one JSON document with --json).
import { CliError, bytes, duration, printJson, table } from './output.ts';
import { tenantClient, type TenantOptions } from './session.ts';

export interface ListOptions extends TenantOptions {
  limit?: string;
  query?: string;
}

/** Up to `--limit` items (default 100), newest first, read page after page. */
async function collect<T>(items: AsyncIterable<T>, opts: ListOptions): Promise<T[]> {
  const limit = opts.limit === undefined ? 100 : Number(opts.limit);
  if (!(Number.isInteger(limit) && limit > 0)) throw new CliError('--limit takes a whole number above 0');
  const out: T[] = [];
  for await (const item of items) {
    out.push(item);
    if (out.length >= limit) break;
  }
  return out;
}

const pageQuery = (opts: ListOptions) => ({
  sort: 'CreateDate',
  desc: true,
  limit: Math.min(100, Number(opts.limit ?? 100)),
  ...(opts.query ? { query: opts.query } : {}),
});

export async function assetsList(opts: ListOptions): Promise<void> {
  const client = tenantClient(opts);
  const assets = await collect(client.paginate('/vod/v1/assets', pageQuery(opts)), opts);
  if (opts.json) return printJson(assets);
  console.log(
    table(
      ['ID', 'STATUS', 'PRESET', 'DURATION', 'CREATED', 'TITLE'],
      assets.map((a) => [a.id, a.status, a.preset, duration(a.durationMilliseconds), a.createDate, a.title]),
    ),
  );
}

export async function assetsGet(id: string, opts: TenantOptions): Promise<void> {
  const asset = await tenantClient(opts).request('GET', '/vod/v1/assets/{id}', undefined, { params: { id } });
  if (opts.json) return printJson(asset);
  console.log(`${asset.id}  ${asset.status}  ${asset.preset}  ${asset.title ?? ''}`);
  if (asset.errorMessage) console.log(`  error: ${asset.errorMessage}`);
  if (asset.durationMilliseconds !== null) console.log(`  duration: ${duration(asset.durationMilliseconds)}`);
  for (const e of asset.endpoints) console.log(`  ${e.format.padEnd(5)} ${e.url}`);
}

export async function assetsDelete(id: string, opts: TenantOptions): Promise<void> {
  await tenantClient(opts).request('DELETE', '/vod/v1/assets/{id}', undefined, { params: { id } });
  if (opts.json) return printJson({ id, deleted: true });
  console.log(`asset ${id} deleted`);
}

export async function filesList(opts: ListOptions): Promise<void> {
  const client = tenantClient(opts);
  const files = await collect(client.paginate('/vod/v1/files', pageQuery(opts)), opts);
  if (opts.json) return printJson(files);
  console.log(
    table(
      ['ID', 'STATUS', 'SIZE', 'TYPES', 'CREATED', 'NAME'],
      files.map((f) => [f.id, f.status, bytes(f.fileSize), f.fileTypes, f.createDate, f.name]),
    ),
  );
}

export async function channelsList(opts: ListOptions): Promise<void> {
  const client = tenantClient(opts);
  const channels = await collect(client.paginate('/live/v1/channels', pageQuery(opts)), opts);
  if (opts.json) return printJson(channels);
  console.log(
    table(
      ['ID', 'STATUS', 'NAME'],
      channels.map((c) => [c.id, c.status, c.name]),
    ),
  );
}

export async function channelsStatus(id: string, opts: TenantOptions): Promise<void> {
  const status = await tenantClient(opts).request('GET', '/live/v1/channels/{id}/status', undefined, { params: { id } });
  if (opts.json) return printJson(status);
  console.log(`channel ${status.id} ${status.status}`);
}

/** Start or stop, then the status the channel has now (`Starting`, `Stopping`, ...). */
export async function channelsSwitch(action: 'start' | 'stop', id: string, opts: TenantOptions): Promise<void> {
  const client = tenantClient(opts);
  await client.request('POST', action === 'start' ? '/live/v1/channels/{id}/start' : '/live/v1/channels/{id}/stop', undefined, { params: { id } });
  const status = await client.request('GET', '/live/v1/channels/{id}/status', undefined, { params: { id } });
  if (opts.json) return printJson(status);
  console.log(`channel ${status.id} ${status.status}`);
}

export async function keysList(opts: ListOptions): Promise<void> {
  const client = tenantClient(opts);
  const keys = await collect(client.paginate('/core/v1/api-key', { limit: 100 }), opts);
  if (opts.json) return printJson(keys);
  console.log(
    table(
      ['ID', 'ROLE', 'CREATED', 'NAME'],
      keys.map((k) => [k.id, k.roleType, k.createdAt, k.name]),
    ),
  );
}

export async function keysCreate(name: string, opts: TenantOptions & { role: string }): Promise<void> {
  const key = await tenantClient(opts).request('POST', '/core/v1/api-key', { name, roleType: opts.role });
  if (opts.json) return printJson(key);
  console.log(`API key ${key.name} (${key.roleType}) created\n  id:  ${key.id}\n  key: ${key.key}   (shown once)`);
}

export async function keysDelete(id: string, opts: TenantOptions): Promise<void> {
  await tenantClient(opts).request('DELETE', '/core/v1/api-key/{id}', undefined, { params: { id } });
  if (opts.json) return printJson({ id, deleted: true });
  console.log(`API key ${id} deleted`);
}

export interface ImportOptions extends TenantOptions {
  name?: string;
  friendlyName?: string;
  wait?: boolean;
}

/** Asks the platform to fetch a file from a URL; with --wait, follows it until it is Completed or Error. */
export async function filesImport(url: string, opts: ImportOptions): Promise<void> {
  const client = tenantClient(opts);
  const body = { url, ...(opts.name ? { name: opts.name } : {}), ...(opts.friendlyName ? { friendlyName: opts.friendlyName } : {}) };
  const { fileId, fileKey } = await client.request('POST', '/vod/v1/files/import', body);
  if (!opts.wait) {
    if (opts.json) return printJson({ fileId, fileKey });
    return console.log(`file ${fileId} importing from ${url}`);
  }
  let file = await client.request('GET', '/vod/v1/files/{id}', undefined, { params: { id: fileId } });
  while (file.status === 'Uploading') {
    await new Promise((r) => setTimeout(r, 1000));
    file = await client.request('GET', '/vod/v1/files/{id}', undefined, { params: { id: fileId } });
  }
  if (file.status !== 'Completed') process.exitCode = 1;
  if (opts.json) return printJson(file);
  if (file.status === 'Completed') return console.log(`file ${file.id} Completed  ${bytes(file.fileSize)}  ${file.fileTypes}  ${file.name}`);
  process.stderr.write(`Error: file ${file.id} ${file.status}: ${file.errorMessage ?? 'no reason given'}\n`);
}
