import { BOUNDARY, charSymbol, gramHash, UNSCORED, type SuffixLm } from './suffix-lm';
import { codeUnits, maskBlobCodes } from './suffix-mask';
import { forEachWordOf, hasBit, maskWordIdentifierCodes, wordPairHash } from './suffix-words';

/**
 * One pass over a text for the adversarial-suffix signal: per-character cost under the ordinary-text
 * LM and under the token-soup LM, and cheap token-soup counts, kept as prefix sums at checkpoints every
 * `stride` characters (and at the end), so that the features of any window between checkpoints cost
 * O(1). The arrays are module buffers reused across calls (grown on demand): a scan is only valid until
 * the next one.
 */

export const FEATURE_NAMES = ['mean_bits', 'case_switch_rate', 'letter_bits', 'symbol_rate', 'unseen_pair_rate', 'llr_bits'] as const;
export const FEATURES = FEATURE_NAMES.length;

/** Prefix sums at checkpoints: index j = position j·stride, the last index = the text's end. */
export interface SuffixScan {
  readonly length: number;
  readonly stride: number;
  /** bits over scored characters, under the ordinary LM. */
  readonly cost: Float64Array;
  readonly scored: Int32Array;
  readonly caseSwitch: Int32Array;
  /** cost over letters only, and the letter count. */
  readonly letterCost: Float64Array;
  readonly letters: Int32Array;
  /** ASCII punctuation and symbols. */
  readonly symbols: Int32Array;
  /** adjacent pairs of common words, and those never seen together in training. */
  readonly pairs: Int32Array;
  readonly unseen: Int32Array;
  /** cost under the ordinary LM minus cost under the token-soup LM (bits). */
  readonly llr: Float64Array;
}

let charCapacity = 0;
let checkpointCapacity = 0;
let mask = new Uint8Array(0);
let pairEvent = new Uint8Array(0);
let cost = new Float64Array(0);
let scored = new Int32Array(0);
let caseSwitch = new Int32Array(0);
let letterCost = new Float64Array(0);
let letters = new Int32Array(0);
let symbols = new Int32Array(0);
let pairs = new Int32Array(0);
let unseen = new Int32Array(0);
let llr = new Float64Array(0);

const grown = (need: number) => Math.max(1024, 1 << Math.ceil(Math.log2(need)));

/** Per-character buffers for n characters; prefix sums only for the checkpoints (n / stride + 2). */
function ensure(n: number, stride: number): void {
  if (n + 1 > charCapacity) {
    charCapacity = grown(n + 1);
    mask = new Uint8Array(charCapacity);
    pairEvent = new Uint8Array(charCapacity);
  }
  const checkpoints = Math.ceil(n / stride) + 2;
  if (checkpoints <= checkpointCapacity) return;
  checkpointCapacity = grown(checkpoints);
  cost = new Float64Array(checkpointCapacity);
  scored = new Int32Array(checkpointCapacity);
  caseSwitch = new Int32Array(checkpointCapacity);
  letterCost = new Float64Array(checkpointCapacity);
  letters = new Int32Array(checkpointCapacity);
  symbols = new Int32Array(checkpointCapacity);
  pairs = new Int32Array(checkpointCapacity);
  unseen = new Int32Array(checkpointCapacity);
  llr = new Float64Array(checkpointCapacity);
}

/** pairEvent[last letter of a word] = 1 (pair of common words seen in training) or 2 (never seen). */
function markPairs(lm: SuffixLm, text: Uint16Array, n: number): void {
  pairEvent.fill(0, 0, n + 1);
  forEachWordOf(text, n, mask, (hash, end, prev) => {
    if (prev < 0 || !hasBit(lm.words, lm.wordMask, hash) || !hasBit(lm.words, lm.wordMask, prev)) return;
    pairEvent[end - 1] = hasBit(lm.pairs, lm.pairMask, wordPairHash(prev, hash)) ? 1 : 2;
  });
}

