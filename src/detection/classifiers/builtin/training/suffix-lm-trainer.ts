import {
  BOUNDARY,
  charSymbol,
  COST_SCALE,
  fingerprintOf,
  gramHash,
  MAX_ORDER,
  MAX_PROBES,
  SYMBOLS,
  UNSCORED,
  SuffixLm,
} from '../suffix-lm';
import { maskBlobs } from '../suffix-mask';
import { forEachWord, setBit, wordPairHash } from '../suffix-words';

/**
 * Builds the character LM of suffix-lm.ts from texts: counts n-grams of orders 1–MAX_ORDER over the same symbol
 * stream the scorer sees (blobs masked, other scripts unscored), computes stupid-backoff costs, keeps
 * orders 3–MAX_ORDER grams whose count reaches the order's minimum (most frequent first) in the hash table.
 * Deterministic: the texts' order and the count ties are the only inputs.
 */

export interface LmBuildOptions {
  tableBits: number;
  wordBits: number;
  pairBits: number;
  /** A word is common from this count on; a pair of common words is kept from pairMin on. */
  wordMin: number;
  pairMin: number;
  /** Minimum count to keep a gram, for orders 3, 4, … (one entry per hashed order). */
  minCounts: readonly number[];
  /** Stop filling the hash table at this load, so that a miss usually ends at an empty slot (speed). */
  maxLoad: number;
}

export interface LmBuildReport {
  characters: number;
  distinct: number[];
  kept: number[];
  dropped: number;
  load: number;
  commonWords: number;
  pairs: number;
}

/** Word and adjacent-word-pair counts (by hash) over the same masked stream the scorer sees. */
export function countWords(texts: Iterable<string>): { words: Map<number, number>; pairs: Map<number, number> } {
  const words = new Map<number, number>();
  const pairs = new Map<number, number>();
  let mask = new Uint8Array(1024);
  for (const text of texts) {
    if (mask.length < text.length) mask = new Uint8Array(text.length * 2);
    maskBlobs(text, mask);
    forEachWord(text, mask, (hash, _end, prev) => {
      words.set(hash, (words.get(hash) ?? 0) + 1);
      if (prev >= 0) {
        const p = wordPairHash(prev, hash);
        pairs.set(p, (pairs.get(p) ?? 0) + 1);
      }
    });
  }
  return { words, pairs };
}

function wordTables(texts: readonly string[], options: LmBuildOptions): { words: Uint8Array; pairs: Uint8Array; commonWords: number; kept: number } {
  const counts = countWords(texts);
  const words = new Uint8Array(1 << (options.wordBits - 3));
  const pairs = new Uint8Array(1 << (options.pairBits - 3));
  let commonWords = 0;
  let kept = 0;
  for (const [h, c] of counts.words) {
    if (c < options.wordMin) continue;
    setBit(words, (1 << options.wordBits) - 1, h);
    commonWords++;
  }
  for (const [h, c] of counts.pairs) {
    if (c < options.pairMin) continue;
    setBit(pairs, (1 << options.pairBits) - 1, h);
    kept++;
  }
  return { words, pairs, commonWords, kept };
}

export function countGrams(texts: Iterable<string>): { maps: Map<number, number>[]; characters: number } {
  const maps = Array.from({ length: MAX_ORDER + 1 }, () => new Map<number, number>());
  let characters = 0;
  let mask = new Uint8Array(1024);
  for (const text of texts) {
    if (mask.length < text.length) mask = new Uint8Array(text.length * 2);
    maskBlobs(text, mask);
    let history = BOUNDARY;
    let known = 1;
    for (let i = 0; i < text.length; i++) {
      const sym = mask[i] === 1 ? UNSCORED : charSymbol(text.charCodeAt(i));
      if (sym === UNSCORED) {
        history = BOUNDARY;
        known = 1;
        continue;
      }
      characters++;
      for (let order = 1; order <= Math.min(known + 1, MAX_ORDER); order++) {
        const packed = ((history & ((1 << (6 * (order - 1))) - 1)) << 6) | sym;
        const m = maps[order] as Map<number, number>;
        m.set(packed, (m.get(packed) ?? 0) + 1);
      }
      history = ((history << 6) | sym) & 0xffffff;
      if (known < 4) known++;
    }
  }
  return { maps, characters };
}

