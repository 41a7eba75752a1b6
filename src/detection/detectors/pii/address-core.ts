import {
  CITY_STATE_BEFORE,
  DIRECTIONALS,
  EU_COMPOUND_ENDINGS,
  EU_SEPARATE_WORDS,
  FR_PARTICLES,
  FR_TYPES,
  FR_TYPES_WITH_PARTICLE,
  NON_HOUSE_NUMBER_WORDS,
  PO_BOX_BEFORE,
  ROMANCE_PARTICLES,
  ROMANCE_TYPES,
  STATE_CODES,
  STRONG_SUFFIX_SET,
  WEAK_SUFFIX_SET,
} from './address-patterns';
import { japaneseCore } from './address-intl';

/**
 * Address cores, anchored on a digit run (every address form has one: house number, PO box number or
 * ZIP). Each finder looks at a few words before or after the run, on the same line, with character
 * scans and Set lookups: constant work per digit run, linear overall, no regex backtracking.
 */

export type CoreKind = 'us' | 'eu' | 'po' | 'csz' | 'jp';

export interface Core {
  kind: CoreKind;
  start: number;
  end: number;
  base: number;
}

interface Word {
  start: number;
  end: number;
  text: string;
}

const STOPWORDS = new Set([
  'the', 'a', 'an', 'and', 'or', 'to', 'of', 'in', 'on', 'at', 'for', 'with', 'is', 'are', 'was', 'be', 'by',
  'it', 'this', 'that', 'as', 'from', 'into', 'than', 'then', 'times', 'more', 'less', 'new', 'old', 'my',
]);
const YEAR_PREPOSITIONS = new Set(['in', 'since', 'until', 'till', 'by', 'of', 'from', 'before', 'after', 'during']);
const LETTER = /\p{L}/u;
const CAPITALISED = /^[\p{Lu}\d]/u;
const UPPER_FIRST = /^\p{Lu}/u;
/** EU_COMPOUND_ENDINGS as one anchored alternation (longest first): one test per word instead of one per ending. */
const COMPOUND_ENDING = new RegExp(
  `(?:${[...new Set(EU_COMPOUND_ENDINGS)].sort((a, b) => b.length - a.length).map((e) => e.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')).join('|')})$`,
);

function isWordChar(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) return true;
  if (c === 0x27 || c === 0x2e || c === 0x2d || c === 0x2019) return true; // ' . - ’
  return c > 0x7f && LETTER.test(text.charAt(i));
}

/**
 * Up to `max` words after `from`, separated by spaces/tabs only (a comma or newline ends the line). `stop`
 * may end the walk early (an empty result) when a word rules the candidate out.
 */
function wordsAfter(text: string, from: number, max: number, stop?: (word: string, index: number) => boolean): Word[] {
  const out: Word[] = [];
  let i = from;
  while (out.length < max) {
    const spaceStart = i;
    while (i < text.length && (text[i] === ' ' || text[i] === '\t')) i++;
    if (i === spaceStart || i - spaceStart > 3) break;
    const start = i;
    while (i < text.length && isWordChar(text, i) && i - start < 40) i++;
    if (i === start) break;
    const word = text.slice(start, i);
    if (stop?.(word, out.length)) return [];
    out.push({ start, end: i, text: word });
  }
  return out;
}

/** Up to `max` words before `to`, nearest first, separated by spaces/tabs only (`to` may end a word). */
function wordsBefore(text: string, to: number, max: number): Word[] {
  const out: Word[] = [];
  let i = to;
  while (out.length < max) {
    const spaceEnd = i;
    while (i > 0 && (text[i - 1] === ' ' || text[i - 1] === '\t')) i--;
    if ((i === spaceEnd && out.length > 0) || spaceEnd - i > 3) break;
    const end = i;
    while (i > 0 && isWordChar(text, i - 1) && end - i < 40) i--;
    if (i === end) break;
    out.push({ start: i, end, text: text.slice(i, end) });
  }
  return out;
}

const bare = (w: string) => w.replace(/\.+$/, '').toLowerCase();

