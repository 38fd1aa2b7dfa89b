import { tenantPrefix } from '../../storage/keys.ts';

/** Where the Recorder keeps its objects; the only place these keys are spelled. */

/** A copy's multivariant playlist and MPD, under its prefix. */
export const MASTER = 'master.m3u8';
export const MPD = 'manifest.mpd';

/** Everything of a recording: `tenants/<t>/recordings/<recording>/`. */
export const recordingPrefix = (tenantId: string, id: string): string => `${tenantPrefix(tenantId)}recordings/${id}/`;
/** The recorded copy of the range (catch-up plays it; archives and outputs are made from it). */
export const mediaPrefix = (tenantId: string, id: string): string => `${recordingPrefix(tenantId, id)}media/`;
/** The archive: a second, persistent copy with its own expiration. */
export const archivePrefix = (tenantId: string, id: string): string => `${recordingPrefix(tenantId, id)}archive/`;
export const outputPrefix = (tenantId: string, id: string, outputId: string): string => `${recordingPrefix(tenantId, id)}outputs/${outputId}/`;

/** Where players fetch them (delivery.ts). `part` is `media`, `archive` or `outputs/<id>`. */
export const recordingUrl = (origin: string, tenantId: string, id: string, part: string, file: string): string =>
  `${origin}/media/recordings/${tenantId}/${id}/${part}/${file}`;