const isLower = (c: number) => (c >= 97 && c <= 122) || (c >= 0xdf && c <= 0xff && c !== 0xf7);
const isUpper = (c: number) => (c >= 65 && c <= 90) || (c >= 0xc0 && c <= 0xde && c !== 0xd7);

/**
 * Memo of the two models' (clamped) costs of a full order-4 gram, keyed by the packed gram (24 bits:
 * three context symbols and the symbol): with a full context the cost depends on nothing else, and text
 * repeats its 4-grams, so most characters cost one table read instead of two hashes and up to eight
 * probes. Direct-mapped, 2^MEMO_BITS entries; the values are the very doubles costHashed returns, so the
 * scan's sums are the same bit for bit. Valid for one pair of models (reset when the pair changes).
 */
const MEMO_BITS = 14;
const MEMO_SHIFT = 32 - MEMO_BITS;
const memoKeys = new Int32Array(1 << MEMO_BITS).fill(-1);
const memoCosts = new Float64Array(2 << MEMO_BITS);
let memoLm: SuffixLm | undefined;
let memoSoup: SuffixLm | undefined;

/**
 * The clamped costs of a character without a full context, read back from here like the memo's: every
 * value `bits` and `soupBits` take is then a Float64Array load, so V8 keeps them (and the sums) as raw
 * doubles. With the constant 20 and the models' return values assigned directly, it boxed both on every
 * character: two heap numbers per character, ~10 KB per chat prompt and the GC work that goes with them
 * (the same sums bit for bit, and 10–15% less CPU for the scan; bench/RESULTS.md).
 */
const clamped = new Float64Array(2);

/** Scans `text` with the ordinary-text LM `lm` and the token-soup LM `soup`, checkpointing every `stride`. */
export function scanText(lm: SuffixLm, soup: SuffixLm, text: string, stride: number): SuffixScan {
  const n = text.length;
  ensure(n, stride);
  if (memoLm !== lm || memoSoup !== soup) {
    memoKeys.fill(-1);
    memoLm = lm;
    memoSoup = soup;
  }
  // Every pass reads the code units, copied once.
  const units = codeUnits(text);
  maskBlobCodes(units, n, mask);
  maskWordIdentifierCodes(units, n, mask, lm.words, lm.wordMask);
  markPairs(lm, units, n);
  let history = BOUNDARY;
  let known = 1;
  let sumCost = 0;
  let sumLlr = 0;
  let sumLetterCost = 0;
  let nScored = 0;
  let nCase = 0;
  let nLetters = 0;
  let nSymbols = 0;
  let nPairs = 0;
  let nUnseen = 0;
  let prev = 32;
  let nextCheckpoint = stride;
  let cp = 1;
  cost[0] = letterCost[0] = llr[0] = 0;
  scored[0] = caseSwitch[0] = letters[0] = symbols[0] = pairs[0] = unseen[0] = 0;
  for (let i = 0; i < n; i++) {
    const c = units[i] as number;
    const sym = mask[i] === 1 ? UNSCORED : charSymbol(c);
    if (sym === UNSCORED) {
      history = BOUNDARY;
      known = 1;
    } else {
      let bits: number;
      let soupBits: number;
      if (known >= 3) {
        // A full order-4 context: the two costs depend on the packed gram alone (memoised).
        const gram = ((history & 0x3ffff) << 6) | sym;
        const slot = (Math.imul(gram, 0x9e3779b1) >>> MEMO_SHIFT) * 2;
        if (memoKeys[slot >> 1] === gram) {
          bits = memoCosts[slot] as number;
          soupBits = memoCosts[slot + 1] as number;
        } else {
          const h4 = gramHash(gram, 4);
          const h3 = gramHash(((history & 0xfff) << 6) | sym, 3);
          const b = lm.costHashed(h4, h3, history, known, sym);
          const sb = soup.costHashed(h4, h3, history, known, sym);
          memoKeys[slot >> 1] = gram;
          memoCosts[slot] = b > 20 ? 20 : b;
          memoCosts[slot + 1] = sb > 20 ? 20 : sb;
          bits = memoCosts[slot] as number;
          soupBits = memoCosts[slot + 1] as number;
        }
      } else {
        const h3 = known >= 2 ? gramHash(((history & 0xfff) << 6) | sym, 3) : 0;
        const b = lm.costHashed(0, h3, history, known, sym);
        const sb = soup.costHashed(0, h3, history, known, sym);
        clamped[0] = b > 20 ? 20 : b;
        clamped[1] = sb > 20 ? 20 : sb;
        bits = clamped[0] as number;
        soupBits = clamped[1] as number;
      }
      sumCost += bits;
      sumLlr += bits - soupBits;
      nScored++;
      if (isUpper(c)) {
        if (isLower(prev)) nCase++;
        sumLetterCost += bits;
        nLetters++;
      } else if (isLower(c)) {
        sumLetterCost += bits;
        nLetters++;
      } else if (c < 128 && c > 32 && (c < 48 || c > 57)) nSymbols++;
      history = ((history << 6) | sym) & 0xffffff;
      if (known < 4) known++;
    }
    const e = pairEvent[i] as number;
    if (e !== 0) {
      nPairs++;
      if (e === 2) nUnseen++;
    }
    prev = c;
    if (i + 1 === nextCheckpoint || i + 1 === n) {
      cost[cp] = sumCost;
      llr[cp] = sumLlr;
      letterCost[cp] = sumLetterCost;
      scored[cp] = nScored;
      caseSwitch[cp] = nCase;
      letters[cp] = nLetters;
      symbols[cp] = nSymbols;
      pairs[cp] = nPairs;
      unseen[cp] = nUnseen;
      cp++;
      nextCheckpoint += stride;
    }
  }
  return { length: n, stride, cost, scored, caseSwitch, letterCost, letters, symbols, pairs, unseen, llr };
}