/** The core (if any) that this digit run [ds, de) anchors. Cheap character checks run before any finder. */
export function coreAt(text: string, ds: number, de: number): Core | null {
  if (ds > 0 && isWordChar(text, ds - 1) && text[ds - 1] !== '-' && text[ds - 1] !== "'") {
    // "梅田3丁目": a Japanese block number is glued to the kanji of its place.
    return text.charCodeAt(ds - 1) >= 0x3400 ? japaneseCore(text, ds, de) : null;
  }
  const after = text.charCodeAt(de);
  const before = ds > 0 ? text.charCodeAt(ds - 1) : -1;
  const spaceAfter = after === 0x20 || after === 0x09;
  const spaceBefore = before === 0x20 || before === 0x09;
  let core: Core | null = null;
  if (spaceAfter || after === 0x2c || after === 0x2d || LETTER.test(text.charAt(de))) {
    core = usCore(text, ds, de) ?? frenchCore(text, ds, de);
  }
  if (!core && spaceBefore && startsCapitalisedWordBefore(text, ds)) core = euNameFirstCore(text, ds, de) ?? romanceCore(text, ds, de);
  if (!core && (spaceBefore || before === 0x2c) && text.charCodeAt(ds - 2) === 0x2c) core = romanceCore(text, ds, de);
  if (!core && mayFollowPoBox(text, ds)) core = poBoxCore(text, ds, de);
  if (!core && de - ds === 5 && spaceBefore) core = cityStateZipCore(text, ds, de);
  if (!core && (before === 0x3012 || before > 0x2fff || spaceBefore)) core = japaneseCore(text, ds, de);
  return core;
}

/** True when the word right before `ds` (after spaces, and an optional comma) starts with a capital. */
function startsCapitalisedWordBefore(text: string, ds: number): boolean {
  let i = ds;
  while (i > 0 && (text[i - 1] === ' ' || text[i - 1] === '\t')) i--;
  if (text[i - 1] === ',') i--;
  const end = i;
  while (i > 0 && isWordChar(text, i - 1) && end - i < 40) i--;
  return i < end && UPPER_FIRST.test(text.charAt(i));
}

const PO_BOX_WORD = /box|postfach|apartado|postale/i;

function mayFollowPoBox(text: string, ds: number): boolean {
  return PO_BOX_WORD.test(text.slice(Math.max(0, ds - 30), ds));
}

/** "1600 Pennsylvania Avenue NW": number, 1–5 name words, a street suffix, an optional directional. */
function usCore(text: string, ds: number, de: number): Core | null {
  if (de - ds > 6) return null;
  let numEnd = de;
  const next = text.charCodeAt(de);
  if (LETTER.test(text.charAt(de)) && !isWordChar(text, de + 1)) numEnd = de + 1; // 221B
  else if (next === 0x2d && /\d/.test(text.charAt(de + 1))) {
    numEnd = de + 1;
    while (numEnd < text.length && /\d/.test(text.charAt(numEnd)) && numEnd - de < 6) numEnd++;
  } else if (isWordChar(text, de)) return null;
  const words = wordsAfter(text, numEnd, 7, (w, k) => k === 0 && STOPWORDS.has(w.toLowerCase()));
  let k = 1;
  for (; k < words.length && k <= 5; k++) {
    const key = bare((words[k] as Word).text);
    if (STRONG_SUFFIX_SET.has(key) || WEAK_SUFFIX_SET.has(key)) break;
  }
  if (k >= words.length || k > 5) return null;
  // "Getty Center Dr": a weak suffix followed by a strong one is part of the name.
  const following = words[k + 1];
  if (following && WEAK_SUFFIX_SET.has(bare((words[k] as Word).text)) && STRONG_SUFFIX_SET.has(bare(following.text))) k++;
  const names = words.slice(0, k).map((w) => w.text);
  const suffix = (words[k] as Word).text;
  const key = bare(suffix);
  const before = precedingWord(text, ds);
  if (NON_HOUSE_NUMBER_WORDS.has(before.word) || (before.char !== '' && '.:/$+=_-#'.includes(before.char))) return null;
  if (yearLike(text.slice(ds, de)) && YEAR_PREPOSITIONS.has(before.word)) return null;
  let end = (words[k] as Word).end;
  const post = words[k + 1];
  if (post && DIRECTIONALS.has(post.text.toLowerCase())) end = post.end;
  const allCap = names.every((w) => CAPITALISED.test(w)) && UPPER_FIRST.test(suffix);
  const allLower = names.every((w) => !UPPER_FIRST.test(w)) && !UPPER_FIRST.test(suffix);
  if (allCap) return { kind: 'us', start: ds, end, base: STRONG_SUFFIX_SET.has(key) ? 0.55 : 0.5 };
  if (allLower && STRONG_SUFFIX_SET.has(key) && !names.some((w) => STOPWORDS.has(w))) {
    return { kind: 'us', start: ds, end, base: 0.45 };
  }
  return null;
}

