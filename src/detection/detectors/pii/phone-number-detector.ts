import { performance } from 'node:perf_hooks';
import { findPhoneNumbersInText, type CountryCode } from 'libphonenumber-js';
import type { Detector, DetectorFinding, DetectorInput } from '../../detector';
import { LibraryBudget } from './phone-budget';
import { insideIban } from './phone-guards';
import { findNational, fittingPlans, regionPlans, thousandsShaped, type NationalMatch, type RegionPlan } from './phone-national';
import { DigitRunMatches, textIndexOf } from '../../text-index';
import {
  AbortTicker,
  codeAt,
  ContextWords,
  digitsOf,
  isAlnum,
  isAsciiLetter,
  isDigit,
  isWordChar,
  luhnValid,
  MAX_FINDINGS,
} from './signals';

/**
 * pii/phone_number: telephone numbers, found and validated by libphonenumber-js (Google's libphonenumber
 * metadata). The default "min" metadata is used: with "max" (full per-type patterns, ~4x larger) the
 * labeled fixtures scored no better (one published example, +971 4 123 4567, became invalid).
 *
 * Candidates: runs of digits joined by phone punctuation (spaces, "-", ".", "/", parentheses, dashes),
 * optionally led by "+", with at least 7 digits; prose without such runs costs one regular-expression
 * pass. Runs are cut into segments of whole tokens that can hold one number, and a cheap gate (a "+",
 * an international prefix, or a plausible North American number at a token start) decides which
 * segments libphonenumber's matcher sees (POSSIBLE leniency, default country US, "+CC" numbers of every
 * country, a few characters of following text so its time-stamp check works). "00" before a country
 * code is read as "+" ("0044 20 7946 0958"); national numbers of other countries without an
 * international prefix ("020 7946 0958") are not recognised. Library calls that find nothing are
 * budgeted (MAX_FRUITLESS_CALLS, MAX_LIBRARY_CALLS): a wall of number-like digits makes the detector throw,
 * so the engine reports it and applies the fail mode, instead of skipping text silently.
 *
 * Not reported: a run glued to letters, "_" or other digits (hex, identifiers, UUID parts, IBANs), the
 * digit groups that end a printed IBAN ("GB82 WEST 1234 5698 7654 32": the run lies inside a mod-97-valid
 * IBAN; checked before libphonenumber, whose calls on such 14-digit runs starting with "1" cost ~0.2 ms),
 * dotted runs with 4+ groups and no "+" (IP addresses, versions), a version word or "v" before, SSN
 * shapes (3-2-4), a Luhn-valid 13-19 digit card number, dates ("2024-01-15", "12/31/2020"), time stamps,
 * bare digit strings that cannot be a US number (not 7, 10 or 1+10 digits).
 *
 * Confidence:
 *   valid, written as a phone number ("+", or grouped with spaces/dashes/dots/parentheses)
 *                                             0.85, 0.95 with a phone word (call, phone, tel, mobile, …)
 *   valid, a bare run of digits ("4155552671") 0.60, 0.85 with a phone word
 *   possible only (right length, not valid)   0.45, 0.60 with a phone word
 *   an ID word nearby (order, invoice, ref, tracking, #…) and no phone word: at most 0.45
 */

export const PHONE_CONFIDENCE = {
  formattedWithContext: 0.95,
  formatted: 0.85,
  bareWithContext: 0.85,
  bare: 0.6,
  possibleWithContext: 0.6,
  possible: 0.45,
  idContextCap: 0.45,
} as const;

export { MAX_FRUITLESS_CALLS, MAX_LIBRARY_CALLS } from './phone-budget';

const DEFAULT_COUNTRY: CountryCode = 'US';
const MIN_DIGITS = 7;
/** Characters of text after a run passed along (time-stamp checks look at ":30" after "2012-01-02 08"). */
const LOOKAHEAD = 8;
/** A segment handed to libphonenumber holds at most this many digits (E.164 is 15, plus "00"/"011"). */
const MAX_SEGMENT_DIGITS = 17;

