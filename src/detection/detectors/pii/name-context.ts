import { FR_TYPES, FR_TYPES_WITH_PARTICLE, ROMANCE_TYPES } from './address-patterns';
import { isAsciiLetter } from './signals';

/**
 * Context around a candidate personal name, for pii/name: what the text right before and after a run
 * of capitalised words says about it. Every check runs on a bounded window (CONTEXT_WINDOW characters)
 * with string comparisons or literal-alternation regexes, so the work per candidate is constant.
 */

/** `naming` phrases introduce a name outright ("my name is", "call me", "name:"); `strong` ones make one very likely. */
export type ContextLevel = 'title' | 'naming' | 'strong' | 'medium' | 'weak' | 'none';

const CONTEXT_WINDOW = 48;

const RANK: Readonly<Record<ContextLevel, number>> = { none: 0, weak: 1, medium: 2, strong: 3, naming: 4, title: 5 };

export function stronger(a: ContextLevel, b: ContextLevel): ContextLevel {
  return RANK[a] >= RANK[b] ? a : b;
}

const TITLES = new Set([
  'mr', 'mrs', 'ms', 'miss', 'mx', 'dr', 'prof', 'professor', 'sir', 'madam', 'dame', 'lady', 'lord',
  'rev', 'reverend', 'capt', 'captain', 'sgt', 'sergeant', 'officer', 'judge', 'senator', 'herr', 'frau',
  'señor', 'señora', 'senor', 'senora', 'monsieur', 'madame', 'mme', 'mlle', 'detective', 'nurse', 'coach',
  // de, fr, es, it, nl, pt
  'herrn', 'dr', 'm', 'sr', 'sra', 'srta', 'don', 'doña', 'dona', 'sig', 'signor', 'signora', 'signorina',
  'dott', 'dottore', 'dottoressa', 'ing', 'avv', 'geom', 'dhr', 'mevr', 'mevrouw', 'meneer', 'heer', 'mw',
  'sra', 'senhor', 'senhora', 'prof', 'profa',
]);