/** "12 rue de la Paix": number (bis/ter), street type, capitalised name words and particles. */
function frenchCore(text: string, ds: number, de: number): Core | null {
  if (de - ds > 4) return null;
  // Cheap gate: the first word after the number (or "bis"/"ter") must be a French street type.
  const firstWords = wordsAfter(text, text[de] === ',' ? de + 1 : de, 2);
  const gate = firstWords[0] && /^(?:bis|ter)$/i.test(firstWords[0].text) ? firstWords[1] : firstWords[0];
  const gateWord = gate?.text.toLowerCase() ?? '';
  if (!FR_TYPES.has(gateWord) && !FR_TYPES_WITH_PARTICLE.has(gateWord)) return null;
  let words = wordsAfter(text, de, 9);
  if (words[0] && /^(?:bis|ter)$/i.test(words[0].text)) words = words.slice(1);
  if (text[de] === ',') words = wordsAfter(text, de + 1, 9);
  const type = words[0];
  if (!type) return null;
  const t = type.text.toLowerCase();
  let i = 1;
  if (FR_TYPES_WITH_PARTICLE.has(t)) {
    // "avenue de la Gare", "avenue d'Italie", "avenue Jean Jaurès"; not "5 avenue options".
    const next = words[1]?.text ?? '';
    if (!FR_PARTICLES.has(next.toLowerCase()) && !/^[dl]['’]\p{Lu}/u.test(next) && !UPPER_FIRST.test(next)) return null;
  } else if (!FR_TYPES.has(t)) return null;
  let end = -1;
  for (; i < words.length; i++) {
    const w = (words[i] as Word).text;
    const lower = w.toLowerCase();
    const particle = FR_PARTICLES.has(lower) || /^[dl]['’]/.test(lower);
    if (!particle && !UPPER_FIRST.test(w)) break;
    if (!particle || /^[dl]['’]\p{Lu}/u.test(w)) end = (words[i] as Word).end;
  }
  return end < 0 ? null : { kind: 'eu', start: ds, end, base: 0.55 };
}

/** "Hauptstraße 5", "Berliner Str. 12", "Keizersgracht 123": street name first, then the number. */
function euNameFirstCore(text: string, ds: number, de: number): Core | null {
  if (de - ds > 4 || isHouseNumberTail(text, de) === false) return null;
  if (ds === 0 || (text[ds - 1] !== ' ' && text[ds - 1] !== '\t')) return null;
  const [w1, w0] = wordsBefore(text, ds, 2);
  if (!w1) return null;
  const lower = w1.text.toLowerCase();
  const end = houseNumberEnd(text, de);
  const ending = UPPER_FIRST.test(w1.text) ? COMPOUND_ENDING.exec(lower) : null;
  if (ending && lower.length > ending[0].length + 1) {
    return yearLike(text.slice(ds, de)) ? null : { kind: 'eu', start: w1.start, end, base: 0.5 };
  }
  if (EU_SEPARATE_WORDS.has(w1.text) && w0 && UPPER_FIRST.test(w0.text)) return { kind: 'eu', start: w0.start, end, base: 0.5 };
  return null;
}

/** "Calle Mayor 10", "Via Roma 12", "Avenida Paulista, 1578": street type, capitalised name, number. */
function romanceCore(text: string, ds: number, de: number): Core | null {
  if (de - ds > 4 || isHouseNumberTail(text, de) === false) return null;
  let to = ds;
  while (to > 0 && (text[to - 1] === ' ' || text[to - 1] === '\t')) to--;
  if (to === ds) return null;
  if (text[to - 1] === ',') to--;
  const words = wordsBefore(text, to, 6);
  let sawName = false;
  for (const [i, w] of words.entries()) {
    if (ROMANCE_TYPES.has(w.text)) {
      // "Gran Via 28": an adjective before the type word names the street.
      const adjective = i === 0 ? words[1] : undefined;
      if (!sawName && adjective && UPPER_FIRST.test(adjective.text)) sawName = true;
      const start = !sawName ? w.start : i === 0 && adjective ? adjective.start : w.start;
      return sawName ? { kind: 'eu', start, end: houseNumberEnd(text, de), base: 0.5 } : null;
    }
    if (UPPER_FIRST.test(w.text)) sawName = true;
    else if (!ROMANCE_PARTICLES.has(w.text)) return null;
  }
  return null;
}

function poBoxCore(text: string, ds: number, de: number): Core | null {
  if (de - ds > 7 || isWordChar(text, de)) return null;
  const before = text.slice(Math.max(0, ds - 30), ds);
  const m = PO_BOX_BEFORE.exec(before);
  return m ? { kind: 'po', start: ds - before.length + m.index + (m[0].match(/^\s*/)?.[0].length ?? 0), end: de, base: 0.6 } : null;
}

/** "Springfield, IL 62704" without a street line. */
function cityStateZipCore(text: string, ds: number, de: number): Core | null {
  if (de - ds !== 5) return null;
  let end = de;
  if (text[de] === '-' && /^\d{4}$/.test(text.slice(de + 1, de + 5)) && !isWordChar(text, de + 5)) end = de + 5;
  else if (isWordChar(text, de)) return null;
  const before = text.slice(Math.max(0, ds - 50), ds);
  const m = CITY_STATE_BEFORE.exec(before);
  if (!m || !STATE_CODES.has(m[2] as string)) return null;
  const cityStart = ds - before.length + m.index + m[0].indexOf(m[1] as string);
  return { kind: 'csz', start: cityStart, end, base: 0.5 };
}

/** A house number ends at a non-word character, or takes one trailing letter ("12a"). */
function isHouseNumberTail(text: string, de: number): boolean {
  if (!isWordChar(text, de) || text[de] === '.' || text[de] === "'") return true;
  return LETTER.test(text.charAt(de)) && !isWordChar(text, de + 1);
}

/** "12a", and the Dutch floor / part additions "586 I", "12-II", "7 hs". */
const NUMBER_ADDITION = /[ -](?:I{1,3}|IV|hs|bis|ter)(?![\p{L}\p{N}])/uy;

function houseNumberEnd(text: string, de: number): number {
  if (LETTER.test(text.charAt(de)) && !isWordChar(text, de + 1)) return de + 1;
  NUMBER_ADDITION.lastIndex = de;
  return NUMBER_ADDITION.test(text) ? NUMBER_ADDITION.lastIndex : de;
}

export function yearLike(number: string): boolean {
  if (!/^\d{4}$/.test(number)) return false;
  const y = Number(number);
  return y >= 1900 && y <= 2099;
}

/** The lower-cased word right before `at` (skipping spaces) and the character right before `at`. */
function precedingWord(text: string, at: number): { word: string; char: string } {
  const char = at > 0 ? (text[at - 1] as string) : '';
  let i = at;
  while (i > 0 && (text[i - 1] === ' ' || text[i - 1] === '\t')) i--;
  const end = i;
  while (i > 0 && /[A-Za-z]/.test(text[i - 1] as string)) i--;
  return { word: text.slice(i, end).toLowerCase(), char: char === ' ' || char === '\t' ? '' : char };
}