const DASHES = '\u2010-\u2015\u2212';
// Runs of at least MIN_DIGITS digits joined by phone punctuation. Linear: each iteration is "up to three
// punctuation characters, then a digit", which parses one way only, and no match starts inside a digit
// group.
// Sticky: tried at each digit-run start (text-index.ts) and at the "+" / "(" right before it.
const RUN = new RegExp(`(?<![0-9])\\+?\\(?[0-9](?:[ \\t().\\-/${DASHES}]{0,3}[0-9]){${MIN_DIGITS - 1}}`, 'y');
/** The rest of the run in bounded steps (an unbounded `{n,}` overflowed irregexp's stack on millions of digits). */
const RUN_MORE = new RegExp(`(?:[ \\t().\\-/${DASHES}]{0,3}[0-9]){1,1024}`, 'y');

/** How many characters before a digit run a RUN match can start: "(", "+", "+(". */
function plusOrParenBefore(text: string, runStart: number): number {
  let lead = 0;
  if (text.charCodeAt(runStart - 1) === 0x28) lead++;
  if (text.charCodeAt(runStart - 1 - lead) === 0x2b) lead++;
  return lead;
}

const PHONE_WORDS = new ContextWords([
  'call', 'called', 'calling', 'phone', 'phones', 'telephone', 'tel', 'tel.', 'mobile', 'mob', 'cell',
  'cellphone', 'fax', 'whatsapp', 'sms', 'text me', 'dial', 'ph', 'contact', 'reach me', 'hotline',
  'landline', 'telegram', 'viber', 'voicemail', 'tlf', 'telefon', 'tél', 'handy', 'portable', 'móvil',
  // de, fr, es, it, nl, pt, ja (compounds listed whole: a word glued to letters does not match)
  'telefonnummer', 'rufnummer', 'handynummer', 'mobilnummer', 'mobil', 'anrufen', 'erreichbar', 'festnetz',
  'téléphone', 'telephone', 'numéro', 'appeler', 'appelez', 'appelle', 'joindre', 'joignable', 'mobile',
  'teléfono', 'telefono', 'número', 'numero', 'llamar', 'llame', 'llámame', 'llamadas', 'celular', 'movil',
  'cellulare', 'chiamare', 'chiami', 'chiamami', 'chiamateci', 'recapito', 'telefoon', 'telefoonnummer',
  'mobiel', 'bel', 'bellen', 'nummer', 'ligar', 'contato', '電話', '電話番号', '携帯', '連絡先', 'tel:',
]);
const ID_WORDS = new ContextWords([
  'order', 'invoice', 'ref', 'reference', 'id', 'tracking', 'transaction', 'txn', 'sku', 'serial', 'ticket',
  'case', 'po', 'isbn', 'issn', 'build', 'version', 'account', 'acct', 'ssn', 'iban', 'card', 'customer',
  'confirmation', 'booking', 'pnr', 'receipt', 'batch', 'lot', 'record', 'row', 'timestamp', 'epoch', 'pid',
]);

const VERSION_BEFORE = /(?:^|[^a-z0-9])(?:v|ver|version|release|build|rev)\.?\s*[:=]?\s*$/i;
const DATE_SHAPE = /^(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})(?:\D|$)/;
const SSN_SHAPE = /^\d{3}([- ]?)\d{2}\1\d{4}$/;
const DOTTED_QUAD = /\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}/; // bounded: constant work per start
const NANP_DOTTED = /^1\.\d{3}\.\d{3}\.\d{4}$/; // 1.800.555.0199
// A whole run that is a date or a date and hour ("2024-05-15", "2024-05-15 10", "12/31/2020").
const DATE_RUN = /^(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:[ T]\d{1,2})?|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4})$/;

export class PhoneNumberDetector implements Detector {
  readonly type = 'pii/phone_number' as const;