/** Phrases (lower case, compared against the end of the preceding text) and their strength. */
const BEFORE: ReadonlyArray<readonly [string, ContextLevel]> = [
  ['my name is', 'naming'], ["my name's", 'naming'], ['name is', 'naming'], ['name:', 'naming'],
  ['name -', 'naming'], ['name =', 'naming'], ['named', 'strong'], ['dear', 'strong'], ['patient', 'strong'],
  ['patient:', 'strong'], ['employee', 'strong'], ['employee:', 'strong'], ['signed', 'naming'],
  ['signed:', 'naming'], ['surname', 'naming'], ['surname:', 'naming'], ['attn', 'strong'], ['attn:', 'strong'],
  ['attention:', 'strong'], ['contact person', 'strong'], ['emergency contact', 'strong'],
  ['next of kin', 'strong'], ['applicant', 'strong'], ['applicant:', 'strong'], ['candidate:', 'strong'],
  ['tenant:', 'strong'], ['beneficiary:', 'strong'], ['call me', 'naming'], ['legal name', 'naming'],
  ['full name', 'naming'], ['insured:', 'strong'], ['cardholder', 'strong'], ['cardholder:', 'strong'],
  ['account holder', 'naming'], ['account holder:', 'naming'], ['policyholder', 'strong'],
  ['hi', 'medium'], ['hello', 'medium'], ['hey', 'medium'], ['thanks', 'medium'], ['thank you', 'medium'],
  ["i'm", 'medium'], ['i am', 'medium'], ['this is', 'medium'], ['contact', 'medium'], ['contact:', 'medium'],
  ['customer', 'medium'], ['customer:', 'medium'], ['client', 'medium'], ['client:', 'medium'],
  ['user:', 'medium'], ['from:', 'medium'], ['to:', 'medium'], ['cc:', 'medium'], ['author:', 'medium'],
  ['by:', 'medium'], ['sender:', 'medium'], ['recipient:', 'medium'], ['member:', 'medium'],
  ['my wife', 'medium'], ['my husband', 'medium'], ['my son', 'medium'], ['my daughter', 'medium'],
  ['my mother', 'medium'], ['my father', 'medium'], ['my mom', 'medium'], ['my dad', 'medium'],
  ['my brother', 'medium'], ['my sister', 'medium'], ['my friend', 'medium'], ['my colleague', 'medium'],
  ['my manager', 'medium'], ['my boss', 'medium'], ['my coworker', 'medium'], ['my partner', 'medium'],
  ['my doctor', 'medium'], ['my neighbor', 'medium'], ['my neighbour', 'medium'], ['my cousin', 'medium'],
  ['my uncle', 'medium'], ['my aunt', 'medium'], ['my grandmother', 'medium'], ['my grandfather', 'medium'],
  ['my girlfriend', 'medium'], ['my boyfriend', 'medium'], ['my fiancé', 'medium'], ['my fiance', 'medium'],
  ['colleague', 'medium'], ['coworker', 'medium'], ['ceo', 'medium'], ['cto', 'medium'], ['cfo', 'medium'],
  ['actor', 'medium'], ['actress', 'medium'], ['singer', 'medium'], ['author', 'medium'], ['writer', 'medium'],
  ['president', 'medium'],
  // de
  ['mein name ist', 'naming'], ['ich heiße', 'naming'], ['ich heisse', 'naming'], ['sehr geehrte', 'strong'],
  ['sehr geehrter', 'strong'], ['liebe', 'strong'], ['lieber', 'strong'], ['kontoinhaber', 'naming'],
  ['kontoinhaberin', 'naming'], ['kontoinhaber:', 'naming'], ['hier ist', 'medium'], ['ich bin', 'medium'],
  ['hallo', 'medium'], ['kollege', 'medium'], ['kollegin', 'medium'], ['an', 'weak'], ['für', 'weak'], ['mit', 'weak'], ['von', 'weak'],
  // fr
  ["je m'appelle", 'naming'], ['je m’appelle', 'naming'], ['au nom de', 'naming'], ['cher', 'strong'],
  ['chère', 'strong'], ['je suis', 'medium'], ['bonjour', 'medium'], ['chez', 'medium'], ['à', 'weak'], ['pour', 'weak'], ['avec', 'weak'],
  // es
  ['me llamo', 'naming'], ['mi nombre es', 'naming'], ['a nombre de', 'naming'], ['estimado', 'strong'],
  ['estimada', 'strong'], ['titular', 'naming'], ['soy', 'medium'], ['hola', 'medium'], ['para', 'weak'], ['con', 'weak'],
  // it
  ['mi chiamo', 'naming'], ['intestato a', 'naming'], ['intestata a', 'naming'], ['gentile', 'strong'],
  ['caro', 'strong'], ['cara', 'strong'], ['sono', 'medium'], ['buongiorno', 'medium'], ['ciao', 'medium'], ['per', 'weak'],
  // nl
  ['mijn naam is', 'naming'], ['ik heet', 'naming'], ['ten name van', 'naming'], ['geachte', 'strong'],
  ['beste', 'medium'], ['ik ben', 'medium'], ['met', 'medium'], ['voor', 'weak'], ['aan', 'weak'], ['naar', 'weak'],
  // pt
  ['meu nome é', 'naming'], ['sou', 'medium'], ['olá', 'medium'],
  ['with', 'weak'], ['by', 'weak'], ['ask', 'weak'], ['tell', 'weak'],
  ['meet', 'weak'], ['and', 'weak'], ['from', 'weak'], ['to', 'weak'], ['for', 'weak'], ['cc', 'weak'],
];

const SALUTATION_LINE =
  /^(?:best|regards|best regards|kind regards|warm regards|warmest regards|many thanks|thanks|thanks again|thank you|cheers|sincerely|yours|yours truly|yours sincerely|sincerely yours|respectfully|cordially|love|all the best|take care|talk soon|warmly|best wishes|with thanks|ciao|saludos|cordialement|mit freundlichen grüßen|viele grüße|-+|—|–)[,.!]*$/;
