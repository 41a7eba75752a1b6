import type { Detector, DetectorFinding, DetectorInput } from '../../detector';
import { isAscii } from '../../normalize/unicode';
import { AMBIGUOUS_NAMES, NAME_PARTICLES, NON_NAME_WORDS, ORG_NAME_PAIRS, ORG_PLACE_WORDS } from './lexicons/name-words';
import { isFirst, isLast } from './name-lexicon';
import { ROMANCE_TYPES } from './address-patterns';
import { afterHouseNumber, afterStreetType, beforeHouseNumber, contextAfter, isContextWord, contextBefore, mayHaveStrongContext, stronger, type ContextLevel } from './name-context';
import { HAS_JAPANESE, japaneseNames } from './name-japanese';
import { lowercaseAfterStrongContext } from './name-lowercase';

/**
 * pii/name: personal names, from first/last-name lexicons (lexicons/*.ts: 13,630 given names and 12,721
 * surnames, hand-written and generated, loaded once into Sets; name-lexicon.ts), capitalisation and
 * context in seven languages (name-context.ts); Japanese names in name-japanese.ts.
 *
 * One linear pass tokenises the text: only words that start with an upper-case letter become tokens;
 * lower-case words are skipped whole (a name particle such as "van" may sit between two capitalised
 * tokens). Consecutive tokens separated by one space (or a middle initial "J.") form a run; each run is
 * scored once. Code is not prose: identifiers (camelCase/PascalCase such as `JohnsonController`,
 * snake_case, words glued to `.`, `(`, `<`, `_`, `$`, digits) break runs and never become names.
 *
 * Confidence (see scoreRun):
 *   first + last name both in the lexicons                       0.80  (0.75 if one is an everyday word)
 *   first name + unknown capitalised surname                      0.75  (0.60 if the first name is an
 *                                                                        everyday word or the surname ends
 *                                                                        like an English noun: -ing, -tion)
 *   unknown capitalised word + lexicon surname (or given name)    0.70  (0.60 at a sentence start)
 *   single lexicon name, no context                               0.40  (0.30 at a sentence start; not
 *                                                                        reported when it is an everyday
 *                                                                        word: "Will", "May", "Rose", "Mark")
 *   context before/after adds: title (Mr., Dr.) or strong ("my name is", "Dear", "patient", "name:",
 *   a signature after "Best regards,")  +0.15; medium ("Hi", "Thanks", "I'm", "contact", "my wife",
 *   "said", ", MD") +0.10; weak ("with", "by", "meet") +0.05. A single first name with a strong context
 *   is 0.85, with a medium one 0.80.
 * Runs that contain an organisation/place word ("University", "Street", "Inc"), known company names
 * shaped like people ("Morgan Stanley"), and runs of more than four names (title-case headings) are not
 * names. Lower-case names are only taken right after "my name is", "name:", "call me", "i am".
 */


const MAX_FINDINGS = 1000;
const MAX_RUN = 6;

interface Token {
  start: number;
  end: number;
  lower: string;
  caps: boolean;
  initial: boolean;
  particle: boolean;
}

const LETTER = /\p{L}/u;
/** ASCII characters that glue a word to code when right before / after it (1 = glue), indexed by char code. */
const IDENTIFIER_BEFORE = asciiTable('._$@#/\\<&=`-+*~^|');
const IDENTIFIER_AFTER = asciiTable('(_<[{$`=\\/');

function asciiTable(chars: string): Uint8Array {
  const table = new Uint8Array(128);
  for (const c of chars) table[c.charCodeAt(0)] = 1;
  return table;
}
const MC_PREFIX = /^(?:mc|mac|o'|o’|d'|d’|de|di|da|la|le|van|von|st|fitz)$/i;

export class PersonNameDetector implements Detector {
  readonly type = 'pii/name' as const;

