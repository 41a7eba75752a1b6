import { FIRST_NAME_LIST } from './lexicons/first-names';
import { LAST_NAME_LIST } from './lexicons/last-names';
import { GENERATED_GIVEN_NAMES, GENERATED_SURNAMES } from './lexicons/generated-names';
import { NAME_PARTICLES } from './lexicons/name-words';

/**
 * The name lexicons of pii/name, loaded once at module load into lower-case Sets: the hand-written lists
 * (lexicons/first-names.ts, last-names.ts) and the generated ones (lexicons/generated-names.ts, built by
 * tools/build-name-lexicon.ts from gender-detection-from-name and the US Census surnames).
 */

const words = (s: string) => s.split(/\s+/).filter((w) => w.length > 0);
const FIRST = new Set([...FIRST_NAME_LIST, ...words(GENERATED_GIVEN_NAMES)]);
const LAST = new Set([...LAST_NAME_LIST, ...words(GENERATED_SURNAMES)].filter((n) => !NAME_PARTICLES.has(n)));

const FOLD: Readonly<Record<string, string>> = { ł: 'l', ø: 'o', đ: 'd', ß: 'ss', æ: 'ae', œ: 'oe', ı: 'i' };

/** "Łukasz" → "lukasz", "José" → "jose": the lexicons are written without diacritics. */
export function fold(key: string): string {
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

const IS_FIRST = 1;
const IS_LAST = 2;
const KNOWN = 4;
/**
 * Lexicon answers per lower-case word (bit set of IS_FIRST / IS_LAST), memoised: the lookups fold and
 * strip the word first, and the same capitalised words recur through a text. Bounded: cleared when full.
 */
const MEMO = new Map<string, number>();
const MEMO_LIMIT = 20_000;

function lookup(lower: string): number {
  let bits = MEMO.get(lower);
  if (bits === undefined) {
    bits = KNOWN | (inLexicon(FIRST, lower, true) ? IS_FIRST : 0) | (inLexicon(LAST, lower, false) ? IS_LAST : 0);
    if (MEMO.size >= MEMO_LIMIT) MEMO.clear();
    MEMO.set(lower, bits);
  }
  return bits;
}

export const isFirst = (t: { lower: string }) => (lookup(t.lower) & IS_FIRST) !== 0;
export const isLast = (t: { lower: string }) => (lookup(t.lower) & IS_LAST) !== 0;
