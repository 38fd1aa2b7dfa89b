/** The vod module's front door: what other modules may use of it (docs/architecture.md, "Front doors"). */
export { vodModule } from './manifest.ts';
/** Multipart upload limits and plans, shared by every upload of the API (streaming images, watermarking files). */
export { completeParts, MAX_FILE_SIZE, MAX_PARTS, partUrl, partUrls, planParts, storedPlan } from './files.parts.ts';
/** A VOD file and asset of the tenant (watermarking prepares them). */
export { findFile, goneFromStore } from './files.service.ts';
export { getAsset } from './assets/service.ts';
