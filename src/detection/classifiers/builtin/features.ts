import { isWordUnit } from './text-prep';

/**
 * Feature hashing for the builtin linear models: word uni/bi-grams and character n-grams of the
 * prepared text (text-prep.ts), each n-gram hashed (FNV-1a over UTF-16 units, murmur3 finaliser) into
 * one of 2^bits buckets. Per block (characters, words) the counts get sublinear TF (1 + ln count) and
 * the block is L2-normalised, then scaled by its block weight; the blocks are added (the sum of squared
 * block weights is 1, so the vector has unit norm up to bucket collisions).
 *
 * There is deliberately NO length feature: every block is length-normalised, so a 3 KB text and a
 * 300-character text with the same vocabulary profile get the same vector. (Jailbreaks in the training
 * data are long and benign prompts short; a raw length signal would be a shortcut.)
 *
 * Heuristic signals (heuristics.ts) are appended as dense features after the hashed space: index
 * 2^bits + i for signal i, value HEURISTIC_VALUE when the signal fires.
 */

export interface HashingParams {
  /** log2 of the number of hashed buckets. */
  bits: number;
  /** Mixed into every hash so unrelated models do not share collisions. */
  seed: number;
  /** Character n-gram lengths, inclusive range. */
  charMin: number;
  charMax: number;
  /** Word n-gram lengths: 1 = unigrams, 2 = uni + bigrams. */
  wordMax: number;
  charWeight: number;
  wordWeight: number;
  /**
   * Character n-grams keep punctuation and symbols (only whitespace runs fold to one space) instead of
   * folding every non-word run to a space: delimiters such as "###", "<|", "]:" then become features.
   */
  keepPunctuation: boolean;
}

export const DEFAULT_HASHING: HashingParams = Object.freeze({
  bits: 18,
  seed: 0x5eed2024,
  charMin: 3,
  charMax: 5,
  wordMax: 2,
  charWeight: Math.SQRT1_2,
  wordWeight: Math.SQRT1_2,
  keepPunctuation: false,
});

export const HEURISTIC_VALUE = 0.5;

/** A sparse vector: the first `length` entries of `index` / `value`. */
export interface SparseVector {
  index: Int32Array;
  value: Float32Array;
  length: number;
}

/** Counts saturate here (a bucket would need 65,535 n-grams of one window: never at 2,000 chars). */
const MAX_COUNT = 0xffff;
/** Sublinear TF 1 + ln(count), tabulated for the counts a window produces. */
const TF_TABLE = new Float64Array(1024);
for (let c = 1; c < TF_TABLE.length; c++) TF_TABLE[c] = c === 1 ? 1 : 1 + Math.log(c);

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const SPACE = 0x20;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d || c === 0x0c || c === 0x0b || c === 0xa0 || c === 0x3000;
}

/** ASCII unit → 1 word unit, 2 other non-space (kept by keepPunctuation), 0 space. */
const ASCII_UNIT = new Uint8Array(128);
for (let c = 0; c < 128; c++) ASCII_UNIT[c] = isWordUnit(c) ? 1 : isSpace(c) ? 0 : 2;

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Turns prepared text into a sparse vector. Not re-entrant (scratch buffers are reused between calls);
 * `extract` returns a fresh copy, so its result can be kept.
 */
export class FeatureHasher {
  readonly dimension: number;
  private readonly shift: number;
  /** Per-bucket counts of the current block (16-bit: half the cache footprint of a float array; saturates). */
  private readonly counts: Uint16Array;
  private readonly touched: Int32Array;
  private touchedCount = 0;
  /** Entries written so far by flushBlock into `scratch` (both blocks, before the heuristic features). */
  private outCount = 0;
  private readonly salts: Int32Array;
  /** Scratch: the character stream of charBlock; the TF values of flushBlock. */
  private units = new Int32Array(4096);
  /** Length of the unit stream charBlock wrote last. */
  private unitCount = 0;
  private tf = new Float64Array(4096);
  private readonly scratch: SparseVector = { index: new Int32Array(4096), value: new Float32Array(4096), length: 0 };

  /**
   * `generic` forces the general n-gram loop even for the settings that have an unrolled one (tests use
   * it as the reference the unrolled loops must match).
   */
  constructor(
    readonly params: HashingParams,
    readonly heuristicCount: number,
    private readonly generic = false,
  ) {
    const buckets = 1 << params.bits;
    this.dimension = buckets + heuristicCount;
    this.shift = 32 - params.bits;
    this.counts = new Uint16Array(buckets);
    this.touched = new Int32Array(buckets);
    // One salt per n-gram kind: char n (index n), word unigram (index 8), word bigram (index 9).
    this.salts = new Int32Array(10);
    for (let i = 0; i < this.salts.length; i++) this.salts[i] = fmix((params.seed ^ Math.imul(i + 1, 0x9e3779b1)) >>> 0) | 0;
  }