  detect(input: DetectorInput, signal: AbortSignal): DetectorFinding[] {
    const { text } = input;
    const ticker = new AbortTicker(signal);
    const budget = new LibraryBudget(ticker);
    const plans = regionPlans(input.piiRegions);
    const findings: DetectorFinding[] = [];
    const matches = new DigitRunMatches(textIndexOf(input), RUN, plusOrParenBefore, RUN_MORE);
    for (let m = matches.next(); m && findings.length < MAX_FINDINGS; m = matches.next()) {
      ticker.tick();
      const start = m.index;
      const end = start + m[0].length;
      matches.from = end;
      if (!runAllowed(text, start, end, m[0])) continue;
      findings.push(...scanRun({ text, start, end, budget, plans, limit: MAX_FINDINGS - findings.length }));
    }
    return dedupe(findings).slice(0, MAX_FINDINGS);
  }
}

/** Cheap checks on a whole run before libphonenumber sees it. */
function runAllowed(text: string, start: number, end: number, run: string): boolean {
  if (digitCount(run) < MIN_DIGITS) return false;
  const lead = run.charCodeAt(0);
  const glued = isDigit(lead) && isWordChar(codeAt(text, start - 1));
  if (glued || isWordChar(codeAt(text, end))) return false;
  // "ID-4155552671", "x.4155552671": joined to an identifier.
  const before = codeAt(text, start - 1);
  if ((before === 0x2d || before === 0x2e || before === 0x5f) && isAlnum(codeAt(text, start - 2))) return false;
  if (run.startsWith('+')) return true;
  // A whole run that is a Luhn-valid 13-19 digit number is a card ("3702 195969 12376"): no number
  // inside it is a phone number.
  const digits = digitsOf(run);
  if (digits.length >= 13 && digits.length <= 19 && luhnValid(digits)) return false;
  // "〒150-0002": a Japanese postcode.
  if (before === 0x3012 || (before === 0x20 && codeAt(text, start - 2) === 0x3012)) return false;
  if (insideIban(text, start, end)) return false;
  if ((DOTTED_QUAD.test(run) && !NANP_DOTTED.test(run)) || DATE_RUN.test(run)) return false;
  // A bare digit string can only be a national US number (7, 10, or 11 digits with the trunk "1") or an
  // international one dialled with "00"/"011". libphonenumber costs ~50 µs a call, so this matters.
  if (/^[0-9]+$/.test(run)) {
    const n = run.length;
    if (n === 7 || n === 10 || (n === 11 && run.startsWith('1')) || /^0(?:0|11)[1-9]/.test(run)) return true;
    // A national number written without separators ("0612345678", "904956368"): with a trunk "0", or a
    // phone word before it.
    return n >= 8 && n <= 12 && (/^0[1-9]/.test(run) || PHONE_WORDS.before(text, start));
  }
  return true;
}

function digitCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) if (isDigit(s.charCodeAt(i))) n++;
  return n;
}

/**
 * A run cut into segments of whole tokens (split at whitespace) that can each hold one phone number: a
 * segment closes before a token that would take it past MAX_SEGMENT_DIGITS, or before "(" once it has
 * MIN_DIGITS digits ("415-555-2671 (646) 555-0143"). When libphonenumber finds nothing in a segment, the
 * next segment starts one token later, so a number starting anywhere is seen whole.
 */
interface RunArgs {
  text: string;
  start: number;
  end: number;
  budget: LibraryBudget;
  /** The numbering plans of the policy's pii_regions. */
  plans: readonly RegionPlan[];
  /** Findings still wanted. */
  limit: number;
}

