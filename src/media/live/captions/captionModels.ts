import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { mediaTools } from '../../../config.ts';

/** A speech model of one language, as pocketsphinx takes it. */
export interface CaptionModel {
  /** BCP 47, `en-US`: what `aiLiveCaptioningLanguageCode` names. */
  code: string;
  name: string;
  /** Acoustic model directory, language model, pronunciation dictionary. */
  hmm: string;
  lm: string;
  dict: string;
}

/** `en-US` → "English (United States)", in the spec's style of display names. */
function displayName(code: string): string {
  const [language, region] = code.split('-');
  const languages = new Intl.DisplayNames(['en'], { type: 'language' });
  const regions = new Intl.DisplayNames(['en'], { type: 'region' });
  const lang = languages.of(language!) ?? language!;
  return region ? `${lang} (${regions.of(region) ?? region})` : lang;
}

/** Whether the recognizer program can be run (found on PATH, or the absolute POCKETSPHINX_PATH). */
function recognizerInstalled(): boolean {
  const bin = mediaTools().recognizer;
  const candidates = isAbsolute(bin) ? [bin] : (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, bin));
  return candidates.some((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * The languages whose model is installed under `root`, one directory per language as Debian's `pocketsphinx-en-us`
 * lays it out (`en-us/en-us/` the acoustic model, `en-us/en-us.lm.bin`, `en-us/cmudict-en-us.dict`); none when the
 * recognizer itself is missing. Read at each call: installing a model needs no restart.
 */
export function installedCaptionModels(root: string): CaptionModel[] {
  if (!recognizerInstalled() || !existsSync(root)) return [];
  const models: CaptionModel[] = [];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const m = /^([a-z]{2,3})-([a-z]{2})$/.exec(entry.name);
    if (!entry.isDirectory() || !m) continue;
    const dir = join(root, entry.name);
    const files = readdirSync(dir);
    const dict = files.find((f) => f.endsWith('.dict'));
    const hmm = join(dir, entry.name);
    const lm = join(dir, `${entry.name}.lm.bin`);
    if (!dict || !existsSync(join(hmm, 'mdef')) || !existsSync(lm)) continue;
    const code = `${m[1]}-${m[2]!.toUpperCase()}`;
    models.push({ code, name: displayName(code), hmm, lm, dict: join(dir, dict) });
  }
  return models.sort((a, b) => a.code.localeCompare(b.code));
}

/** The installed model of `code` (matched without regard to case), if any. */
export const captionModel = (root: string, code: string): CaptionModel | undefined =>
  installedCaptionModels(root).find((m) => m.code.toLowerCase() === code.toLowerCase());

/** ISO 639-2 codes of the languages pocketsphinx has models for (`code3Lettered`). */
const THREE_LETTERS: Record<string, string> = {
  en: 'eng',
  fr: 'fra',
  de: 'deu',
  es: 'spa',
  it: 'ita',
  pt: 'por',
  ru: 'rus',
  nl: 'nld',
  zh: 'zho',
  hi: 'hin',
  el: 'ell',
  kk: 'kaz',
};

/** Captions made from speech, as the API shows them (a channel's `aiLiveCaptioning`, an asset's `aiCaptioning`). */
export function captioningOf(code: string | null) {
  if (!code) return { isEnabled: false, language: null };
  const lang = code.split('-')[0]!;
  return { isEnabled: true, language: { name: displayName(code), code, code3Lettered: THREE_LETTERS[lang.toLowerCase()] ?? lang.toLowerCase() } };
}
