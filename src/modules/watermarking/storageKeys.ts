import { tenantPrefix } from '../../storage/keys.ts';

/** Where watermarking keeps its objects; the only place these keys are spelled. */

/** A prepared asset's variants and reference: `tenants/<t>/watermarking/assets/<asset>/`. */
export const preparedPrefix = (tenantId: string, assetId: string): string => `${tenantPrefix(tenantId)}watermarking/assets/${assetId}/`;

/** A suspect file: `tenants/<t>/watermarking/files/<file>/<name>`. */
export const suspectKey = (tenantId: string, fileId: string, safeName: string): string => `${tenantPrefix(tenantId)}watermarking/files/${fileId}/${safeName}`;
