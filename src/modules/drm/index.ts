/** The drm module's front door: what other modules may use of it (docs/architecture.md, "Front doors"). */
export { drmModule } from './manifest.ts';
/** The content keys of an encrypted output (vod, live, recorder), and how a key mode names them. */
export { contentKeysFor, DRM_KEY_MODES, keyIdsOf, keyModeOf, type DrmKeyMode } from './keys.ts';
export { outputEncryption } from './service.ts';
/** Where a player asks for a ClearKey license (streaming's player sources). */
export { clearKeyLicenseUrl } from './urls.ts';
