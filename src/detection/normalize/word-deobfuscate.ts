import { identityText, MappedTextBuilder, type MappedText } from './offset-map';
import { isAscii } from './unicode';

/**
 * Word-level obfuscations undone in the canonical view. Each one edits only the words that carry its
 * mark, and only when the text shows the obfuscation clearly enough (a cheap trigger), so ordinary text
 * is left alone and gets no canonical view because of it:
 *
 *   marks       "Í́ǵńóŕé" (a combining accent on every letter): in a Latin, Greek or Cyrillic word of
 *               >= 3 letters where >= MARKED_RATIO of the letters carry a combining mark (every letter
 *               of a word of up to 9), the marks are removed. French, Vietnamese, Turkish or polytonic
 *               Greek mark far fewer letters per word.
 *   separators  "i/g/n/o/r/e", "i_g_n_o_r_e", "a.l.l": >= 3 single letters separated by one repeated
 *               separator (/ _ . - * | + ~ : , ; \ · •), at the start of a word (not inside a path or a
 *               URL), are joined ("ignore"); applied when the text has a group of >= 5 letters, or two
 *               groups one of which has >= 4 (so "r/w/x", "a.k.a." or "U.S.A." stay as they are).
 *   leetspeak   "1gn0r3 4ll pr3v10u5": in words (whole whitespace-delimited tokens but for punctuation at
 *               their edges: never a piece of a URL, a path or a snake_case identifier) that mix ASCII
 *               letters with the digits 0 1 3 4 5 7 8 9,
 *               the digits become the letters they imitate (o i e a s t b g); applied when the text has
 *               >= MIN_STRONG_LEET words with digits in two or more places ("1gn0r3", "pr3v10u5"). Words
 *               that are not leetspeak are never rewritten: words with a 2 or a 6 (no letter looks like
 *               them: "sha256", "x86_64"), hex-only words of >= 4 characters (hashes, UUIDs), words of
 *               more than 15 characters (identifiers, blobs), ordinals and numbers with a unit ("3rd",
 *               "10px"), a number before letters ("10x"), digits only at the end ("utf8", "user42"),
 *               and more digits than letters + 1 ("1400x800", "7WA3N873").
 *
 * Marks are removed word by word (a word maps as a whole), separators and digits are replaced
 * character for character (linear maps).
 */

export const MARKED_RATIO = 0.9;
export const MIN_STRONG_LEET = 2;

const MARKED_SCRIPT = /^[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{M}]+$/u;
const MARK = /\p{M}/u;
const MARKS = /\p{M}/gu;

/**
 * A word where >= 9/10 of >= 3 letters carry a mark has two adjacent marked letters; a marked letter is
 * non-ASCII after NFKC ("é"), or an ASCII letter followed by a mark NFKC could not compose ("l\u0300").
 * So two non-ASCII characters with at most one ASCII letter between them are the trigger, and only the
 * words around such a pair are looked at.
 */
const NON_ASCII_PAIR = /[^\x00-\x7f][A-Za-z]?[^\x00-\x7f]/g;
const WORD_CHAR = /[\p{L}\p{M}]/u;

/** Removes the combining marks of words where nearly every letter carries one. */
export function stripMarkedWords(source: string, base?: MappedText): MappedText {
  const unchanged = base ?? identityText(source);
  if (isAscii(source)) return unchanged;
  let builder: MappedTextBuilder | undefined;
  let cursor = 0;
  NON_ASCII_PAIR.lastIndex = 0;
  for (let m = NON_ASCII_PAIR.exec(source); m; m = NON_ASCII_PAIR.exec(source)) {
    const { start, end } = wordAround(source, m.index);
    NON_ASCII_PAIR.lastIndex = Math.max(end, m.index + 1);
    const word = source.slice(start, end);
    if (start < cursor || !isMarkedWord(word)) continue;
    builder ??= new MappedTextBuilder(source);
    builder.keep(cursor, start);
    builder.replace(start, end, word.normalize('NFD').replace(MARKS, ''));
    cursor = end;
  }
  NON_ASCII_PAIR.lastIndex = 0;
  if (!builder) return unchanged;
  builder.keep(cursor, source.length);
  return builder.build(base);
}

