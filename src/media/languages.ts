import { iso6392 } from 'iso-639-2';

/**
 * ISO 639-2 codes, both the bibliographic (`fre`, `ger`: what Matroska and ffmpeg write) and the terminological
 * (`fra`, `deu`: what MP4 writes) forms, so that every language a track can be tagged with is listed.
 * `und` (undetermined) and the private-use range `qaa-qtz` are no languages and are left out.
 */
export const LANGUAGES: readonly string[] = [
  ...new Set(iso6392.flatMap((l) => [l.iso6392B, ...(l.iso6392T ? [l.iso6392T] : [])]).filter((c) => /^[a-z]{3}$/.test(c) && c !== 'und')),
].sort();

const KNOWN = new Set(LANGUAGES);
const FROM_639_1 = new Map(iso6392.filter((l) => l.iso6391).map((l) => [l.iso6391!, l.iso6392B]));

/** A track's language tag as one of LANGUAGES (two-letter codes become their ISO 639-2 code), or undefined. */
export function normalizeLanguage(tag: string | undefined): string | undefined {
  const code = tag?.trim().toLowerCase();
  if (!code) return undefined;
  if (KNOWN.has(code)) return code;
  return FROM_639_1.get(code);
}
