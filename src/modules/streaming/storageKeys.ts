import { tenantPrefix } from '../../storage/keys.ts';

/** Where the streaming module keeps its objects; the only place these keys are spelled. */

/** Everything of one streaming asset: `tenants/<t>/streaming/<asset>/`. */
export const streamingAssetPrefix = (tenantId: string, assetId: string): string => `${tenantPrefix(tenantId)}streaming/${assetId}/`;

/** An uploaded image: `.../images/<image id>/<name>`. */
export const imageKey = (tenantId: string, assetId: string, imageId: string, name: string): string =>
  `${streamingAssetPrefix(tenantId, assetId)}images/${imageId}/${name}`;

/** The frames extracted from an asset: `.../frames/<file>`. */
export const framesPrefix = (tenantId: string, assetId: string): string => `${streamingAssetPrefix(tenantId, assetId)}frames/`;

/** Where players and pages read them (served by media.routes.ts, no credentials: pictures of the catalogue). */
export const imageUrl = (origin: string, tenantId: string, assetId: string, imageId: string): string =>
  `${origin}/media/streaming/${tenantId}/${assetId}/images/${imageId}`;
export const frameUrl = (origin: string, tenantId: string, assetId: string, file: string): string =>
  `${origin}/media/streaming/${tenantId}/${assetId}/frames/${file}`;
