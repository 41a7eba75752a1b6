import type { Detector, DetectorFinding, DetectorInput } from '../../detector';
import { DigitRunMatches, textIndexOf } from '../../text-index';
import {
  AbortTicker,
  codeAt,
  CONTEXT_WINDOW,
  ContextWords,
  digitGroups,
  isWordChar,
  luhnValid,
  MAX_FINDINGS,
  type DigitGroup,
} from './signals';

/**
 * pii/credit_card: payment card numbers (PANs), 13 to 19 digits; 12 for Maestro.
 *
 * Candidates: runs of digit groups joined by separators (one or two spaces/tabs; a hyphen, dot or dash
 * with optional spaces; a line break), so "4111 1111-1111 1111", "4111.1111.1111.1111" and the
 * digit-by-digit "4 1 1 1 …" are all seen; full-width digits arrive as ASCII (NFKC in normalize.ts).
 * Inside a run every window of whole groups with 13..19 digits is tried (a window never splits a
 * group, so a card is never found inside a longer digit string); a run glued to a letter, digit or '_'
 * (hex, identifiers) is skipped.
 *
 * Validation: Luhn must pass, otherwise nothing is reported. Then the IIN (leading digits) and length
 * are checked against the networks below.
 *
 * Confidence:
 *   known network + length, clean grouping      0.95 with a context word, 0.80 without
 *   known network + length, irregular grouping  0.85 with context,       0.60 without
 *   well-known test number (see TEST_NUMBERS)    0.80 with context,       0.60 without
 *   unknown IIN or length (Luhn ok)              0.45 with context,       0.30 without if grouped like a
 *                                                card (4-4-4-4 …), otherwise not reported (bare IDs,
 *                                                timestamps, digit-by-digit noise)
 * Clean grouping: one unbroken run, all single digits ("4 1 1 1 …", an evasion; not with dots, which is
 * a version or an OID), groups of four with a shorter last group, or the Amex/Diners 4-6-5 / 4-6-4
 * layout; at most one line break inside (a wrapped line).
 *
 * Work: one regular-expression pass finds runs of 13+ digits (prose without any costs ~1 ms/MB); per run,
 * windows are weighed with cheap evidence (prefix table, layout, context) before the checksum. A
 * megabyte of digit soup takes well under a second.
 *
 * Test numbers (4111 1111 1111 1111, 4242…, 5555 5555 5555 4444, 3782 822463 10005 …) are reported on
 * purpose: card-shaped data flowing through the gateway is what a security team wants to see, but a
 * published test number is not a leak by itself, so it fires at L2 only with a payment context word and
 * at L3/L4 always. A number counts as a test number when it is in TEST_NUMBERS or when its account
 * digits (after the 6-digit IIN, before the check digit; 7 or more of them) use at most two distinct digits.
 */

export const CARD_CONFIDENCE = {
  cleanWithContext: 0.95,
  clean: 0.8,
  irregularWithContext: 0.85,
  irregular: 0.6,
  testWithContext: 0.8,
  test: 0.6,
  unknownWithContext: 0.45,
  unknown: 0.3,
} as const;

interface Network {
  name: string;
  /** Inclusive ranges over the first `digits` digits. */
  digits: number;
  from: number;
  to: number;
  lengths: readonly number[];
}

