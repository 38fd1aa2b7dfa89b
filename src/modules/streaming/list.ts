import type { Static } from 'typebox';
import { eq } from 'drizzle-orm';
import type { PlatformContext } from '../../context.ts';
import { validationError } from '../../platform/errors.ts';
import { arrayParam, normalizeAttributeFilter, oneOf } from '../../platform/filters.ts';
import { envelope, pageWindow, type PageRequest } from '../../platform/paging.ts';
import { PLAYABLE_TYPES, type Playable, type PlayableFilter } from '../../platform/playables.ts';
import { detailsOf } from './catalogue.ts';
import { presentStreamingAsset, type DetailsRow, type StreamingAsset } from './present.ts';
import { tenantSettings } from './settings.ts';
import { streamingAssets } from './tables.ts';
import type { StreamingAssetListQuery } from './schemas.ts';

type ListQuery = Static<typeof StreamingAssetListQuery>;

const SOURCES = ['Vod', 'Live', 'Recorder'] as const;
/** The AssetStatus values (spec part 1) and a live channel's own: a filter value is matched in any case, passed on in this spelling. */
const STATUSES = ['Pending', 'Processing', 'Available', 'Error', 'Deleting', 'Finished', 'Live', 'Scheduled', 'Queued', 'Off', 'Starting', 'Stopping'];
const spelled = (status: string) => STATUSES.find((s) => s.toLowerCase() === status) ?? status;
const LIVE_TYPES = new Set(['LiveChannel', 'LiveEvent']);

/** Sort properties (spec: `Metadata.Title`, `CreateDate`, `LastModificationDate`; the others are ours). */
const SORTS: Record<string, (a: StreamingAsset) => string | number | null> = {
  CreateDate: (a) => +new Date(a.createDate),
  LastModificationDate: (a) => +new Date(a.lastModificationDate),
  'Metadata.Title': (a) => (a.metadata.title ?? a.title ?? '').toLowerCase(),
  Title: (a) => (a.title ?? '').toLowerCase(),
  DurationMilliseconds: (a) => a.durationMilliseconds,
  Duration: (a) => a.durationMilliseconds,
  Type: (a) => a.type,
  Status: (a) => a.status,
  Start: (a) => (a.start ? +new Date(a.start) : null),
  Id: (a) => a.id,
};

function comparator(q: PageRequest) {
  const wanted = q.sort ?? 'CreateDate';
  const key = Object.keys(SORTS).find((k) => k.toLowerCase() === wanted.toLowerCase());
  if (!key) throw validationError('sort', `unknown sort property "${wanted}"; allowed: ${Object.keys(SORTS).join(', ')}`);
  const get = SORTS[key];
  const dir = q.desc ? -1 : 1;
  return (x: StreamingAsset, y: StreamingAsset) => {
    const a = get(x);
    const b = get(y);
    // Values missing sort last either way; the id breaks ties so that pages are stable.
    if (a !== b) {
      if (a === null) return 1;
      if (b === null) return -1;
      return (a < b ? -1 : 1) * dir;
    }
    return (x.id < y.id ? -1 : x.id > y.id ? 1 : 0) * dir;
  };
}

const dateParam = (v: string | undefined) => (v ? new Date(v) : undefined);

/** The time an asset covers, for `searchStart`/`searchEnd`: its start to its end; a live one runs on; others are an instant. */
function span(a: Playable): [number, number] {
  const from = +(a.start ?? a.createDate);
  const to = a.end ? +a.end : LIVE_TYPES.has(a.type) && !a.start ? Infinity : from + (a.start ? (a.durationMilliseconds ?? 0) : 0);
  return [from, to];
}

const lower = (xs: string[]) => new Set(xs.map((x) => x.toLowerCase()));

/**
 * `GET /streaming/v1/assets`: every registered kind lists what matches the filters it can apply in its own query;
 * the streaming details are joined, the remaining filters applied, and the union sorted and paged here.
 */