const quantise = (bits: number) => Math.max(1, Math.min(255, Math.round(bits * COST_SCALE)));

/** Context totals of an order: c(ctx) = Σ_w c(ctx w). */
function contextTotals(grams: Map<number, number>): Map<number, number> {
  const totals = new Map<number, number>();
  for (const [packed, c] of grams) totals.set(packed >>> 6, (totals.get(packed >>> 6) ?? 0) + c);
  return totals;
}

export function buildLm(texts: readonly string[], options: LmBuildOptions): { lm: SuffixLm; tables: Uint8Array; report: LmBuildReport } {
  const { maps, characters } = countGrams(texts);
  const slots = 1 << options.tableBits;
  const tables = new Uint8Array(SuffixLm.tableBytes(options.tableBits, options.wordBits, options.pairBits));
  const unigram = tables.subarray(0, SYMBOLS);
  const bigram = tables.subarray(SYMBOLS, SYMBOLS + SYMBOLS * SYMBOLS);
  const fingerprints = tables.subarray(SYMBOLS + SYMBOLS * SYMBOLS, SYMBOLS + SYMBOLS * SYMBOLS + slots);
  const costs = tables.subarray(SYMBOLS + SYMBOLS * SYMBOLS + slots);
  let total = 0;
  for (const c of (maps[1] as Map<number, number>).values()) total += c;
  for (const [sym, c] of maps[1] as Map<number, number>) unigram[sym] = quantise(-Math.log2(c / total));
  const biTotals = contextTotals(maps[2] as Map<number, number>);
  for (const [packed, c] of maps[2] as Map<number, number>) bigram[packed] = quantise(-Math.log2(c / (biTotals.get(packed >>> 6) as number)));
  const candidates: Array<{ order: number; packed: number; count: number; q: number }> = [];
  const kept = [0, 0, 0, 0, 0, 0];
  for (let order = 3; order <= MAX_ORDER; order++) {
    const grams = maps[order] as Map<number, number>;
    const totals = contextTotals(grams);
    const min = options.minCounts[order - 3] as number;
    for (const [packed, count] of grams) {
      if (count < min) continue;
      candidates.push({ order, packed, count, q: quantise(-Math.log2(count / (totals.get(packed >>> 6) as number))) });
    }
  }
  // lower orders first (they are the backoff floor), then the most frequent, then a fixed key order
  candidates.sort((a, b) => a.order - b.order || b.count - a.count || a.packed - b.packed);
  let dropped = 0;
  const shift = 32 - options.tableBits;
  const limit = Math.floor(options.maxLoad * slots);
  let placedCount = 0;
  for (const g of candidates) {
    if (placedCount >= limit) {
      dropped++;
      continue;
    }
    const h = gramHash(g.packed, g.order);
    let slot = h >>> shift;
    let placed = false;
    for (let p = 0; p < MAX_PROBES; p++) {
      if (fingerprints[slot] === 0) {
        fingerprints[slot] = fingerprintOf(h);
        costs[slot] = g.q;
        placed = true;
        break;
      }
      slot = (slot + 1) & (slots - 1);
    }
    if (placed) {
      kept[g.order] = (kept[g.order] as number) + 1;
      placedCount++;
    }
    else dropped++;
  }
  const distinct = maps.map((m) => m.size);
  const load = (candidates.length - dropped) / slots;
  const w = wordTables(texts, options);
  tables.set(w.words, SYMBOLS + SYMBOLS * SYMBOLS + 2 * slots);
  tables.set(w.pairs, SYMBOLS + SYMBOLS * SYMBOLS + 2 * slots + w.words.length);
  const lm = new SuffixLm(options.tableBits, options.wordBits, options.pairBits, tables);
  return { lm, tables, report: { characters, distinct, kept, dropped, load, commonWords: w.commonWords, pairs: w.kept } };
}