/** The checkpoint index of a position (a multiple of the stride, or the text's end). */
const at = (scan: SuffixScan, pos: number): number => (pos >= scan.length ? Math.ceil(scan.length / scan.stride) : pos / scan.stride);

/**
 * Features of the window [start, end) into `out` (start a multiple of the stride; end too, or the
 * text's end); false when it has fewer than minScored scored characters.
 */
export function windowFeatures(scan: SuffixScan, start: number, end: number, minScored: number, out: Float64Array): boolean {
  const a = at(scan, start);
  const b = at(scan, end);
  const k = (scan.scored[b] as number) - (scan.scored[a] as number);
  if (k < minScored) return false;
  out[0] = ((scan.cost[b] as number) - (scan.cost[a] as number)) / k;
  out[1] = ((scan.caseSwitch[b] as number) - (scan.caseSwitch[a] as number)) / k;
  const l = (scan.letters[b] as number) - (scan.letters[a] as number);
  out[2] = l > 0 ? ((scan.letterCost[b] as number) - (scan.letterCost[a] as number)) / l : 0;
  out[3] = ((scan.symbols[b] as number) - (scan.symbols[a] as number)) / k;
  // smoothed towards 0.2 (about the rate in ordinary text) when a window has few pairs
  out[4] = ((scan.unseen[b] as number) - (scan.unseen[a] as number) + 0.4) / ((scan.pairs[b] as number) - (scan.pairs[a] as number) + 2);
  out[5] = ((scan.llr[b] as number) - (scan.llr[a] as number)) / k;
  return true;
}

/**
 * Calls visit(start, end) for the windows of `window` characters every `stride` characters over
 * [from, n): starts are multiples of the stride ≥ from; the last window ends at n (and may be shorter).
 */
export function forEachWindow(n: number, window: number, stride: number, from: number, visit: (start: number, end: number) => void): void {
  for (let s = Math.ceil(from / stride) * stride; s < n || s === 0; s += stride) {
    const e = Math.min(n, s + window);
    visit(s, e);
    if (e >= n) break;
  }
}