  /**
   * Features of `prepared`, with the heuristic signals at the given indices (0-based) set. A bucket that
   * both a character and a word n-gram fell into appears twice (once per block): every consumer is linear
   * in the vector (dot products, gradients, count sums), so that is the same as one summed entry, and it
   * spares a bucket-sized table of running sums (a random read-modify-write per entry).
   */
  extract(prepared: string, heuristicHits: readonly number[] = []): SparseVector {
    const v = this.extractScratch(prepared, heuristicHits);
    return { index: v.index.slice(0, v.length), value: v.value.slice(0, v.length), length: v.length };
  }

  /**
   * Like extract, but the result lives in scratch buffers that the next call overwrites (no allocation):
   * for scoring right away.
   */
  extractScratch(prepared: string, heuristicHits: readonly number[] = []): SparseVector {
    this.outCount = 0;
    this.charBlock(prepared);
    this.flushBlock(this.params.charWeight);
    this.wordBlock(this.unitCount);
    this.flushBlock(this.params.wordWeight);
    const v = this.scratch;
    const count = this.outCount;
    this.reserve(count + heuristicHits.length);
    const base = 1 << this.params.bits;
    for (let j = 0; j < heuristicHits.length; j++) {
      v.index[count + j] = base + (heuristicHits[j] as number);
      v.value[count + j] = HEURISTIC_VALUE;
    }
    v.length = count + heuristicHits.length;
    this.outCount = 0;
    return v;
  }

  /** Grows the scratch vector to hold `n` entries, keeping what it holds. */
  private reserve(n: number): void {
    const v = this.scratch;
    if (v.index.length >= n) return;
    const index = new Int32Array(n + 1024);
    const value = new Float32Array(n + 1024);
    index.set(v.index.subarray(0, this.outCount));
    value.set(v.value.subarray(0, this.outCount));
    v.index = index;
    v.value = value;
  }

