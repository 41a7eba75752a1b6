import { FIRST_NAME_LIST } from './lexicons/first-names';
import { LAST_NAME_LIST } from './lexicons/last-names';
import { NAME_PARTICLES } from './lexicons/name-words';

/** The name lexicons of pii/name, loaded once at module load into lower-case Sets. */

const FIRST = new Set(FIRST_NAME_LIST);
const LAST = new Set(LAST_NAME_LIST.filter((n) => !NAME_PARTICLES.has(n)));

const FOLD: Readonly<Record<string, string>> = { ł: 'l', ø: 'o', đ: 'd', ß: 'ss', æ: 'ae', œ: 'oe', ı: 'i' };

/** "Łukasz" → "lukasz", "José" → "jose": the lexicons are written without diacritics. */
function fold(key: string): string {
  if (!/[^\x00-\x7f]/.test(key)) return key;
  return key
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/[łøđßæœı]/g, (c) => FOLD[c] ?? c);
}

/** Lexicon lookups ignore apostrophes ("O'Brien" = "obrien") and read hyphenated names part by part. */
function inLexicon(lexicon: ReadonlySet<string>, lower: string, every: boolean): boolean {
  const key = fold(lower.replace(/['’]/g, ''));
  if (lexicon.has(key)) return true;
  if (!key.includes('-')) return false;
  const parts = key.split('-').filter((p) => !NAME_PARTICLES.has(p));
  return parts.length > 0 && (every ? parts.every((p) => lexicon.has(p)) : lexicon.has(parts[parts.length - 1] as string));
}

export const isFirst = (t: { lower: string }) => inLexicon(FIRST, t.lower, true);
export const isLast = (t: { lower: string }) => inLexicon(LAST, t.lower, false);
