/** The streaming module's front door: what other modules may use of it (docs/architecture.md, "Front doors"). */
export { streamingModule } from './manifest.ts';
/** The tenant's allowed player and analytics domains (player embeds, analytics beacons). */
export { isOriginAllowed, originRefused } from './domains.ts';
export { playbackSource } from './playback.ts';
export { requirePlayable } from './catalogue.ts';
/** A playback token a caller gives to embed (a QR code), checked as the media guard would check it. */
export { checkGivenToken } from './tokens.ts';