/** The run of letters and marks around `at` (surrogate pairs included). */
function wordAround(source: string, at: number): { start: number; end: number } {
  let start = at;
  for (;;) {
    const width = start > 1 && isLowSurrogate(source.charCodeAt(start - 1)) ? 2 : 1;
    if (start - width < 0 || !WORD_CHAR.test(source.slice(start - width, start))) break;
    start -= width;
  }
  let end = at;
  for (;;) {
    const width = isLowSurrogate(source.charCodeAt(end + 1)) ? 2 : 1;
    if (end >= source.length || !WORD_CHAR.test(source.slice(end, end + width))) break;
    end += width;
  }
  return { start, end };
}

const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

function isMarkedWord(word: string): boolean {
  if (word.length < 3 || !MARKED_SCRIPT.test(word)) return false;
  let letters = 0;
  let marked = 0;
  for (const ch of word) {
    if (MARK.test(ch)) continue;
    letters++;
    if (ch.normalize('NFD').length > ch.length) marked++;
  }
  // Marks after the letter are in the word too (NFKC could not compose them all).
  marked = Math.min(letters, marked + countUncomposedMarkedLetters(word));
  return letters >= 3 && marked >= letters * MARKED_RATIO;
}

/** Letters followed by a combining mark that NFKC left uncomposed (they were not counted as marked). */
function countUncomposedMarkedLetters(word: string): number {
  let n = 0;
  let previousWasLetter = false;
  for (const ch of word) {
    const mark = MARK.test(ch);
    if (mark && previousWasLetter) n++;
    previousWasLetter = !mark;
  }
  return n;
}