const L16_19 = [16, 17, 18, 19];
const NETWORKS: readonly Network[] = [
  { name: 'visa', digits: 1, from: 4, to: 4, lengths: [13, 16, 19] },
  { name: 'mastercard', digits: 2, from: 51, to: 55, lengths: [16] },
  { name: 'mastercard', digits: 4, from: 2221, to: 2720, lengths: [16] },
  { name: 'amex', digits: 2, from: 34, to: 34, lengths: [15] },
  { name: 'amex', digits: 2, from: 37, to: 37, lengths: [15] },
  { name: 'discover', digits: 4, from: 6011, to: 6011, lengths: L16_19 },
  { name: 'discover', digits: 3, from: 644, to: 649, lengths: L16_19 },
  { name: 'discover', digits: 2, from: 65, to: 65, lengths: L16_19 },
  { name: 'discover', digits: 6, from: 622126, to: 622925, lengths: L16_19 },
  { name: 'jcb', digits: 4, from: 3528, to: 3589, lengths: L16_19 },
  // JCB's 15-digit ranges (still issued in Japan): without them a Luhn-valid JCB scored as an unknown
  // prefix (0.45 with a context word, under L2).
  { name: 'jcb', digits: 4, from: 2131, to: 2131, lengths: [15] },
  { name: 'jcb', digits: 4, from: 1800, to: 1800, lengths: [15] },
  { name: 'diners', digits: 3, from: 300, to: 305, lengths: [14, 15, 16, 17, 18, 19] },
  { name: 'diners', digits: 4, from: 3095, to: 3095, lengths: [14, 15, 16, 17, 18, 19] },
  { name: 'diners', digits: 2, from: 36, to: 36, lengths: [14, 15, 16, 17, 18, 19] },
  { name: 'diners', digits: 2, from: 38, to: 39, lengths: [14, 15, 16, 17, 18, 19] },
  { name: 'unionpay', digits: 2, from: 62, to: 62, lengths: L16_19 },
  { name: 'mir', digits: 4, from: 2200, to: 2204, lengths: L16_19 },
  { name: 'rupay', digits: 2, from: 60, to: 60, lengths: [16] },
  { name: 'rupay', digits: 3, from: 508, to: 508, lengths: [16] },
  { name: 'troy', digits: 4, from: 9792, to: 9792, lengths: [16] },
  // Maestro: only its dedicated prefixes (the old 50/56-69 "anything" rule would accept most numbers);
  // 12 to 19 digits (ISO/IEC 7812; 12-digit Maestro cards exist). The only network taking 12 digits.
  ...[5018, 5020, 5038, 5893, 6304, 6759, 6761, 6762, 6763].map((p) => ({
    name: 'maestro',
    digits: 4,
    from: p,
    to: p,
    lengths: [12, 13, 14, 15, 16, 17, 18, 19],
  })),
];

/** Published processor / network test PANs (Stripe, Adyen, Braintree, PayPal, network docs). */
const TEST_NUMBERS = new Set([
  '4111111111111111', '4242424242424242', '4012888888881881', '4222222222222', '4000056655665556',
  '4000000000000002', '4000000000009995', '4000000000000077', '4000000000000069', '4000000000000127',
  '4000000000000119', '4000000000003220', '4000002500003155', '4000000000003063', '4917610000000000',
  '4462030000000000', '4917480000000008', '4444333322221111', '4005519200000004', '4009348888881881',
  '5555555555554444', '5105105105105100', '5200828282828210', '5454545454545454', '2223003122003222',
  '2223000048400011', '5425233430109903', '2222400070000005', '5577000055770004',
  '378282246310005', '371449635398431', '378734493671000', '370000000000002', '340000000000009',
  '6011111111111117', '6011000990139424', '6011981111111113', '6011000400000000', '6445644564456445',
  '3530111333300000', '3566002020360505', '3566111111111113', '3569990010095841',
  '30569309025904', '38520000023237', '36227206271667', '36006666333344', '36700102000000',
  '6200000000000005', '6205500000000000004', '6250941006528599', '6759649826438453', '6799990100000000019',
]);

const CONTEXT = new ContextWords([
  'card', 'cards', 'credit', 'debit', 'visa', 'mastercard', 'master card', 'amex', 'american express',
  'discover', 'jcb', 'diners', 'unionpay', 'maestro', 'cc', 'ccn', 'cc#', 'cvv', 'cvv2', 'cvc', 'csc',
  'exp', 'expiry', 'expires', 'expiration', 'payment', 'pan', 'billing', 'checkout', 'cardholder',
  // de, fr, es, it, nl, pt, ja
  'kreditkarte', 'karte', 'karteninhaber', 'girocard', 'ec-karte', 'carte', 'carte bancaire', 'carte bleue',
  'tarjeta', 'carta', 'carta di credito', 'creditcard', 'pinpas', 'bankpas', 'cartão', 'クレジットカード', 'カード',
]);

// Runs of at least 13 digits joined by: one or two spaces/tabs; a hyphen, dot, dash or minus with up to
// two spaces around it; or a line break with up to two spaces around it. Linear (see signals.ts): the
// separator alternatives are disjoint once the next digit is required, and a run never restarts inside
// a digit group.
const SEP = '(?:[ \\t]{1,2}|[ \\t]{0,2}[\\-.\u2010-\u2015\u2212][ \\t]{0,2}|[ \\t]{0,2}\\r?\\n[ \\t]{0,2})';
// Sticky: run at digit-run starts only (text-index.ts), where every match begins. 12 digits, continued by
// RUN_MORE in bounded steps (an unbounded `{11,}` overflowed irregexp's stack on millions of digits).
const RUN = new RegExp(`(?<![0-9])[0-9](?:${SEP}?[0-9]){11}`, 'y');
const RUN_MORE = new RegExp(`(?:${SEP}?[0-9]){1,1024}`, 'y');