  /** Character n-grams over the text with every non-word (or whitespace) run folded to one space, padded by spaces. */
  private charBlock(text: string): void {
    const { charMin, charMax } = this.params;
    if (this.units.length < text.length + 2) this.units = new Int32Array(text.length + 2 + 1024);
    const units = this.units;
    let n = 0;
    units[n++] = SPACE;
    let lastSpace = true;
    const keep = this.params.keepPunctuation;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x80 ? (ASCII_UNIT[c] as number) === 1 || (keep && ASCII_UNIT[c] === 2) : isWordUnit(c) || (keep && !isSpace(c))) {
        units[n++] = c;
        lastSpace = false;
      } else if (!lastSpace) {
        units[n++] = SPACE;
        lastSpace = true;
      }
    }
    if (!lastSpace) units[n++] = SPACE;
    this.unitCount = n;
    const salts = this.salts;
    const counts = this.counts;
    const touched = this.touched;
    const shift = this.shift;
    let touchedCount = this.touchedCount;
    if (charMin === 3 && charMax === 4 && !this.generic) {
      // The shipped setting, unrolled: the same hashes in the same order as the general loop below.
      const s3 = salts[3] as number;
      const s4 = salts[4] as number;
      for (let i = 0; i + 3 <= n; i++) {
        let h = Math.imul(FNV_OFFSET ^ (units[i] as number), FNV_PRIME);
        h = Math.imul(h ^ (units[i + 1] as number), FNV_PRIME);
        h = Math.imul(h ^ (units[i + 2] as number), FNV_PRIME);
        let b = fmix((h ^ s3) >>> 0) >>> shift;
        let c = counts[b] as number;
        if (c === 0) touched[touchedCount++] = b;
        if (c !== MAX_COUNT) counts[b] = c + 1;
        if (i + 4 > n) continue;
        h = Math.imul(h ^ (units[i + 3] as number), FNV_PRIME);
        b = fmix((h ^ s4) >>> 0) >>> shift;
        c = counts[b] as number;
        if (c === 0) touched[touchedCount++] = b;
        if (c !== MAX_COUNT) counts[b] = c + 1;
      }
      this.touchedCount = touchedCount;
      return;
    }
    if (charMin === 4 && charMax === 4 && !this.generic) {
      // Character 4-grams only (the shipped setting), unrolled: the same hashes as the general loop below.
      const s4 = salts[4] as number;
      for (let i = 0; i + 4 <= n; i++) {
        let h = Math.imul(FNV_OFFSET ^ (units[i] as number), FNV_PRIME);
        h = Math.imul(h ^ (units[i + 1] as number), FNV_PRIME);
        h = Math.imul(h ^ (units[i + 2] as number), FNV_PRIME);
        h = Math.imul(h ^ (units[i + 3] as number), FNV_PRIME);
        const b = fmix((h ^ s4) >>> 0) >>> shift;
        const c = counts[b] as number;
        if (c === 0) touched[touchedCount++] = b;
        if (c !== MAX_COUNT) counts[b] = c + 1;
      }
      this.touchedCount = touchedCount;
      return;
    }
    for (let i = 0; i + charMin <= n; i++) {
      let h = FNV_OFFSET;
      const end = Math.min(n, i + charMax);
      for (let j = i; j < end; j++) {
        h = Math.imul(h ^ (units[j] as number), FNV_PRIME);
        const len = j - i + 1;
        if (len < charMin) continue;
        const b = fmix((h ^ (salts[len] as number)) >>> 0) >>> shift;
        const c = counts[b] as number;
        if (c === 0) touched[touchedCount++] = b;
        if (c !== MAX_COUNT) counts[b] = c + 1;
      }
    }
    this.touchedCount = touchedCount;
  }

  /**
   * Word unigrams (and bigrams when wordMax is 2): maximal runs of word units, read from charBlock's unit
   * stream of the same text rather than from the text (fewer loads, no per-character calls): that stream is the
   * text with whitespace runs folded to one space (and, without keepPunctuation, every other non-word
   * run too) between spaces, so its maximal runs of word units are the text's, in the same order, and
   * the same n-grams are added in the same order.
   */
  private wordBlock(n: number): void {
    const uni = this.salts[8] as number;
    const bi = this.salts[9] as number;
    const bigrams = this.params.wordMax >= 2;
    const units = this.units;
    const counts = this.counts;
    const touched = this.touched;
    const shift = this.shift;
    let touchedCount = this.touchedCount;
    let prev = 0;
    let hasPrev = false;
    let h = FNV_OFFSET;
    let inWord = false;
    // units[n - 1] is a space (or the stream is just the leading space), so the last word is closed.
    for (let i = 0; i < n; i++) {
      const c = units[i] as number;
      if (c < 0x80 ? ASCII_UNIT[c] === 1 : isWordUnit(c)) {
        h = Math.imul(h ^ c, FNV_PRIME);
        inWord = true;
        continue;
      }
      if (!inWord) continue;
      const word = fmix(h >>> 0);
      let b = fmix((word ^ uni) >>> 0) >>> shift;
      let k = counts[b] as number;
      if (k === 0) touched[touchedCount++] = b;
      if (k !== MAX_COUNT) counts[b] = k + 1;
      if (bigrams && hasPrev) {
        b = fmix((Math.imul(prev ^ bi, FNV_PRIME) ^ word) >>> 0) >>> shift;
        k = counts[b] as number;
        if (k === 0) touched[touchedCount++] = b;
        if (k !== MAX_COUNT) counts[b] = k + 1;
      }
      prev = word;
      hasPrev = true;
      h = FNV_OFFSET;
      inWord = false;
    }
    this.touchedCount = touchedCount;
  }

  /** Sublinear TF, L2 normalisation of the block, scaled into the output; clears the counts. */
  private flushBlock(weight: number): void {
    const n = this.touchedCount;
    if (this.tf.length < n) this.tf = new Float64Array(n + 1024);
    const tf = this.tf;
    const counts = this.counts;
    const touched = this.touched;
    let norm = 0;
    for (let i = 0; i < n; i++) {
      const count = counts[touched[i] as number] as number;
      const v = count < TF_TABLE.length ? (TF_TABLE[count] as number) : 1 + Math.log(count);
      tf[i] = v;
      norm += v * v;
    }
    const scale = norm > 0 ? weight / Math.sqrt(norm) : 0;
    this.reserve(this.outCount + n);
    const index = this.scratch.index;
    const value = this.scratch.value;
    let at = this.outCount;
    for (let i = 0; i < n; i++) {
      const b = touched[i] as number;
      index[at] = b;
      // Math.fround: the same float32 value the count array held before this was optimised.
      value[at] = Math.fround(tf[i] as number) * scale;
      at++;
      counts[b] = 0;
    }
    this.outCount = at;
    this.touchedCount = 0;
  }
}