function scanRun({ text, start, end, budget, plans, limit }: RunArgs): DetectorFinding[] {
  const tokens = tokensOf(text, start, end);
  const out: DetectorFinding[] = [];
  let k = 0;
  let boundary = true;
  while (k < tokens.length && out.length < limit) {
    let digits = 0;
    let j = k;
    while (j < tokens.length) {
      const t = tokens[j] as Token;
      if (j > k && (digits + t.digits > MAX_SEGMENT_DIGITS || (t.paren && digits >= MIN_DIGITS))) break;
      digits += t.digits;
      j++;
    }
    const from = (tokens[k] as Token).start;
    const to = (tokens[j - 1] as Token).end;
    // National formats only from where a number can begin: the run's start or right after a number
    // ("4532 0198 7654 3215" holds "0198 7654 3215", a valid-looking national number, inside a card).
    const kind = segmentKind(text, tokens, k, j, boundary ? plans : NO_PLANS);
    const found = kind ? scanWindow({ text, start: from, end: to, runEnd: end, budget, kind }) : [];
    out.push(...found);
    boundary = found.length > 0;
    if (found.length === 0) {
      k++;
      continue;
    }
    const last = Math.max(...found.map((f) => f.end));
    while (k < tokens.length && (tokens[k] as Token).start < last) k++;
  }
  return out;
}

interface Token {
  start: number;
  end: number;
  digits: number;
  /** Starts with "(": an area code in parentheses begins a new number. */
  paren: boolean;
}

/** The whitespace-separated tokens of text[start, end). */
function tokensOf(text: string, start: number, end: number): Token[] {
  const tokens: Token[] = [];
  let i = start;
  while (i < end) {
    while (i < end && isBlank(text.charCodeAt(i))) i++;
    if (i >= end) break;
    const s = i;
    let digits = 0;
    while (i < end && !isBlank(text.charCodeAt(i))) {
      if (isDigit(text.charCodeAt(i))) digits++;
      i++;
    }
    tokens.push({ start: s, end: i, digits, paren: text.charCodeAt(s) === 0x28 });
  }
  return tokens;
}