const SALUTATION_INLINE =
  /(?:^|[\s(])(?:best|regards|best regards|kind regards|warm regards|many thanks|thanks|thank you|cheers|sincerely|yours|love|best wishes|cordially|respectfully),[ \t]*$/;

/** BEFORE, indexed by the phrase's last word, so each candidate checks only the phrases that can match. */
const BY_LAST_WORD = new Map<string, Array<readonly [string, ContextLevel]>>();
for (const entry of BEFORE) {
  const last = entry[0].slice(entry[0].lastIndexOf(' ') + 1);
  const list = BY_LAST_WORD.get(last) ?? [];
  list.push(entry);
  BY_LAST_WORD.set(last, list);
}

/** The strongest context the text before `start` gives a name that starts there. */
export function contextBefore(text: string, start: number): ContextLevel {
  if (afterSentenceEnd(text, start)) return 'none';
  const from = Math.max(0, start - CONTEXT_WINDOW);
  const window = text.slice(from, start);
  const lineBreak = window.lastIndexOf('\n');
  const sameLine = lineBreak >= 0 ? window.slice(lineBreak + 1) : window;
  if (lineBreak >= 0 && /^[\s\-–—*>]*$/.test(sameLine) && isSignatureLine(text, from + lineBreak)) return 'strong';
  const trimmed = sameLine.replace(/[\s,]+$/, '').toLowerCase();
  if (trimmed.length === 0) return 'none';
  if (sameLine.trimEnd().endsWith(',') && SALUTATION_INLINE.test(trimmed + ',')) return 'strong';
  const space = trimmed.lastIndexOf(' ');
  const lastWord = trimmed.slice(space + 1);
  const bareWord = lastWord.replace(/\.$/, '');
  if (TITLES.has(bareWord) && /^[(\s"'“]*[a-zñé]+\.?$/.test(lastWord)) return 'title';
  let best: ContextLevel = 'none';
  for (const [phrase, level] of BY_LAST_WORD.get(lastWord) ?? []) {
    if (RANK[level] <= RANK[best] || !trimmed.endsWith(phrase)) continue;
    const prev = trimmed.charAt(trimmed.length - phrase.length - 1);
    if (prev === '' || !/[a-z0-9]/.test(prev)) best = level;
  }
  return best;
}

/**
 * True when the name follows the end of a sentence on the same line (". ", "! ", "? ", commas and blanks
 * between) and the word before a "." is no title: no phrase of BEFORE ends there, so contextBefore is
 * 'none' without its string work. The common case for capitalised words in prose.
 */
function afterSentenceEnd(text: string, start: number): boolean {
  let i = start;
  while (i > 0 && start - i < 8) {
    const c = text.charCodeAt(i - 1);
    if (c === 0x20 || c === 0x09 || c === 0x2c) i--;
    else break;
  }
  if (i === start || i === 0) return false;
  const end = text.charCodeAt(i - 1);
  if (end === 0x21 || end === 0x3f) return true; // ! ?
  if (end !== 0x2e) return false;
  let w = i - 1;
  while (w > 0 && i - 1 - w < 12 && (isAsciiLetter(text.charCodeAt(w - 1)) || text.charCodeAt(w - 1) > 0x7f)) w--;
  return !TITLE_WORDS.hasLower(text, w, i - 1);
}

/** Last words of every title, naming and strong phrase ("is", "name:", "dear", "mr.", …). */
const STRONG_LAST_WORDS = new Set([
  ...[...TITLES].flatMap((t) => [t, `${t}.`]),
  ...BEFORE.filter(([, level]) => RANK[level] >= RANK.strong).map(([phrase]) => phrase.slice(phrase.lastIndexOf(' ') + 1)),
]);

/** Returned by lowerHash for a range with a character beyond ASCII: never an int32 hash. */
const NOT_ASCII = 2 ** 32;

/** FNV-1a hash of text[from, to) lower-cased, for ASCII ranges; NOT_ASCII otherwise. */
function lowerHash(text: string, from: number, to: number): number {
  let h = 0x811c9dc5 | 0;
  for (let i = from; i < to; i++) {
    let c = text.charCodeAt(i);
    if (c > 0x7f) return NOT_ASCII;
    if (c >= 0x41 && c <= 0x5a) c |= 0x20;
    h = Math.imul(h ^ c, 0x01000193);
  }
  return h;
}

/**
 * A set of lower-case words asked whether it holds a range of a text, lower-cased. The usual answer is
 * no, and the hashes of the words give it without slicing and lower-casing the range (a hit, or a range
 * beyond ASCII, is confirmed on the string itself).
 */
class LowerWordSet {
  private readonly hashes = new Set<number>();

  constructor(private readonly words: ReadonlySet<string>) {
    for (const w of words) this.hashes.add(lowerHash(w, 0, w.length));
  }

  hasLower(text: string, from: number, to: number): boolean {
    const h = lowerHash(text, from, to);
    return (h === NOT_ASCII || this.hashes.has(h)) && this.words.has(text.slice(from, to).toLowerCase());
  }
}

const TITLE_WORDS = new LowerWordSet(TITLES);
const STRONG_LAST_WORD_SET = new LowerWordSet(STRONG_LAST_WORDS);

/**
 * A cheap necessary condition for a title, naming or strong context before `start`: the word right
 * before (commas and spaces skipped) is the last word of such a phrase, or a line break is near
 * (signatures). contextBefore gives the real answer.
 */
export function mayHaveStrongContext(text: string, start: number): boolean {
  if (afterSentenceEnd(text, start)) return false;
  let i = start;
  while (i > 0 && start - i < 8 && ' ,\t-–—*>'.includes(text.charAt(i - 1))) i--;
  if (i === 0 || text[i - 1] === '\n' || text[i - 1] === '\r') return true;
  const end = i;
  while (i > 0 && end - i < 16 && !isSpace(text.charCodeAt(i - 1))) i--;
  return STRONG_LAST_WORD_SET.hasLower(text, i, end);
}

/** `\s` of a UTF-16 code unit, without a regular expression for ASCII. */
function isSpace(code: number): boolean {
  if (code < 0x80) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  return /\s/.test(String.fromCharCode(code));
}

/** True when the non-empty line before offset `lineBreakAt` is a closing salutation ("Best regards,"). */
function isSignatureLine(text: string, lineBreakAt: number): boolean {
  let end = lineBreakAt;
  while (end > 0 && (text[end - 1] === '\n' || text[end - 1] === '\r' || text[end - 1] === ' ')) end--;
  const from = Math.max(0, end - 40);
  const line = text.slice(from, end);
  const start = line.lastIndexOf('\n');
  return SALUTATION_LINE.test(line.slice(start + 1).trim().toLowerCase());
}

const AFTER_MEDIUM = /^(?:,?[ \t]+(?:jr|sr|ii|iii|iv|md|phd|esq|dds|rn|cpa|mba)\b|,[ \t]+(?:jr|sr|md|phd|esq|dds|rn|cpa)\b|[ \t]+(?:said|says|wrote|writes|told|asked|replied|explained|argued|noted|added|is my|was born|\((?:he|she|they)\/))/i;

/** Context after the name: suffixes ("Jr.", ", MD") and reporting verbs ("said", "wrote"). */
export function contextAfter(text: string, end: number): ContextLevel {
  return AFTER_MEDIUM.test(text.slice(end, end + 24)) ? 'medium' : 'none';
}

/** True when the word before `start` is a street type ("Passage Pierre Charron", "Calleja Agustín Sisneros"). */
export function afterStreetType(text: string, start: number): boolean {
  const m = /(\p{L}+\.?)[ \t]+$/u.exec(text.slice(Math.max(0, start - 24), start));
  if (!m) return false;
  const word = m[1] as string;
  const lower = word.toLowerCase();
  return ROMANCE_TYPES.has(word) || FR_TYPES.has(lower) || FR_TYPES_WITH_PARTICLE.has(lower);
}

/** True when a house number ("872 ", "221B ") stands right before `start`: the words name a street. */
export function afterHouseNumber(text: string, start: number): boolean {
  let i = start - 1;
  if (text.charCodeAt(i) !== 0x20) return false;
  i--;
  if (/[A-Za-z]/.test(text.charAt(i)) && /[0-9]/.test(text.charAt(i - 1))) i--; // 221B
  return /[0-9]/.test(text.charAt(i));
}

/** True when a house number and a comma follow the name ("Pescher Busch 23b, 00659 …"): a street name. */
export function beforeHouseNumber(text: string, end: number): boolean {
  return /^ [0-9]{1,4}[a-z]?(?: I{1,3})?,/.test(text.slice(end, end + 12));
}

/**
 * A capitalised word that is itself a context phrase (German nouns: "Kontoinhaber", "Kollegin"; "Tenant",
 * "Customer" in title case) opens a run of capitalised words before the name: it is context, not a name.
 */
export function isContextWord(lower: string): boolean {
  return (BY_LAST_WORD.get(lower) ?? []).some(([phrase, level]) => phrase === lower && RANK[level] >= RANK.medium);
}