/** Shortest PAN: 12 (Maestro only; a 12-digit window is only reported for a network that takes 12). */
const MIN_DIGITS = 12;
const MIN_UNKNOWN_DIGITS = 13;
const MAX_DIGITS = 19;
/** Per run, at most this many scored windows are kept for the overlap choice (bounds memory on digit walls). */
const MAX_WINDOWS_PER_RUN = 4 * MAX_FINDINGS;

/** A network rule prepared for the hot loop: lengths as a bit mask, the prefix as a divisor of 6 digits. */
interface PreparedNetwork {
  name: string;
  from: number;
  to: number;
  divisor: number;
  lengthMask: number;
}

/** Networks by their first digit, so a window is compared with a handful of rules. */
const NETWORKS_BY_FIRST_DIGIT: ReadonlyArray<readonly PreparedNetwork[]> = Array.from({ length: 10 }, (_, d) =>
  NETWORKS.filter((n) => Math.floor(n.from / 10 ** (n.digits - 1)) <= d && Math.floor(n.to / 10 ** (n.digits - 1)) >= d).map(
    (n) => ({
      name: n.name,
      from: n.from,
      to: n.to,
      divisor: 10 ** (6 - n.digits),
      lengthMask: n.lengths.reduce((mask, l) => mask | (1 << l), 0),
    }),
  ),
);

export function cardNetwork(digits: string): string | undefined {
  const rules = NETWORKS_BY_FIRST_DIGIT[digits.charCodeAt(0) - 0x30] ?? [];
  return networkOf(rules, Number(digits.slice(0, 6)), digits.length);
}

/** The network among `rules` whose prefix range holds `prefix6` (the first six digits) and takes `length`. */
function networkOf(rules: readonly PreparedNetwork[], prefix6: number, length: number): string | undefined {
  for (const n of rules) {
    if (((n.lengthMask >> length) & 1) === 0) continue;
    const prefix = Math.floor(prefix6 / n.divisor);
    if (prefix >= n.from && prefix <= n.to) return n.name;
  }
  return undefined;
}

export function isTestCardNumber(digits: string): boolean {
  if (TEST_NUMBERS.has(digits)) return true;
  const account = digits.slice(6, -1);
  // Short account parts (a 12-digit Maestro has 5 digits) use two distinct digits often by chance.
  return account.length >= 7 && new Set(account).size <= 2;
}

/**
 * 'unbroken': one digit run; 'grouped': a layout people use to write a PAN (4-4-4-4, 4-6-5 …);
 * 'spaced': digit by digit (an evasion); else 'irregular'.
 */
export type Grouping = 'unbroken' | 'grouped' | 'spaced' | 'irregular';

/** Layout statistics of a window of digit groups, extended one group at a time. */
class Layout {
  private groups = 0;
  private breaks = 0;
  private dots = false;
  private allSingle = true;
  /** Every group but the last has four digits. */
  private fours = true;
  private lens: number[] = [];

  add(group: DigitGroup): void {
    const len = group.end - group.start;
    if (this.groups > 0) {
      if (group.afterLineBreak) this.breaks++;
      if (group.afterDot) this.dots = true;
      if ((this.lens[this.lens.length - 1] ?? 0) !== 4) this.fours = false;
    }
    if (len !== 1) this.allSingle = false;
    if (this.lens.length < 4) this.lens.push(len);
    else this.lens[3] = len;
    this.groups++;
  }

  grouping(): Grouping {
    if (this.groups === 1) return 'unbroken';
    // One line break (a wrapped number) is fine; more looks like a column of unrelated numbers.
    if (this.breaks > 1) return 'irregular';
    // Digit by digit ("4 1 1 1 …", "4-1-1-1 …") is an evasion; with dots it is a version or an OID.
    if (this.allSingle) return this.dots ? 'irregular' : 'spaced';
    const last = this.lens[this.lens.length - 1] ?? 0;
    if (this.fours && last <= 4) return 'grouped';
    const [a, b, c] = this.lens;
    return this.groups === 3 && a === 4 && b === 6 && (c === 5 || c === 4) ? 'grouped' : 'irregular';
  }
}

/** Confidence of a Luhn-valid 13..19 digit window, 0 = not reported. */
interface WindowEvidence {
  digits: string;
  grouping: Grouping;
  context: boolean;
  network: string | undefined;
}

function scoreWindow({ digits, grouping, context, network }: WindowEvidence): number {
  const C = CARD_CONFIDENCE;
  const cleanGrouping = grouping !== 'irregular';
  if (!network) {
    if (context) return C.unknownWithContext;
    return grouping === 'grouped' ? C.unknown : 0;
  }
  if (isTestCardNumber(digits)) return context ? C.testWithContext : C.test;
  if (cleanGrouping) return context ? C.cleanWithContext : C.clean;
  return context ? C.irregularWithContext : C.irregular;
}

