import { BOUNDARY, charSymbol, UNSCORED, type SuffixLm } from './suffix-lm';
import { maskBlobs } from './suffix-mask';
import { forEachWord, hasBit, wordPairHash } from './suffix-words';

/**
 * One pass over a text for the adversarial-suffix signal: per-character cost under the character LM
 * and cheap token-soup flags, kept as prefix sums so that any window's features cost O(1). The arrays
 * are module buffers reused across calls (grown on demand): a scan is only valid until the next one.
 */

export const FEATURE_NAMES = ['mean_bits', 'high_cost_rate', 'case_switch_rate', 'glued_punct_rate', 'letter_bits', 'symbol_rate', 'unseen_pair_rate'] as const;
export const FEATURES = FEATURE_NAMES.length;

export interface SuffixScan {
  readonly length: number;
  /** cumulative per-character cost (bits) over scored characters; index i = sum over [0, i). */
  readonly cost: Float64Array;
  readonly scored: Int32Array;
  readonly high: Int32Array;
  readonly caseSwitch: Int32Array;
  readonly glued: Int32Array;
  /** cost over letters only, and the letter count. */
  readonly letterCost: Float64Array;
  readonly letters: Int32Array;
  /** ASCII punctuation and symbols. */
  readonly symbols: Int32Array;
  /** adjacent pairs of common words, and those never seen together in training (at the second word's last letter). */
  readonly pairs: Int32Array;
  readonly unseen: Int32Array;
}

let capacity = 0;
let mask = new Uint8Array(0);
let cost = new Float64Array(0);
let scored = new Int32Array(0);
let high = new Int32Array(0);
let caseSwitch = new Int32Array(0);
let glued = new Int32Array(0);
let letterCost = new Float64Array(0);
let letters = new Int32Array(0);
let symbols = new Int32Array(0);
let pairEvent = new Uint8Array(0);
let pairs = new Int32Array(0);
let unseen = new Int32Array(0);

function ensure(n: number): void {
  if (n + 1 <= capacity) return;
  capacity = Math.max(1024, 1 << Math.ceil(Math.log2(n + 1)));
  mask = new Uint8Array(capacity);
  cost = new Float64Array(capacity);
  scored = new Int32Array(capacity);
  high = new Int32Array(capacity);
  caseSwitch = new Int32Array(capacity);
  glued = new Int32Array(capacity);
  letterCost = new Float64Array(capacity);
  letters = new Int32Array(capacity);
  symbols = new Int32Array(capacity);
  pairEvent = new Uint8Array(capacity);
  pairs = new Int32Array(capacity);
  unseen = new Int32Array(capacity);
}

/** pairEvent[last letter of a word] = 1 (pair of common words seen in training) or 2 (never seen). */
function markPairs(lm: SuffixLm, text: string): void {
  pairEvent.fill(0, 0, text.length + 1);
  forEachWord(text, mask, (hash, end, prev) => {
    if (prev < 0 || !hasBit(lm.words, lm.wordMask, hash) || !hasBit(lm.words, lm.wordMask, prev)) return;
    pairEvent[end - 1] = hasBit(lm.pairs, lm.pairMask, wordPairHash(prev, hash)) ? 1 : 2;
  });
}

const isLower = (c: number) => (c >= 97 && c <= 122) || (c >= 0xdf && c <= 0xff && c !== 0xf7);
const isUpper = (c: number) => (c >= 65 && c <= 90) || (c >= 0xc0 && c <= 0xde && c !== 0xd7);
const isAlnum = (c: number) => isLower(c) || isUpper(c) || (c >= 48 && c <= 57);
/** Punctuation that sits between letters in ordinary text and code: . , ' - _ : / @ & */
const ORDINARY_INNER = new Uint8Array(128);
for (const ch of ".,'-_:/@&") ORDINARY_INNER[ch.charCodeAt(0)] = 1;

/** Scans `text` with `lm`; characters costing ≥ highBits count as high-cost. */
export function scanText(lm: SuffixLm, text: string, highBits: number): SuffixScan {
  const n = text.length;
  ensure(n);
  maskBlobs(text, mask);
  markPairs(lm, text);
  let history = BOUNDARY;
  let known = 1;
  let sumCost = 0;
  let nScored = 0;
  let nHigh = 0;
  let nCase = 0;
  let nGlued = 0;
  let sumLetterCost = 0;
  let nLetters = 0;
  let nSymbols = 0;
  let nPairs = 0;
  let nUnseen = 0;
  let prev = 32;
  cost[0] = letterCost[0] = 0;
  scored[0] = high[0] = caseSwitch[0] = glued[0] = letters[0] = symbols[0] = pairs[0] = unseen[0] = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    const sym = mask[i] === 1 ? UNSCORED : charSymbol(c);
    if (sym === UNSCORED) {
      history = BOUNDARY;
      known = 1;
    } else {
      let bits = lm.cost(history, known, sym);
      if (bits > 20) bits = 20;
      sumCost += bits;
      nScored++;
      if (bits >= highBits) nHigh++;
      if (isUpper(c)) {
        if (isLower(prev)) nCase++;
        sumLetterCost += bits;
        nLetters++;
      } else if (isLower(c)) {
        sumLetterCost += bits;
        nLetters++;
      } else if (c < 128 && c > 32 && !(c >= 48 && c <= 57)) {
        nSymbols++;
        // punctuation glued between a letter/digit and a letter/digit, other than the ordinary joiners
        if (ORDINARY_INNER[c] === 0 && isAlnum(prev) && i + 1 < n && isAlnum(text.charCodeAt(i + 1))) nGlued++;
      }
      history = ((history << 6) | sym) & 0xffffff;
      if (known < 4) known++;
    }
    const e = pairEvent[i] as number;
    if (e !== 0) {
      nPairs++;
      if (e === 2) nUnseen++;
    }
    prev = c;
    pairs[i + 1] = nPairs;
    unseen[i + 1] = nUnseen;
    cost[i + 1] = sumCost;
    scored[i + 1] = nScored;
    high[i + 1] = nHigh;
    caseSwitch[i + 1] = nCase;
    glued[i + 1] = nGlued;
    letterCost[i + 1] = sumLetterCost;
    letters[i + 1] = nLetters;
    symbols[i + 1] = nSymbols;
  }
  return { length: n, cost, scored, high, caseSwitch, glued, letterCost, letters, symbols, pairs, unseen };
}

/** Features of the window [start, end) into `out`; false when it has fewer than minScored scored characters. */
export function windowFeatures(scan: SuffixScan, start: number, end: number, minScored: number, out: Float64Array): boolean {
  const k = (scan.scored[end] as number) - (scan.scored[start] as number);
  if (k < minScored) return false;
  out[0] = ((scan.cost[end] as number) - (scan.cost[start] as number)) / k;
  out[1] = ((scan.high[end] as number) - (scan.high[start] as number)) / k;
  out[2] = ((scan.caseSwitch[end] as number) - (scan.caseSwitch[start] as number)) / k;
  out[3] = ((scan.glued[end] as number) - (scan.glued[start] as number)) / k;
  const l = (scan.letters[end] as number) - (scan.letters[start] as number);
  out[4] = l > 0 ? ((scan.letterCost[end] as number) - (scan.letterCost[start] as number)) / l : 0;
  out[5] = ((scan.symbols[end] as number) - (scan.symbols[start] as number)) / k;
  // smoothed towards 0.2 (about the rate in ordinary text) when a window has few pairs
  out[6] = ((scan.unseen[end] as number) - (scan.unseen[start] as number) + 0.4) / ((scan.pairs[end] as number) - (scan.pairs[start] as number) + 2);
  return true;
}