  detect(input: DetectorInput, signal: AbortSignal): DetectorFinding[] {
    const { text } = input;
    const findings: DetectorFinding[] = [];
    // The current run of tokens. Most runs are one word (a sentence opener, a proper noun) and are settled
    // by settledAlone without any object, so a run's first token is held as plain values (`alone`) and
    // only becomes a Token when a second one joins it or the run needs scoring.
    let run: Token[] = [];
    let alone = false;
    let aloneStart = 0;
    let aloneInitial = false;
    let aloneInfo: WordInfo = EMPTY_INFO;
    let lastEnd = 0;
    let lastInitial = false;
    let runs = 0;
    const flush = () => {
      if (!alone && run.length === 0) return;
      if (++runs % 256 === 0) signal.throwIfAborted();
      if (findings.length < MAX_FINDINGS) {
        if (alone) {
          if (!settledAlone(text, aloneStart, aloneInitial, aloneInfo)) scoreRunInto(text, [makeToken(aloneStart, aloneInitial, aloneInfo)], findings);
        } else {
          scoreRunInto(text, run, findings);
        }
      }
      alone = false;
      if (run.length > 0) run = [];
    };
    // Most texts have no capital outside ASCII: the plain ASCII pattern is about twice as fast.
    const ascii = isAscii(text) || !NON_ASCII_CAPITAL_BLOCKS.test(text);
    const capital = ascii ? ASCII_CAPITAL : CAPITAL;
    capital.lastIndex = 0;
    // test(), not exec(): no match object to allocate. A match is the word's first character.
    for (let found = capital.test(text); found; found = capital.test(text)) {
      const start = capital.lastIndex - 1;
      const end = readWord(text, start);
      capital.lastIndex = end;
      if (text.charCodeAt(start) > 0x7f && !startsNonAsciiCapitalisedWord(text, start)) continue;
      const info = wordInfoAt(text, start, end, wordHash);
      if (!isToken(text, start, end, info)) {
        flush();
        continue;
      }
      const initial = info.length === 1 && text.charCodeAt(end) === 0x2e;
      const length = alone ? 1 : run.length;
      if (length > 0 && length < MAX_RUN && joins(text, lastEnd, lastInitial, start)) {
        if (alone) {
          run = [makeToken(aloneStart, aloneInitial, aloneInfo)];
          alone = false;
        }
        if (start - lastEnd > 1 && !lastInitial) pushParticles(text, lastEnd, start, run);
        run.push(makeToken(start, initial, info));
      } else {
        flush();
        alone = true;
        aloneStart = start;
        aloneInitial = initial;
        aloneInfo = info;
      }
      lastEnd = start + info.length;
      lastInitial = initial;
    }
    capital.lastIndex = 0;
    flush();
    if (findings.length < MAX_FINDINGS) lowercaseAfterStrongContext(text, findings);
    if (findings.length < MAX_FINDINGS && HAS_JAPANESE.test(text)) japaneseNames(text, findings, MAX_FINDINGS);
    return findings.slice(0, MAX_FINDINGS);
  }
}

/**
 * Where a capitalised word may start: an ASCII capital at a word boundary, or any letter of the Latin,
 * Greek or Cyrillic blocks beyond ASCII (checked in JS: upper case, not inside a word). Plain character
 * classes and `\b`, no Unicode-property look-behind: V8 runs this several times faster than
 * `(?<![\p{L}\p{N}_])\p{Lu}` over text full of code and markup. Linear: single-character alternatives.
 */
const CAPITAL = /\b[A-Z]|[\u00C0-\u024F\u0370-\u03FF\u0400-\u04FF]/g;
/** CAPITAL without the non-ASCII alternative, for texts with no letter of those blocks (the common case). */
const ASCII_CAPITAL = /\b[A-Z]/g;
const NON_ASCII_CAPITAL_BLOCKS = /[\u00C0-\u024F\u0370-\u03FF\u0400-\u04FF]/;
const UPPER = /\p{Lu}/u;