interface Candidate extends DetectorFinding {
  digits: number;
  /** Indices of the first and last digit group of the window. */
  first: number;
  last: number;
}

export class CreditCardDetector implements Detector {
  readonly type = 'pii/credit_card' as const;

  detect(input: DetectorInput, signal: AbortSignal): DetectorFinding[] {
    const { text } = input;
    const ticker = new AbortTicker(signal);
    const findings: DetectorFinding[] = [];
    const matches = new DigitRunMatches(textIndexOf(input), RUN, undefined, RUN_MORE);
    for (let m = matches.next(); m && findings.length < MAX_FINDINGS; m = matches.next()) {
      ticker.tick();
      const start = m.index;
      const end = start + m[0].length;
      matches.from = end;
      if (isWordChar(codeAt(text, start - 1)) || isWordChar(codeAt(text, end))) continue;
      const groups = digitGroups(text, start, end);
      if (totalDigits(groups) < MIN_DIGITS) continue;
      findings.push(...bestWindows(text, groups, ticker));
    }
    return findings.slice(0, MAX_FINDINGS);
  }
}

function totalDigits(groups: readonly DigitGroup[]): number {
  let n = 0;
  for (const g of groups) n += g.end - g.start;
  return n;
}

/** Every scored window of whole groups, then the best non-overlapping ones (confidence, then length). */
function bestWindows(text: string, groups: readonly DigitGroup[], ticker: AbortTicker): DetectorFinding[] {
  const runDigits = groups.map((g) => text.slice(g.start, g.end)).join('');
  const offsets = [0];
  for (const g of groups) offsets.push((offsets[offsets.length - 1] ?? 0) + g.end - g.start);
  const first = groups[0] as DigitGroup;
  const last = groups[groups.length - 1] as DigitGroup;
  const context = CONTEXT.hits(text, first.start - CONTEXT_WINDOW, last.end + CONTEXT_WINDOW);
  const candidates: Candidate[] = [];
  for (let i = 0; i < groups.length && candidates.length < MAX_WINDOWS_PER_RUN; i++) {
    ticker.tick();
    const from = offsets[i] ?? 0;
    const rules = NETWORKS_BY_FIRST_DIGIT[runDigits.charCodeAt(from) - 0x30] ?? [];
    const prefix6 = rules.length > 0 ? Number(runDigits.slice(from, from + 6)) : 0;
    const start = (groups[i] as DigitGroup).start;
    const layout = new Layout();
    for (let j = i; j < groups.length; j++) {
      const length = (offsets[j + 1] ?? 0) - from;
      if (length > MAX_DIGITS) break;
      layout.add(groups[j] as DigitGroup);
      if (length < MIN_DIGITS) continue;
      const end = (groups[j] as DigitGroup).end;
      const network = rules.length > 0 ? networkOf(rules, prefix6, length) : undefined;
      const near = context.near(start, end);
      const grouping = layout.grouping();
      // Cheap evidence first: an unknown prefix without context scores only in a card-like layout, so
      // most windows of long digit tables (embeddings, measurements) are dropped before the checksum.
      if (!network && ((!near && grouping !== 'grouped') || length < MIN_UNKNOWN_DIGITS)) continue;
      const digits = runDigits.slice(from, from + length);
      if (!luhnValid(digits)) continue;
      const confidence = scoreWindow({ digits, grouping, context: near, network });
      if (confidence > 0) candidates.push({ confidence, start, end, digits: length, first: i, last: j });
    }
  }
  if (candidates.length <= 1) return candidates.map(toFinding);
  // Best confidence first; among equals the common 16-digit length (a card followed by its CVV, "4111 …
  // 1111 123", also makes a Luhn-valid 19-digit window one time in ten), then the longer, then the first.
  candidates.sort(
    (a, b) =>
      b.confidence - a.confidence ||
      Number(b.digits === 16) - Number(a.digits === 16) ||
      b.digits - a.digits ||
      a.start - b.start,
  );
  const used = new Uint8Array(groups.length);
  const chosen: Candidate[] = [];
  for (const c of candidates) {
    if (used.subarray(c.first, c.last + 1).some((u) => u === 1)) continue;
    used.fill(1, c.first, c.last + 1);
    chosen.push(c);
  }
  return chosen.sort((a, b) => a.start - b.start).map(toFinding);
}

function toFinding(c: Candidate): DetectorFinding {
  return { confidence: c.confidence, start: c.start, end: c.end };
}
