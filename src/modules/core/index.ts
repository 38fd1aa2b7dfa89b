/** The core module's front door: what other modules may use of it (docs/architecture.md, "Front doors"). */
export { coreModule } from './manifest.ts';
/** An API key made for a new tenant (admin). */
export { createApiKey, type CreatedApiKey } from './service.ts';