function startsNonAsciiCapitalisedWord(text: string, start: number): boolean {
  if (!UPPER.test(text.charAt(start))) return false;
  return start === 0 || !(LETTER.test(text.charAt(start - 1)) || /[\d_'’]/.test(text.charAt(start - 1)));
}

/** FNV-1a hash of the characters of the word readWord last read (no object per call). */
let wordHash = 0;

/**
 * End of the word that starts at `start` with its capital: letters, digits, `_`, and `'`/`’`/`-` between
 * letters. Sets wordHash to the hash of its characters (the key of the word table, see wordInfoAt).
 */
function readWord(text: string, start: number): number {
  let h = Math.imul(0x811c9dc5 ^ text.charCodeAt(start), 0x01000193);
  let j = start + 1;
  while (j < text.length) {
    const d = text.charCodeAt(j);
    if ((d >= 0x61 && d <= 0x7a) || (d >= 0x41 && d <= 0x5a) || (d >= 0x30 && d <= 0x39) || d === 0x5f) {
      // word character
    } else if ((d === 0x27 || d === 0x2019 || d === 0x2d) && j + 1 < text.length && LETTER.test(text.charAt(j + 1))) {
      // apostrophe or hyphen between letters
    } else if (d > 0x7f && LETTER.test(text.charAt(j))) {
      // non-ASCII letter
    } else {
      break;
    }
    h = Math.imul(h ^ d, 0x01000193);
    j++;
  }
  wordHash = h;
  return j;
}

/** What a capitalised word is, whatever its position: memoised, as the same words recur through a text. */
interface WordInfo {
  /** Not a name token at all: holds a digit or "_", or an inner capital that no name prefix explains. */
  reject: boolean;
  /** Length without a possessive "'s". */
  length: number;
  lower: string;
  caps: boolean;
  /**
   * Alone, this word is no name whatever the context: a non-name or organisation/place word, or no
   * lexicon name (then only a strong context could make it one; settledAlone checks that).
   */
  settled: boolean;
  lexical: boolean;
}

/**
 * The memo of wordInfo, keyed by the word's characters in the text: an open-addressing table of hashes
 * (readWord computes them while reading the word) whose hits are confirmed character by character, so a word
 * seen before costs no slice and no string hashing. Bounded: cleared when WORD_INFO_LIMIT words are in.
 */
const WORD_INFO_LIMIT = 20_000;
const TABLE_SIZE = 1 << 16; // > 3 × WORD_INFO_LIMIT: short probe sequences
const TABLE_MASK = TABLE_SIZE - 1;
const slots = new Int32Array(TABLE_SIZE); // entry index + 1; 0 = empty
const entryHashes = new Int32Array(WORD_INFO_LIMIT);
const entryWords: string[] = [];
const entryInfos: WordInfo[] = [];

function wordInfoAt(text: string, start: number, end: number, hash: number): WordInfo {
  const length = end - start;
  let slot = (hash ^ (hash >>> 16)) & TABLE_MASK;
  for (let e = slots[slot] as number; e !== 0; e = slots[slot] as number) {
    if (entryHashes[e - 1] === hash) {
      const word = entryWords[e - 1] as string;
      if (word.length === length && sameChars(text, start, word)) return entryInfos[e - 1] as WordInfo;
    }
    slot = (slot + 1) & TABLE_MASK;
  }
  if (entryWords.length >= WORD_INFO_LIMIT) {
    slots.fill(0);
    entryWords.length = 0;
    entryInfos.length = 0;
    slot = (hash ^ (hash >>> 16)) & TABLE_MASK;
  }
  const raw = text.slice(start, end);
  const info = wordInfo(raw);
  entryHashes[entryWords.length] = hash;
  entryWords.push(raw);
  entryInfos.push(info);
  slots[slot] = entryWords.length;
  return info;
}

/** text.startsWith(word, start) for a short word, without the builtin call (measured ~2× faster here). */
function sameChars(text: string, start: number, word: string): boolean {
  for (let k = 0; k < word.length; k++) if (text.charCodeAt(start + k) !== word.charCodeAt(k)) return false;
  return true;
}

function wordInfo(raw: string): WordInfo {
  let word = raw;
  if (/['’]s$/.test(word)) word = word.slice(0, -2);
  const caps = word.length > 1 && word === word.toUpperCase();
  const reject = /[\d_]/.test(raw) || (!caps && /\p{Ll}\p{Lu}/u.test(word) && !validInnerCapital(word));
  const lower = word.toLowerCase();
  const probe = { lower };
  const lexical = isFirst(probe) || isLast(probe);
  const settled = NON_NAME_WORDS.has(lower) || ORG_PLACE_WORDS.has(lower);
  return { reject, length: word.length, lower, caps, settled, lexical };
}

const EMPTY_INFO: WordInfo = wordInfo('');

/** False when a capitalised word is no name token: an identifier, a number-bearing word or code. */
function isToken(text: string, start: number, end: number, info: WordInfo): boolean {
  const before = start > 0 ? text.charCodeAt(start - 1) : 0;
  const after = end < text.length ? text.charCodeAt(end) : 0;
  if (before < 0x80 && IDENTIFIER_BEFORE[before] === 1 && !(before === 0x2d && (text[start - 2] ?? ' ') === ' ')) return false;
  if (after < 0x80 && IDENTIFIER_AFTER[after] === 1) return false;
  if (after === 0x2e && LETTER.test(text.charAt(end + 1))) return false;
  return !info.reject;
}

function makeToken(start: number, initial: boolean, info: WordInfo): Token {
  return { start, end: start + info.length, lower: info.lower, caps: info.caps, initial, particle: false };
}

/** "McDonald", "MacArthur", "O'Neil", "DeShawn", "LaToya", "VanDyke": one inner capital after a prefix. */
function validInnerCapital(word: string): boolean {
  const m = /^(\p{Lu}[\p{Ll}'’]*?)(\p{Lu}\p{Ll}+)$/u.exec(word);
  return m !== null && MC_PREFIX.test(m[1] as string);
}

/**
 * True when a token starting at `nextStart` continues the run whose last token ends at `prevEnd`: one
 * space between them, ". " after an initial, or lower-case name particles ("Ludwig van Beethoven"),
 * which pushParticles appends to the run.
 */
function joins(text: string, prevEnd: number, prevInitial: boolean, nextStart: number): boolean {
  const gapLength = nextStart - prevEnd;
  if (gapLength === 1 && text.charCodeAt(prevEnd) === 0x20) return !prevInitial;
  if (prevInitial) return gapLength <= 2 && text.startsWith(gapLength === 1 ? '.' : '. ', prevEnd);
  if (gapLength < 3 || gapLength > 12) return false;
  if (text.charCodeAt(prevEnd) !== 0x20 || text.charCodeAt(nextStart - 1) !== 0x20) return false;
  return text
    .slice(prevEnd + 1, nextStart - 1)
    .split(' ')
    .every((p) => NAME_PARTICLES.has(p));
}

function pushParticles(text: string, prevEnd: number, nextStart: number, run: Token[]): void {
  let at = prevEnd + 1;
  for (const p of text.slice(prevEnd + 1, nextStart - 1).split(' ')) {
    run.push({ start: at, end: at + p.length, lower: p, caps: false, initial: false, particle: true });
    at += p.length + 1;
  }
}

const isAmbiguous = (t: Token) => AMBIGUOUS_NAMES.has(t.lower) || t.lower.length <= 2;
const isNonName = (t: Token) => NON_NAME_WORDS.has(t.lower);

/** True when the token at `start` opens a sentence, a line or a list item. */
function sentenceStart(text: string, start: number): boolean {
  let i = start - 1;
  while (i >= 0 && (text[i] === ' ' || text[i] === '\t' || text[i] === '"' || text[i] === '(' || text[i] === '“')) i--;
  if (i < 0) return true;
  const ch = text[i] as string;
  return '.!?\n\r:;*•>#|'.includes(ch) || (ch === '-' && (i === 0 || text[i - 1] === '\n'));
}

/**
 * True when a run of one capitalised word is settled as "not a name" without scoreRunInto's work: the
 * common case in prose (sentence-initial words, proper nouns). Mirrors scoreRunInto's early exits: a
 * non-name or organisation word, or no lexicon name and no possible strong context before it.
 */
function settledAlone(text: string, start: number, initial: boolean, info: WordInfo): boolean {
  if (info.settled) return true;
  return (initial || !info.lexical) && !mayHaveStrongContext(text, start);
}

/** Generational and degree suffixes after a name ("Beahan DDS", "Flatley I"): context, not name tokens. */
const NAME_SUFFIXES = new Set(['jr', 'sr', 'i', 'ii', 'iii', 'iv', 'v', 'md', 'dds', 'phd', 'dvm', 'esq', 'rn', 'cpa', 'mba']);

function scoreRunInto(text: string, run: Token[], out: DetectorFinding[]): void {
  while (run.length > 1 && NAME_SUFFIXES.has((run[run.length - 1] as Token).lower)) run.pop();
  while (run.length > 0 && (run[run.length - 1] as Token).particle) run.pop();
  if (run.some((t) => ORG_PLACE_WORDS.has(t.lower))) return;
  // Leading words that are not names ("Dear", "The", "When") are context, not part of the name.
  let from = 0;
  while (from < run.length && isNonName(run[from] as Token)) from++;
  let to = from;
  while (to < run.length && !isNonName(run[to] as Token)) to++;
  let name = run.slice(from, to);
  if (name.length === 0 || name.filter((t) => !t.initial && !t.particle).length > 4) return;
  // Without a lexicon name, only a strong context could make this a name (see below). Checked first,
  // as it settles most capitalised words of prose and code: the first name token is name[0], or name[1]
  // when a sentence-initial non-name opener is dropped (which leaves `lexical` unchanged).
  const lexical = name.some((t) => !t.initial && !t.particle && (isFirst(t) || isLast(t)));
  if (
    !lexical &&
    !mayHaveStrongContext(text, (name[0] as Token).start) &&
    !(name.length >= 2 && mayHaveStrongContext(text, (name[1] as Token).start))
  ) {
    return;
  }
  let atStart = from === 0 && sentenceStart(text, (name[0] as Token).start);
  // "Invite Rachel Green": a capitalised sentence-initial word that is no name is not part of the name.
  const opener = name[0] as Token;
  if (atStart && name.length >= 2 && !isFirst(opener) && !isLast(opener) && weakBefore(text, opener.start)) {
    name = name.slice(1);
    atStart = false;
  }
  // "Kontoinhaber Eda Kunz", "Kollegin Anna Weber": a capitalised noun (German) or any unknown word
  // before a given name opens the run; it is context, not part of the name.
  const opensWithNoun = !isFirst(name[0] as Token) && !isLast(name[0] as Token);
  if (name.length >= 2 && opensWithNoun && (isContextWord((name[0] as Token).lower) || (name.length >= 3 && isFirst(name[1] as Token)))) {
    name = name.slice(1);
    atStart = false;
  }
  if (orgWordFollows(text, (run[run.length - 1] as Token).end)) return;
  // "872 Jaden Circles", "2597 Carrie Land": after a house number the words name a street; so do they
  // after a street type ("Passage Pierre Charron", "Calleja Agustín Sisneros", "Via Giuseppe Verdi").
  const head = name[0] as Token;
  if (afterHouseNumber(text, head.start) || afterStreetType(text, head.start) || ROMANCE_TYPES.has(text.slice(head.start, head.end))) return;
  if (beforeHouseNumber(text, (name[name.length - 1] as Token).end)) return;
  const first = name[0] as Token;
  const last = name[name.length - 1] as Token;
  // Without a lexicon name, only a strong context could make this a name: skip the context work when
  // the word right before cannot open one (the common case for capitalised words in prose and markup).
  if (!lexical && !mayHaveStrongContext(text, first.start)) return;
  const context = stronger(contextBefore(text, first.start), contextAfter(text, last.end));
  const confidence = scoreRun(name, context, atStart);
  if (confidence > 0) out.push({ confidence, start: first.start, end: last.end });
}

function weakBefore(text: string, start: number): boolean {
  const level = contextBefore(text, start);
  return level === 'none' || level === 'weak';
}

const AFTER_RUN = /^(?:,?[ \t]+(?:Jr|Sr)\.?)?\.?[ \t]+(\p{Lu}\p{L}{1,30})/u;

/** "Martin Luther King Jr. Day", "Lincoln Memorial": an organisation/place/event word right after the run. */
function orgWordFollows(text: string, end: number): boolean {
  const m = AFTER_RUN.exec(text.slice(end, end + 48));
  return m !== null && ORG_PLACE_WORDS.has((m[1] as string).toLowerCase());
}

const BONUS: Readonly<Record<ContextLevel, number>> = { title: 0.15, naming: 0.15, strong: 0.15, medium: 0.1, weak: 0.05, none: 0 };
const RANK_STRONG: ReadonlySet<ContextLevel> = new Set(['title', 'naming', 'strong']);

/** Confidence for the name tokens of a run (0 = not a name); see the class comment for the scale. */
export function scoreRun(tokens: Token[], context: ContextLevel, atStart: boolean): number {
  const core = tokens.filter((t) => !t.initial && !t.particle);
  if (core.length === 0) return 0;
  const allCaps = core.every((t) => t.caps);
  if (core.length === 1) return scoreSingle(core[0] as Token, context, atStart);
  const first = core[0] as Token;
  const last = core[core.length - 1] as Token;
  if (ORG_NAME_PAIRS.has(`${first.lower}_${last.lower}`)) return 0;
  const shaped = (t: Token) => !isAmbiguous(t) && !t.caps && t.lower.length >= 2;
  let base: number;
  if (isFirst(first) && isLast(last)) base = 0.8;
  else if ((isFirst(first) || isLast(first)) && (isLast(last) || isFirst(last))) base = 0.7;
  // A given name of the (multilingual) lexicon and a capitalised surname the lexicons do not know
  // ("Hector Pagac", "Giuliana Schieskow"): most surnames of the world are in no list.
  else if (isFirst(first) && shaped(last)) base = !isAmbiguous(first) && !NOUN_ENDING_NOT_SURNAME.test(last.lower) ? 0.75 : 0.6;
  // An unknown capitalised word and a surname of the lexicon ("Jacynthe Barton"): a given name no list
  // holds, unless it opens the sentence ("Visit Parker's …").
  // (A given name of the lexicon in surname position counts too: "Kiley Nikolaus", "Anne Thomas".)
  else if (shaped(first) && (isLast(last) || isFirst(last))) base = !atStart && !isAmbiguous(last) ? 0.7 : 0.6;
  // Two unknown capitalised words right after a title or a naming phrase ("Dr. Sage Weber").
  else if (context === 'title' || context === 'naming') base = shaped(first) && shaped(last) ? 0.65 : 0;
  else if (RANK_STRONG.has(context)) base = shaped(first) && shaped(last) ? 0.55 : 0;
  else base = 0;
  if (base === 0) return 0;
  const ambFirst = isAmbiguous(first);
  const ambLast = isAmbiguous(last);
  if (ambFirst && ambLast) base -= 0.2;
  else if (ambFirst && atStart) base -= 0.15;
  else if (ambFirst || ambLast) base -= 0.05;
  if (core.length >= 3 || tokens.some((t) => t.initial)) base += 0.05;
  if (allCaps) base -= 0.1;
  return round(Math.min(0.97, base + BONUS[context]));
}

/** Endings of English nouns and code type names ("Formatter", "Parser", "Configuration"); unknown names only. */
/** NOUN_ENDING without -er / -or: surnames end so too (Müller, Schneider, Brandstätter, Taylor). */
const NOUN_ENDING_NOT_SURNAME = /.{3}(?:ing|tion|sion|ment|ness|able|ible|ize|ise|ity|ism|ware)$/;
const NOUN_ENDING = /.{3}(?:er|or|ing|tion|sion|ment|ness|able|ible|ize|ise|ity|ism|ist|ware|ers|ors)$/;

function scoreSingle(t: Token, context: ContextLevel, atStart: boolean): number {
  const amb = isAmbiguous(t);
  const kind = isFirst(t) ? 'first' : isLast(t) ? 'last' : 'unknown';
  if (kind === 'unknown' && NOUN_ENDING.test(t.lower)) return 0;
  if (t.caps && !RANK_STRONG.has(context)) return 0;
  switch (context) {
    case 'title':
    case 'naming':
      if (kind === 'unknown') return amb || t.caps ? 0 : 0.75;
      return amb ? 0.8 : 0.85;
    case 'strong':
      if (kind === 'unknown') return amb || t.caps ? 0 : 0.7;
      return kind === 'first' ? (amb ? 0.8 : 0.85) : 0.8;
    case 'medium':
      if (kind === 'unknown') return 0;
      if (kind === 'first') return amb ? 0.5 : 0.8;
      return amb ? 0 : 0.6;
    default:
      if (kind === 'unknown' || amb) return 0;
      if (kind === 'first') return atStart ? 0.3 : 0.4;
      return atStart ? 0.3 : 0.35;
  }
}

const round = (x: number) => Math.round(x * 100) / 100;
