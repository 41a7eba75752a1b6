import type { MatchList } from '../shared/policy';
import { buildViews, normalizeLiteral } from './normalize';

/**
 * The adaptive release point of a streamed text (DetectStream with STREAM_RELEASE_ADAPTIVE, see
 * stream-scanner.ts): how much of what has arrived a scan may release. It is computed from the tail of
 * the text alone, before the scan; the scanner then also holds back any match the scan found that is not
 * settled yet. Everything is released except, from the earliest of:
 *
 *  1. the token still arriving: the run of non-space characters at the end (a token is complete once
 *     white space follows it), up to the window W: a key, an e-mail address, a URL arrive whole first;
 *  2. a number written in groups: the first token with a digit that starts within the last H
 *     characters, extended back over the tokens directly before it that are digit groups, separators
 *     (`+`, `(`, `-`), capitalized words (an IBAN's country code, a street name before its house
 *     number, `Tel.`) or labels (`card:`): a card, IBAN, phone number, SSN, a street address that begins
 *     with its house number; held until H characters follow its start;
 *  3. the trailing run of capitalized words, labels (a token ending in `:` or `=`: `password:`,
 *     `api_key=`), separators and numbers: a name ("John Smith"), a street or city, a label whose
 *     value has not arrived yet; released once a lower-case word follows it;
 *  4. the last words, when they are the first words of a multi-word deny-list or allow-list entry
 *     (`contains` and `exact` lists; compared in lower case, word by word, in the detection views of
 *     the last H characters: normalized, canonical — marks on every letter, letters with separators,
 *     leetspeak undone, look-alikes folded — and ROT13, as the deny list itself is matched), with
 *     the capitalized words, labels and separators directly before them ("Please ignore all …").
 *
 * Each candidate starts within the last H characters (a token still arriving: within W), so the
 * release point never trails what arrived by more than H, or W inside a long token: never later than the
 * fixed hold-back. The work is linear in the last H characters plus the token still arriving.
 *
 * Knowingly released before a multi-word match completes (it is still reported when it completes,
 * and blocks everything after it): a lower-case first word of a name ("john" before "smith"; the
 * lower-case and context name rules), a street name not capitalized, words of a deny/allow entry
 * written differently from the entry (other punctuation, an obfuscation the word-level views above do
 * not undo), the first tokens of a `regex` list entry or a custom detector's pattern that spans
 * several words, and the words before a label that is not capitalized and does not end in `:` / `=`
 * ("my password is hunter2": the scan that sees "hunter2" arrive whole is the one that finds it,
 * before it is released). Window-level scores (classifiers) are the scanner's business: text a
 * blocking classifier scores at 0.8 of its cut-off or more is held as by the fixed rule; the start of an
 * attack that scores lower until its end arrives may be released (stream-scanner.ts).
 */