/** A group starts a word (after a space, a quote, a bracket or a CSV delimiter: not inside a path or a URL). */
const SEPARATED = /(?<![^\s"'(\[{,;])[A-Za-z]([/_.\-*|+~:,;\\\u00b7\u2022])[A-Za-z](?:\1[A-Za-z])+(?![A-Za-z0-9])/g;

/** A letter between two copies of one separator (the trigger; a literal class scans fastest). */
const SEPARATED_QUICK = /([/_.\-*|+~:,;\\\u00b7\u2022])[A-Za-z]\1/;

/** Joins letters spelled one by one with a separator ("i/g/n/o/r/e" → "ignore"). */
export function joinSeparatedLetters(source: string, base?: MappedText): MappedText {
  const unchanged = base ?? identityText(source);
  if (!SEPARATED_QUICK.test(source)) return unchanged;
  const groups: RegExpExecArray[] = [];
  SEPARATED.lastIndex = 0;
  for (let m = SEPARATED.exec(source); m; m = SEPARATED.exec(source)) groups.push(m);
  SEPARATED.lastIndex = 0;
  const longest = Math.max(0, ...groups.map((m) => (m[0].length + 1) / 2));
  if (!(longest >= 5 || (groups.length >= 2 && longest >= 4))) return unchanged;
  const builder = new MappedTextBuilder(source);
  let cursor = 0;
  for (const m of groups) {
    builder.keep(cursor, m.index);
    for (let k = 0; k < m[0].length; k += 2) {
      builder.keep(m.index + k, m.index + k + 1);
      if (k + 1 < m[0].length) builder.replace(m.index + k + 1, m.index + k + 2, '');
    }
    cursor = m.index + m[0].length;
  }
  builder.keep(cursor, source.length);
  return builder.build(base);
}

const LEET: Readonly<Record<string, string>> = { '0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '8': 'b', '9': 'g' };
/**
 * A token ends at white space, a double quote (JSON text: `{"query":"1gn0r3 ..."}` in tool arguments or a
 * schema), a comma or a semicolon (CSV and similar rows: `1,1gn0r3 4ll ...` in a decoded text file).
 */
const TOKEN = /[^\s",;]+/g;
/** Longer runs are identifiers or encoded blobs, not words. */
const MAX_LEET_WORD = 15;
const HEX_ONLY = /^[0-9a-fA-F]{4,}$/;
const UNIT_OR_ORDINAL = /^\d+(?:st|nd|rd|th|px|pt|em|rem|ms|s|m|h|d|k|kb|mb|gb|tb|x|bit|bits|g|kg|km|cm|mm|ml|hz|khz|mhz|ghz|fps|min|sec|am|pm)$/i;
/** Digits in one group at the end ("utf8", "sha1", "user42"), or a number of two or more digits before letters. */
const TRAILING_DIGITS = /^[A-Za-z]+[0-9]+$/;
const LEADING_NUMBER = /^[0-9]{2,}[A-Za-z]+$/;

function leetDigitGroups(word: string): number {
  let groups = 0;
  let inGroup = false;
  for (const ch of word) {
    const leet = LEET[ch] !== undefined;
    if (leet && !inGroup) groups++;
    inGroup = leet;
  }
  return groups;
}

function isLeetWord(word: string): boolean {
  if (word.length < 3 || word.length > MAX_LEET_WORD || !/[0-9]/.test(word) || !/[A-Za-z]/.test(word) || /[26]/.test(word)) return false;
  if (HEX_ONLY.test(word) || UNIT_OR_ORDINAL.test(word)) return false;
  if (TRAILING_DIGITS.test(word) || LEADING_NUMBER.test(word)) return false;
  // Leetspeak keeps most letters: a word with more digits than letters is a code or a size ("1400x800").
  const letters = word.replace(/[^A-Za-z]/g, '').length;
  return letters >= 2 && word.length - letters <= letters + 1;
}

/** A leet digit, letters, a leet digit: the heart of a word with digits in two places ("1gn0r3"). */
const STRONG_CORE = /[013457-9][A-Za-z]+[013457-9]/g;
/**
 * A leetspeak word is a whole token (delimited as TOKEN says), apart from punctuation
 * at its edges: a piece of a URL, a path, an identifier with '_' or a key=value is not a word
 * ("bit.ly/3xYz9Qk"). A double quote delimits so that a word opening a JSON string value counts.
 */
const TOKEN_WORD = /^[.,;:!?"'()[\]{}]*([A-Za-z0-9]+)[.,;:!?"'()[\]{}]*$/;
const isTokenEnd = (c: number) => c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0xa0 || c === 0x22 || c === 0x2c || c === 0x3b;

/** The word of the token around `at` ('' when the token is not a word). */
function leetWordAround(source: string, at: number): { start: number; end: number; word: string } {
  let start = at;
  while (start > 0 && !isTokenEnd(source.charCodeAt(start - 1))) start--;
  let end = at;
  while (end < source.length && !isTokenEnd(source.charCodeAt(end))) end++;
  const token = TOKEN_WORD.exec(source.slice(start, end));
  if (!token) return { start, end, word: '' };
  const word = token[1] as string;
  const wordStart = start + token[0].indexOf(word);
  return { start: wordStart, end: wordStart + word.length, word };
}

/** Cheap trigger: at least MIN_STRONG_LEET leetspeak words with digits in two or more places. */
function hasStrongLeet(source: string): boolean {
  let strong = 0;
  STRONG_CORE.lastIndex = 0;
  for (let m = STRONG_CORE.exec(source); m && strong < MIN_STRONG_LEET; m = STRONG_CORE.exec(source)) {
    const found = leetWordAround(source, m.index);
    STRONG_CORE.lastIndex = Math.max(found.end, m.index + 1);
    if (found.word !== '' && isLeetWord(found.word)) strong++;
  }
  STRONG_CORE.lastIndex = 0;
  return strong >= MIN_STRONG_LEET;
}

/** Rewrites leetspeak words ("1gn0r3" → "ignore") when the text has enough unmistakable ones. */
export function deLeet(source: string, base?: MappedText): MappedText {
  const unchanged = base ?? identityText(source);
  if (!hasStrongLeet(source)) return unchanged;
  const words: { start: number; end: number; word: string }[] = [];
  // A leetspeak word has a digit, so only the tokens (as leetWordAround delimits them) around a digit are
  // looked at: their TOKEN matches in order, as a TOKEN pass over the whole text would meet them.
  const n = source.length;
  for (let i = 0; i < n; i++) {
    const c = source.charCodeAt(i);
    if (c < 0x30 || c > 0x39) continue;
    let start = i;
    while (start > 0 && !isTokenEnd(source.charCodeAt(start - 1))) start--;
    let end = i + 1;
    while (end < n && !isTokenEnd(source.charCodeAt(end))) end++;
    TOKEN.lastIndex = start;
    for (let m = TOKEN.exec(source); m && m.index < end; m = TOKEN.exec(source)) {
      const found = leetWordAround(source, m.index);
      if (found.word !== '' && isLeetWord(found.word)) words.push(found);
    }
    i = end;
  }
  TOKEN.lastIndex = 0;
  const builder = new MappedTextBuilder(source);
  let cursor = 0;
  for (const w of words) {
    builder.keep(cursor, w.start);
    builder.replace(w.start, w.end, w.word.replace(/[0-9]/g, (d) => LEET[d] ?? d), true);
    cursor = w.end;
  }
  builder.keep(cursor, source.length);
  return builder.build(base);
}