function isBlank(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

// A North American number from a token start: optional trunk 1, area code and exchange not starting 0/1.
const NANP_DIGITS = /^1?[2-9][0-9]{2}[2-9][0-9]{6}/;

/** What a segment may hold: "+CC" / "00CC" ("intl"), a North American number, national numbers of some regions. */
const NO_PLANS: readonly RegionPlan[] = [];

interface SegmentKind {
  intl: boolean;
  nanp: boolean;
  national: RegionPlan[];
}
const INTL: SegmentKind = { intl: true, nanp: false, national: [] };

/**
 * Cheap gate before libphonenumber (~15-50 µs a call): the segment starts with "+" or an international
 * prefix (00, 011); or some token of it starts a North American number; or its digits fit the numbering
 * plan of a pii_regions region (trunk "0" and length: phone-national.ts). Tables of small numbers,
 * decimals and years do not get past it.
 */
function segmentKind(text: string, tokens: readonly Token[], from: number, to: number, plans: readonly RegionPlan[]): SegmentKind | undefined {
  const first = tokens[from] as Token;
  if (text.charCodeAt(first.start) === 0x2b /* + */) return INTL;
  const segment = text.slice(first.start, (tokens[to - 1] as Token).end);
  const digits = digitsOf(segment);
  // "0044 20 …" / "011 44 …" dialled internationally, unless a region's national plan reads it
  // ("0118 406 1449" is a Reading number, not "011 8…").
  // Like national formats, only where a number can begin ("6011 0084 1609 6532" is a card).
  if (/^0(?:0|11)[1-9]/.test(digits)) return plans.length > 0 ? { intl: true, nanp: false, national: fittingPlans(plans, segment) } : undefined;
  let nanp = false;
  let offset = 0;
  for (let k = from; k < to && !nanp; k++) {
    nanp = NANP_DIGITS.test(digits.slice(offset));
    offset += (tokens[k] as Token).digits;
  }
  let national = fittingPlans(plans, segment);
  // A national number without a trunk "0" is only a phone number next to a phone word
  // (nationalFindings): without one, no library call is spent on it ("4111 1111", "5000 / 600000").
  if (national.length > 0 && digits.charCodeAt(0) !== 0x30 && !PHONE_WORDS.near(text, first.start, (tokens[to - 1] as Token).end)) national = [];
  return nanp || national.length > 0 ? { intl: false, nanp, national } : undefined;
}

interface WindowArgs {
  text: string;
  start: number;
  end: number;
  /** End of the whole run: a window that reaches it also gets LOOKAHEAD characters of following text. */
  runEnd: number;
  budget: LibraryBudget;
  kind: SegmentKind;
}

function scanWindow({ text, start, end, runEnd, budget, kind }: WindowArgs): DetectorFinding[] {
  if (digitCount(text.slice(start, end)) < MIN_DIGITS) return [];
  const slice = text.slice(start, end >= runEnd ? Math.min(text.length, end + LOOKAHEAD) : end);
  // "0044 20 7946 0958": the "00" international prefix used outside North America reads as "+".
  const idd = /^00[1-9]/.test(slice);
  const out: DetectorFinding[] = [];
  const nanp = nanpNumber(text, start, end);
  if (nanp !== undefined) {
    const confidence = scorePhone(text, start, end, budget.validate(nanp));
    if (confidence > 0) out.push({ confidence, start, end });
    return out;
  }
  const search = idd ? `+${slice.slice(2)}` : slice;
  // "+CC", "00CC" and North American candidates: the matcher with the default country US, as before
  // pii_regions existed; the national formats of the regions only when it finds no valid number.
  const numbers = kind.intl || kind.nanp
    ? budget.call(() => findPhoneNumbersInText(search, { defaultCountry: DEFAULT_COUNTRY, extended: true }))
    : [];
  if (kind.national.length > 0 && !numbers.some((f) => f.number.isValid())) {
    const national = budget.sweep((call) => findNational(slice, kind.national, call));
    if (national) return nationalFindings(text, start, end, national);
  }
  for (const found of numbers) {
    const s = start + found.startsAt + (idd && found.startsAt > 0 ? 1 : 0);
    // An extension ("ext. 204") may run into the look-ahead; the span keeps the number itself.
    const e = Math.min(end, start + found.endsAt + (idd ? 1 : 0));
    if (s >= end) continue; // starts in the look-ahead: not part of this run
    const confidence = scorePhone(text, s, e, found.number.isValid());
    if (confidence > 0) out.push({ confidence, start: s, end: e });
  }
  return out;
}

/**
 * A North American number written in one of the usual formats, the whole of text[start, end):
 * "(212) 555-0187", "415-555-0132", "415.555.0132", "+1 415-555-0132", "1-800-555-0199",
 * "+1 (415) 555-0132" (one separator kind between the three groups), not followed by a digit or ":". For these
 * libphonenumber's matcher (~50 µs a call) would find exactly this span with the default country US, so
 * only its validity check runs on the E.164 form (~10 µs for US numbers, ~25 µs for the other NANP
 * countries, whose area code has to be looked up; same metadata). A test
 * compares both paths on generated numbers of every shape.
 */
const NANP_SHAPE = /^(?:\+?1([ .\-]))?(?:\(([2-9][0-9]{2})\) ?|([2-9][0-9]{2})([ .\-]))([2-9][0-9]{2})([ .\-])([0-9]{4})$/;

export function nanpNumber(text: string, start: number, end: number): string | undefined {
  if (end - start > 17) return undefined;
  const m = NANP_SHAPE.exec(text.slice(start, end));
  if (!m) return undefined;
  const next = codeAt(text, end);
  if (isDigit(next) || next === 0x3a) return undefined;
  // Groups written with a separator use the same one throughout ("415-555-0132", not "415-555.0132").
  if (m[4] !== undefined && m[4] !== m[6]) return undefined;
  return `+1${m[2] ?? m[3]}${m[5]}${m[7]}`;
}

/**
 * Findings for the valid national numbers the matcher found in text[start, …). A number written with
 * its region's trunk prefix ("020 …", "06 …") scores like any valid number. One without (Spain, Poland,
 * Italian mobiles, Brazil, Mexico, India: "612 34 56 78") is indistinguishable from an amount or an ID
 * ("94105-1234", "(2003) 211-227"), so it is only looked up next to a phone word (segmentKind) and needs
 * 9+ digits (capped at PHONE_CONFIDENCE.possible otherwise); so is a thousands-shaped one
 * ("912 345 678") without a phone word.
 */
function nationalFindings(text: string, start: number, end: number, match: NationalMatch): DetectorFinding[] {
  const out: DetectorFinding[] = [];
  for (const f of match.found) {
    const s = start + f.startsAt;
    const e = Math.min(end, start + f.endsAt);
    if (s >= end) continue;
    const raw = text.slice(s, e);
    const digits = digitsOf(raw);
    const phoneWord = PHONE_WORDS.near(text, s, e);
    let confidence = scorePhone(text, s, e, true, phoneWord);
    const trunkLed = match.prefix !== undefined && digits.startsWith(match.prefix);
    if (ZIP_PLUS_FOUR.test(raw)) continue;
    if (!trunkLed && (!phoneWord || digits.length < 9)) confidence = Math.min(confidence, PHONE_CONFIDENCE.possible);
    if (thousandsShaped(raw) && !phoneWord) confidence = Math.min(confidence, PHONE_CONFIDENCE.possible);
    if (confidence > 0) out.push({ confidence, start: s, end: e });
  }
  return out;
}

const ZIP_PLUS_FOUR = /^[0-9]{5}-[0-9]{4}$/;

/** 0 = not a phone number; otherwise the confidence of text[start, end). */
export function scorePhone(text: string, start: number, end: number, valid: boolean, nationalNine = false): number {
  const raw = text.slice(start, end);
  const digits = digitsOf(raw);
  if (isWordChar(codeAt(text, start - 1)) && raw[0] !== '+' && raw[0] !== '(') return 0;
  if (isWordChar(codeAt(text, end))) return 0;
  // A bare 9-digit national number ("954856599", Spain) has the SSN's 3-2-4 shape without separators;
  // the caller passes nationalNine only when a phone word is near it.
  if ((SSN_SHAPE.test(raw) && !(nationalNine && /^[0-9]{9}$/.test(raw))) || DATE_SHAPE.test(raw)) return 0;
  if (digits.length >= 13 && digits.length <= 19 && raw[0] !== '+' && luhnValid(digits)) return 0;
  if (VERSION_BEFORE.test(text.slice(Math.max(0, start - 12), start))) return 0;
  if (raw[0] !== '+' && raw.split('.').length > 3 && !NANP_DOTTED.test(raw)) return 0;
  const phoneWord = PHONE_WORDS.near(text, start, end);
  const C = PHONE_CONFIDENCE;
  let confidence: number;
  if (!valid) confidence = phoneWord ? C.possibleWithContext : C.possible;
  else if (raw[0] === '+' || /[ ().\-\u2010-\u2015\u2212/]/.test(raw)) confidence = phoneWord ? C.formattedWithContext : C.formatted;
  else confidence = phoneWord ? C.bareWithContext : C.bare;
  const idBefore = codeAt(text, start - 1) === 0x23 || codeAt(text, start - 2) === 0x23; // "#4155552671"
  if (!phoneWord && (idBefore || ID_WORDS.near(text, start, end, 24))) confidence = Math.min(confidence, C.idContextCap);
  return confidence;
}

/** Slices of long runs overlap; keep the first finding of each start. */
function dedupe(findings: DetectorFinding[]): DetectorFinding[] {
  const seen = new Set<number>();
  return findings.filter((f) => (seen.has(f.start) ? false : (seen.add(f.start), true)));
}
