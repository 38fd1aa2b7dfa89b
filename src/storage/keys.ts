/**
 * Every object a tenant owns is under its prefix, so deleting a tenant's data is one prefix. Each module spells its own
 * keys below it in one file (`modules/vod/storageKeys.ts`).
 */
export const tenantPrefix = (tenantId: string): string => `tenants/${tenantId}/`;
