/** The transcoder module's front door: what other modules may use of it (docs/architecture.md, "Front doors"). */
export { transcoderModule } from './manifest.ts';
/** The preset catalogue. */
export { presetById, type Preset } from './service.ts';
