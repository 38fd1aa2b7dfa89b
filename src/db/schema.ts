export * from './tenants.ts';
export * from './collectionVersions.ts';
// Every table, for drizzle-kit and the typed query builder.
export * from '../modules/admin/tables.ts';
export * from '../modules/core/tables.ts';
export * from '../modules/notifications/tables.ts';
export * from '../modules/vod/files.tables.ts';
export * from '../modules/vod/assets/tables.ts';
