import { gte, lte, type Column, type SQL } from 'drizzle-orm';
import type { PlatformContext } from '../context.ts';

/**
 * The streaming catalogue's registry: each content module says how to list and read what it has that a player can
 * play, as one `PlayableKind` in its manifest (`playables`). The platform collects them at start into
 * `ctx.catalogue.playables` (`platform/catalogue.ts`), the way it collects event types, so the streaming module reads
 * every kind without importing any module's tables.
 */

/** The streaming asset types of the spec (AssetResult `type`). */
export const PLAYABLE_TYPES = ['Vod', 'LiveChannel', 'LiveEvent', 'Recording'] as const;
export type PlayableType = (typeof PLAYABLE_TYPES)[number];

/** The module of origin (AssetResult `source`). */
export type PlayableSource = 'Vod' | 'Live' | 'Recorder';

/** An EndpointInfo (spec part 1): where one format of an output plays. */
export interface PlayableEndpoint {
  id?: string;
  accessType: string;
  format: string;
  url: string;
  protection: string;
  preset?: string | null;
  manifest?: string | null;
  durationMilliseconds?: number | null;
  size?: number | null;
  hasVerticalOrientation?: boolean;
}

export interface PlayableOutput {
  id: string;
  status: string;
  preset: string | null;
  expirationDate: Date | null;
  endpoints: PlayableEndpoint[];
}

/** The base fields of a streaming asset, as the module that owns it knows them. */
export interface Playable {
  id: string;
  type: PlayableType;
  source: PlayableSource;
  status: string;
  title: string | null;
  metadata: Record<string, string>;
  /** The owning module's own labels (`key=value`); the `attributes` filter matches them. */
  attributes: string[];
  createDate: Date;
  lastModificationDate: Date;
  durationMilliseconds: number | null;
  channelId: string | null;
  start: Date | null;
  end: Date | null;
  isDrm: boolean;
  /**
   * The DRM content id whose keys protect it when that is not its own id (a recording of a DRM channel plays with
   * the channel's keys): `POST /drm/v1/tokens { assetId }` gives a token for that content.
   */
  drmContentId?: string;
  preset: string | null;
  outputs: PlayableOutput[];
}

/**
 * What a kind can narrow in its own query; the catalogue applies the rest (tags, text, sorting, paging). Every field
 * is optional and a kind may ignore one it cannot express: the catalogue checks the base fields again after it.
 */
export interface PlayableFilter {
  ids?: string[];
  channelIds?: string[];
  statuses?: string[];
  durationFrom?: number;
  durationTo?: number;
  createDateStart?: Date;
  createDateEnd?: Date;
  lastModificationDateStart?: Date;
  lastModificationDateEnd?: Date;
  attributes?: string[];
}

/** A kind's conditions for the filter's creation and modification dates, on its own columns (inside its `and`). */
export function datesWhere(f: PlayableFilter, createDate: Column, lastModificationDate: Column): (SQL | undefined)[] {
  return [
    f.createDateStart ? gte(createDate, f.createDateStart) : undefined,
    f.createDateEnd ? lte(createDate, f.createDateEnd) : undefined,
    f.lastModificationDateStart ? gte(lastModificationDate, f.lastModificationDateStart) : undefined,
    f.lastModificationDateEnd ? lte(lastModificationDate, f.lastModificationDateEnd) : undefined,
  ];
}

export interface PlayableKind {
  type: PlayableType;
  source: PlayableSource;
  /** Every playable of the tenant of this kind that matches the filter. */
  list(ctx: PlatformContext, tenantId: string, filter: PlayableFilter): Promise<Playable[]>;
  /** One playable of the tenant, or undefined (another tenant's too). */
  get(ctx: PlatformContext, tenantId: string, id: string): Promise<Playable | undefined>;
  /**
   * Where to read the asset's video to extract still frames from, when it has video to show (undefined: none yet, or
   * none any more); kinds that never have video leave it out.
   */
  frameSource?(ctx: PlatformContext, tenantId: string, id: string): Promise<FrameSource | undefined>;
}

/** The video still frames are taken from. */
export interface FrameSource {
  /**
   * A location ffmpeg can open (a store object's readable location, a URL), or `playlist`: the text of an HLS media
   * playlist whose URIs are such locations (a range of a live channel's timeline, which has no file of its own).
   */
  location?: string;
  playlist?: string;
  /**
   * Whether the video is finished: frames taken of it stand for good. A live stream's (a channel, an event still
   * running) are taken again once they are older than a refresh interval.
   */
  final: boolean;
}

/** Reads one playable from whichever kind has it (ids are unique across kinds: uuids or event ids). */
export async function findPlayable(ctx: PlatformContext, tenantId: string, id: string): Promise<{ kind: PlayableKind; playable: Playable } | undefined> {
  for (const kind of ctx.catalogue.playables) {
    const playable = await kind.get(ctx, tenantId, id);
    if (playable) return { kind, playable };
  }
  return undefined;
}