export async function listStreamingAssets(ctx: PlatformContext, tenantId: string, q: ListQuery) {
  const ids = arrayParam(q.ids);
  const channels = [...arrayParam(q.channels), ...(q.channelId ? [q.channelId] : [])];
  const statuses = lower([...arrayParam(q.statuses), ...(q.status ? [q.status] : [])]);
  const types = new Set([...arrayParam(q.types), ...(q.type ? [q.type] : [])].map((t) => oneOf('types', t, PLAYABLE_TYPES)));
  const source = q.source ? oneOf('source', q.source, SOURCES) : undefined;
  const tags = lower(arrayParam(q.tags));
  const attributes = arrayParam(q.attributes).map(normalizeAttributeFilter);
  const searchStart = dateParam(q.searchStart);
  const searchEnd = dateParam(q.searchEnd);
  const order = comparator(q);
  const filter: PlayableFilter = {
    ...(ids.length ? { ids } : {}),
    ...(channels.length ? { channelIds: channels } : {}),
    ...(statuses.size ? { statuses: [...statuses].map(spelled) } : {}),
    durationFrom: q.durationFrom,
    durationTo: q.durationTo,
    createDateStart: dateParam(q.createDateStart),
    createDateEnd: dateParam(q.createDateEnd),
    lastModificationDateStart: dateParam(q.lastModificationDateStart),
    lastModificationDateEnd: dateParam(q.lastModificationDateEnd),
    ...(attributes.length ? { attributes } : {}),
  };
  const kinds = ctx.catalogue.playables.filter((k) => (!types.size || types.has(k.type)) && (!source || k.source === source));
  const playables = (await Promise.all(kinds.map((k) => k.list(ctx, tenantId, filter)))).flat();

  // The kinds may leave a filter to us (statuses they name differently, ids of another form): checked again here.
  const idSet = new Set(ids.map((i) => i.toLowerCase()));
  const channelSet = new Set(channels.map((c) => c.toLowerCase()));
  const base = playables.filter(
    (p) =>
      (!idSet.size || idSet.has(p.id.toLowerCase())) &&
      (!channelSet.size || (p.channelId !== null && channelSet.has(p.channelId.toLowerCase()))) &&
      (!statuses.size || statuses.has(p.status.toLowerCase())) &&
      (q.isDrm === undefined || p.isDrm === q.isDrm) &&
      (q.durationFrom === undefined || (p.durationMilliseconds ?? -1) >= q.durationFrom) &&
      (q.durationTo === undefined || (p.durationMilliseconds !== null && p.durationMilliseconds <= q.durationTo)) &&
      (!attributes.length || attributes.every((a) => p.attributes.includes(a))) &&
      (!searchStart || span(p)[1] >= +searchStart) &&
      (!searchEnd || span(p)[0] <= +searchEnd),
  );

  // A tenant with many assets: one read of all its streaming rows rather than a long id list.
  const details: Map<string, DetailsRow> =
    base.length > 500
      ? new Map((await ctx.db.select().from(streamingAssets).where(eq(streamingAssets.tenantId, tenantId))).map((r) => [r.assetId, r]))
      : await detailsOf(
          ctx.db,
          tenantId,
          base.map((p) => p.id),
        );
  const { defaults } = await tenantSettings(ctx.db, tenantId);
  const text = q.query?.toLowerCase();
  const all = base
    .map((p) => presentStreamingAsset(p, details.get(p.id), defaults))
    .filter(
      (a) =>
        (!tags.size || [...tags].every((t) => a.tags.some((x) => x.name.toLowerCase() === t))) &&
        (!text || [a.title, a.description, ...Object.values(a.metadata), ...a.tags.map((x) => x.name)].some((v) => v?.toLowerCase().includes(text))),
    )
    .sort(order);
  const { limit, offset } = pageWindow(q);
  return envelope(all.slice(offset, offset + limit), all.length, q as PageRequest);
}
