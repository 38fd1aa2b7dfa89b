import { tenantPrefix } from '../../storage/keys.ts';

/** Where VOD keeps its objects; the only place these keys are spelled. */

/** An uploaded file's objects: `tenants/<t>/files/<file>/`. */
export const filePrefix = (tenantId: string, fileId: string): string => `${tenantPrefix(tenantId)}files/${fileId}/`;

/** An uploaded file's object: its sanitised name under the file's prefix. */
export const fileKey = (tenantId: string, fileId: string, safeName: string): string => `${filePrefix(tenantId, fileId)}${safeName}`;

/** Everything an asset's outputs wrote: `tenants/<t>/vod/<asset>/`. */
export const assetPrefix = (tenantId: string, assetId: string): string => `${tenantPrefix(tenantId)}vod/${assetId}/`;

/** One output's files (playlists, segments, downloads): `tenants/<t>/vod/<asset>/<output>/`. */
export const outputPrefix = (tenantId: string, assetId: string, outputId: string): string => `${assetPrefix(tenantId, assetId)}${outputId}/`;

/**
 * The chunked path's intermediate files of one output (chunks, audio): `tenants/<t>/vod-work/<asset>/<output>/`,
 * outside the asset's prefix that delivery serves, removed once the output is stitched.
 */
export const outputWorkPrefix = (tenantId: string, assetId: string, outputId: string): string => `${assetWorkPrefix(tenantId, assetId)}${outputId}/`;

/** Every output's intermediate files of one asset. */
export const assetWorkPrefix = (tenantId: string, assetId: string): string => `${tenantPrefix(tenantId)}vod-work/${assetId}/`;
