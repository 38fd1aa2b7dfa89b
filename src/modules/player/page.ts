import { readFileSync } from 'node:fs';
import type { PlayerFlags } from './embedUrl.ts';

/** The player's files at the repository's root (`web/player`), the same from `src/` and from the compiled `dist/`. */
export const webFile = (name: string): string => new URL(`../../../web/player/${name}`, import.meta.url).pathname;

const TEMPLATE = readFileSync(webFile('embed.html'), 'utf8');

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** JSON inside <script>: `<` escaped so that no value can close the element. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

export interface Boot {
  tenantId: string;
  assetId: string;
  sourceUrl: string;
  beaconUrl: string;
  libUrl: string;
  heartbeatMs: number;
  flags: PlayerFlags;
  /** The viewer's DRM token, for the key and license requests of a DRM-protected asset. */
  drmToken?: string;
}

/** The embed page that plays: its configuration in the page, then the player script. (Function replacers: a `$&` in a value stays text.) */
export const playerPage = (boot: Boot, title: string): string =>
  TEMPLATE.replace('%TITLE%', () => escapeHtml(title))
    .replace('%MESSAGE_CLASS%', () => '')
    .replace('%MESSAGE%', () => '')
    .replace('%BOOT%', () => scriptJson(boot))
    .replace('%SCRIPT%', () => `<script src="${escapeHtml(boot.libUrl)}/player.js"></script>`);

/** The same page saying why it does not play (an origin not allowed), without any script. */
export const refusalPage = (text: string): string =>
  TEMPLATE.replace('%TITLE%', () => 'Video unavailable')
    .replace('%MESSAGE_CLASS%', () => 'shown')
    .replace('%MESSAGE%', () => escapeHtml(text))
    .replace('%BOOT%', () => '{}')
    .replace('%SCRIPT%', () => '');
