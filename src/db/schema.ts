// The platform's own tables, for drizzle-kit (drizzle.config.ts); each module's tables are in its `tables.ts` or
// `*.tables.ts`, which drizzle-kit finds itself.
export * from './tenants.ts';
export * from './collectionVersions.ts';
export * from './events.ts';
export * from './rateLimits.ts';
export * from './storageDeletions.ts';