/** A token with a letter or digit of its own. */
const WORDISH = /[\p{L}\p{N}]/u;
const DIGIT = /\p{Nd}/u;
/** First letter or digit is an upper-case or title-case letter. */
const CAPITALIZED = /^[^\p{L}\p{N}]*[\p{Lu}\p{Lt}]/u;
/** A key before its value: `password:`, `api_key=`, `"token":`. */
const LABEL = /[:=]["'`]?$/;
/** Prefixes of list entries are kept up to this many words. */
const MAX_PREFIX_WORDS = 16;

const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x2028 || c === 0x2029 || c === 0x3000 || c === 0xfeff || (c >= 0x2000 && c <= 0x200a) || c === 0x1680 || c === 0x202f || c === 0x205f;

/** The first words (1 .. n-1, lower case, joined by one space) of multi-word list entries. */
export interface ListPrefixes {
  readonly phrases: ReadonlySet<string>;
  /** The most words of any prefix. */
  readonly maxWords: number;
}

const prefixCache = new WeakMap<MatchList, { phrases: Set<string>; maxWords: number }>();

function prefixesOf(list: MatchList, maxChars: number): { phrases: Set<string>; maxWords: number } {
  const phrases = new Set<string>();
  let maxWords = 0;
  if (list.match_type !== 'regex') {
    for (const entry of list.entries) {
      const { normalized, folded } = normalizeLiteral(entry);
      for (const form of new Set([entry, normalized, folded])) {
        const words = form.toLowerCase().split(/\s+/u).filter((w) => w.length > 0);
        let phrase = '';
        for (let i = 0; i < Math.min(words.length - 1, MAX_PREFIX_WORDS); i += 1) {
          phrase = i === 0 ? words[0]! : `${phrase} ${words[i]!}`;
          if (phrase.length > maxChars) break;
          phrases.add(phrase);
          maxWords = Math.max(maxWords, i + 1);
        }
      }
    }
  }
  return { phrases, maxWords };
}

/**
 * The prefixes of the deny and allow lists (undefined when no entry has two words). Memoised per list
 * object: a configuration served from the detection config cache is the same object for every stream.
 */
export function listPrefixes(lists: readonly MatchList[], maxChars = 1024): ListPrefixes | undefined {
  const phrases = new Set<string>();
  let maxWords = 0;
  for (const list of lists) {
    let p = prefixCache.get(list);
    if (!p) {
      p = prefixesOf(list, maxChars);
      prefixCache.set(list, p);
    }
    for (const phrase of p.phrases) phrases.add(phrase);
    maxWords = Math.max(maxWords, p.maxWords);
  }
  return maxWords === 0 ? undefined : { phrases, maxWords };
}

interface Token {
  start: number;
  text: string;
}

/**
 * The release point in `text` (an offset into it): see the file comment. `text` holds at least the last
 * `window` characters of the stream; `holdBack` (H) is at most the window.
 */
export function adaptiveReleasePoint(text: string, window: number, holdBack: number, prefixes?: ListPrefixes): number {
  const end = text.length;
  const floor = Math.max(0, end - window);
  const hFloor = Math.max(0, end - holdBack);
  // 1. The token still arriving.
  let at = end;
  while (at > floor && !isSpace(text.charCodeAt(at - 1))) at -= 1;
  if (at <= hFloor) return at; // a token reaching back past H: nothing after its start is complete
  // The complete tokens that start within the last H characters, in order.
  const tokens: Token[] = [];
  let i = at;
  for (;;) {
    while (i > hFloor && isSpace(text.charCodeAt(i - 1))) i -= 1;
    const tokenEnd = i;
    while (i > hFloor && !isSpace(text.charCodeAt(i - 1))) i -= 1;
    if (i === tokenEnd) break;
    if (i === hFloor && i > 0 && !isSpace(text.charCodeAt(i - 1))) break; // cut by the H edge: not within H
    tokens.push({ start: i, text: text.slice(i, tokenEnd) });
  }
  tokens.reverse();
  let hold = at;
  // 2. A number written in groups, with what directly precedes it.
  const firstDigit = tokens.findIndex((t) => DIGIT.test(t.text));
  if (firstDigit >= 0) {
    let k = firstDigit;
    while (k > 0 && sticky(tokens[k - 1]!.text)) k -= 1;
    hold = Math.min(hold, tokens[k]!.start);
  }
  // 3. The trailing run of capitalized words, labels, separators and numbers.
  let k = tokens.length;
  while (k > 0 && sticky(tokens[k - 1]!.text)) k -= 1;
  if (k < tokens.length) hold = Math.min(hold, tokens[k]!.start);
  // 4. The first words of a multi-word list entry, in each view of the complete tokens within H.
  if (prefixes && tokens.length > 0) {
    const from = tokens[0]!.start;
    let listed = Infinity;
    for (const view of buildViews(text.slice(from, at), { decodeSegments: false })) {
      const start = listPrefixStart(view.text, prefixes);
      if (start !== undefined) listed = Math.min(listed, from + view.toOriginal(start, start).start);
    }
    if (listed < hold) {
      // With the capitalized words, labels and separators directly before it.
      let k = tokens.findIndex((t) => t.start + t.text.length > listed);
      if (k < 0) k = tokens.length - 1;
      while (k > 0 && sticky(tokens[k - 1]!.text)) k -= 1;
      hold = Math.min(listed, tokens[k]!.start);
    }
  }
  return hold;
}

/** Where the last words of `text` that are the first words of a list entry begin (the most words), if they are. */
function listPrefixStart(text: string, prefixes: ListPrefixes): number | undefined {
  const words: Token[] = [];
  let i = text.length;
  while (words.length < prefixes.maxWords) {
    while (i > 0 && isSpace(text.charCodeAt(i - 1))) i -= 1;
    const end = i;
    while (i > 0 && !isSpace(text.charCodeAt(i - 1))) i -= 1;
    if (i === end) break;
    words.push({ start: i, text: text.slice(i, end).toLowerCase() });
  }
  let phrase = '';
  let found: number | undefined;
  for (const [j, w] of words.entries()) {
    phrase = j === 0 ? w.text : `${w.text} ${phrase}`;
    if (prefixes.phrases.has(phrase)) found = w.start;
  }
  return found;
}

/** Part of a candidate that may continue: a capitalized word, a label, a separator or a token with a digit. */
function sticky(token: string): boolean {
  return !WORDISH.test(token) || DIGIT.test(token) || CAPITALIZED.test(token) || LABEL.test(token);
}
