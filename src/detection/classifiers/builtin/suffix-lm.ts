import { gunzipSync } from 'node:zlib';
import { z } from 'zod';

/**
 * A compact character n-gram language model of ordinary text (prose, chat, markdown, source code), used
 * by the adversarial-suffix signal (suffix-perplexity.ts). Built by `npm run train:suffix`.
 *
 * Alphabet (64 symbols, 6 bits): 0 = boundary (text start, a masked blob, a character of a script the
 * model does not score), 1 = space, 2 = newline, then printable ASCII with letters folded to lower case
 * and digits folded to '0'. Latin letters with diacritics fold to their base letter; typographic quotes,
 * dashes and spaces fold to ASCII. An n-gram of order ≤ 5 packs into one 30-bit integer; the model uses
 * order ≤ MAX_ORDER = 4 (a fifth order did not pay for its table space: it got no better separation).
 *
 * Probabilities: stupid backoff (Brants et al. 2007). cost(w | ctx) = -log2 c(ctx w) / c(ctx) for the
 * longest context whose n-gram was kept, plus BACKOFF_BITS per order backed off. Orders 1–2 are stored
 * directly (64 + 4096 bytes); orders 3–4 live in one open-addressed hash table of 8-bit fingerprints and
 * 8-bit quantised costs (cost = q / COST_SCALE bits), probed linearly up to MAX_PROBES slots.
 *
 * Word evidence (suffix-words.ts): a bitset of common words (2^wordBits bits) and a bitset of the word
 * pairs seen adjacent in the training text (2^pairBits bits), one hash each.
 */

export const SYMBOLS = 64;
export const BOUNDARY = 0;
/** The symbol for a character the model does not score (non-Latin scripts, emoji, symbols). */
export const UNSCORED = 255;
export const MAX_ORDER = 4;
export const COST_SCALE = 8;
export const MAX_PROBES = 4;
/** Stupid-backoff penalty: -log2(0.4). */
export const BACKOFF_BITS = 1.32;

const SYMBOL_LIMIT = 0x250;
const symbolTable = buildSymbolTable();

function buildSymbolTable(): Uint8Array {
  const table = new Uint8Array(SYMBOL_LIMIT).fill(UNSCORED);
  let next = 3;
  const ascii = new Uint8Array(128).fill(UNSCORED);
  for (let c = 33; c < 127; c++) {
    if (c >= 65 && c <= 90) continue; // upper case: folded below
    if (c >= 49 && c <= 57) continue; // 1-9: folded to 0
    ascii[c] = next++;
  }
  for (let c = 65; c <= 90; c++) ascii[c] = ascii[c + 32] as number;
  for (let c = 49; c <= 57; c++) ascii[c] = ascii[48] as number;
  ascii[32] = 1;
  ascii[9] = 1;
  ascii[13] = 1;
  ascii[10] = 2;
  ascii[12] = 2;
  if (next > SYMBOLS) throw new Error('alphabet overflow');
  table.set(ascii);
  table[0xa0] = 1;
  for (let c = 0xc0; c < SYMBOL_LIMIT; c++) {
    if (c === 0xd7 || c === 0xf7) continue;
    const base = String.fromCharCode(c).normalize('NFD').charCodeAt(0);
    if (base < 128 && /[A-Za-z]/.test(String.fromCharCode(base))) table[c] = ascii[base] as number;
  }
  const extra: Array<[number, string]> = [
    [0xdf, 's'], [0xe6, 'a'], [0xc6, 'a'], [0xf8, 'o'], [0xd8, 'o'], [0x153, 'o'], [0x152, 'o'], [0x131, 'i'], [0x142, 'l'], [0x141, 'l'], [0xf0, 'd'], [0xde, 't'], [0xfe, 't'], [0x111, 'd'],
    [0xab, '"'], [0xbb, '"'], [0xbf, '?'], [0xa1, '!'], [0xb7, '.'],
  ];
  for (const [c, s] of extra) table[c] = ascii[s.charCodeAt(0)] as number;
  return table;
}

/** The model symbol of a UTF-16 code unit (UNSCORED for anything the model does not score). */
export function charSymbol(code: number): number {
  if (code < SYMBOL_LIMIT) return symbolTable[code] as number;
  if (code >= 0x2000 && code <= 0x200a) return 1;
  switch (code) {
    case 0x2028: case 0x2029: return 2;
    case 0x202f: case 0x205f: case 0x3000: return 1;
    case 0x2010: case 0x2011: case 0x2012: case 0x2013: case 0x2014: case 0x2212: return symbolTable[45] as number;
    case 0x2018: case 0x2019: case 0x201a: case 0x2032: return symbolTable[39] as number;
    case 0x201c: case 0x201d: case 0x201e: case 0x2033: return symbolTable[34] as number;
    case 0x2026: case 0x2022: return symbolTable[46] as number;
    default: return UNSCORED;
  }
}

/** Mixes a packed n-gram and its order into a 32-bit hash (slot from the high bits, fingerprint from the low). */
export function gramHash(packed: number, order: number): number {
  let h = Math.imul(packed ^ Math.imul(order, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export const fingerprintOf = (hash: number): number => (hash & 0xff) | 1;

export const suffixLmSchema = z.object({
  format: z.literal('suffix-lm/1'),
  tableBits: z.number().int().min(8).max(22),
  wordBits: z.number().int().min(8).max(24),
  pairBits: z.number().int().min(8).max(24),
  /**
   * base64 of the gzip of: unigram (64) + bigram (4096) costs, fingerprints (2^tableBits), costs
   * (2^tableBits), common-word bits (2^wordBits / 8 bytes), word-pair bits (2^pairBits / 8 bytes).
   */
  tables: z.string(),
});
export type SuffixLmArtefact = z.infer<typeof suffixLmSchema>;

export class SuffixLm {
  readonly unigram: Uint8Array;
  readonly bigram: Uint8Array;
  readonly fingerprints: Uint8Array;
  readonly costs: Uint8Array;
  readonly words: Uint8Array;
  readonly pairs: Uint8Array;
  readonly shift: number;
  readonly mask: number;
  readonly wordMask: number;
  readonly pairMask: number;

  static tableBytes(tableBits: number, wordBits: number, pairBits: number): number {
    return SYMBOLS + SYMBOLS * SYMBOLS + 2 * (1 << tableBits) + (1 << (wordBits - 3)) + (1 << (pairBits - 3));
  }

  constructor(readonly tableBits: number, readonly wordBits: number, readonly pairBits: number, tables: Uint8Array) {
    const slots = 1 << tableBits;
    if (tables.length !== SuffixLm.tableBytes(tableBits, wordBits, pairBits)) throw new Error('suffix-lm: table size does not match the bit widths');
    this.unigram = tables.subarray(0, SYMBOLS);
    this.bigram = tables.subarray(SYMBOLS, SYMBOLS + SYMBOLS * SYMBOLS);
    this.fingerprints = tables.subarray(SYMBOLS + SYMBOLS * SYMBOLS, SYMBOLS + SYMBOLS * SYMBOLS + slots);
    const wordsAt = SYMBOLS + SYMBOLS * SYMBOLS + 2 * slots;
    this.costs = tables.subarray(SYMBOLS + SYMBOLS * SYMBOLS + slots, wordsAt);
    this.words = tables.subarray(wordsAt, wordsAt + (1 << (wordBits - 3)));
    this.pairs = tables.subarray(wordsAt + (1 << (wordBits - 3)));
    this.shift = 32 - tableBits;
    this.mask = slots - 1;
    this.wordMask = (1 << wordBits) - 1;
    this.pairMask = (1 << pairBits) - 1;
  }

  static fromArtefact(artefact: unknown): SuffixLm {
    const a = suffixLmSchema.parse(artefact);
    const buf = gunzipSync(Buffer.from(a.tables, 'base64'));
    return new SuffixLm(a.tableBits, a.wordBits, a.pairBits, new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength));
  }

  /** Quantised cost of the order-3..MAX_ORDER n-gram with this gramHash, or 0 when it was not kept. */
  lookup(h: number): number {
    const fp = fingerprintOf(h);
    let slot = h >>> this.shift;
    for (let p = 0; p < MAX_PROBES; p++) {
      const f = this.fingerprints[slot] as number;
      if (f === 0) return 0;
      if (f === fp) return this.costs[slot] as number;
      slot = (slot + 1) & this.mask;
    }
    return 0;
  }

  /**
   * Cost in bits of `sym` after the context `history` (the previous symbols, most recent in the low 6
   * bits; `known` = how many of them are real, 0–4).
   */
  cost(history: number, known: number, sym: number): number {
    const h4 = known >= 3 ? gramHash((((history & 0x3ffff) << 6) | sym), 4) : 0;
    const h3 = known >= 2 ? gramHash((((history & 0xfff) << 6) | sym), 3) : 0;
    return this.costHashed(h4, h3, history, known, sym);
  }

  /**
   * cost() given the gramHash of the order-4 and order-3 grams ending in `sym` (computed once when two
   * models score the same text).
   */
  costHashed(h4: number, h3: number, history: number, known: number, sym: number): number {
    let penalty = 0;
    if (known >= 3) {
      const q = this.lookup(h4);
      if (q !== 0) return q / COST_SCALE;
      penalty += BACKOFF_BITS;
    }
    if (known >= 2) {
      const q = this.lookup(h3);
      if (q !== 0) return q / COST_SCALE + penalty;
      penalty += BACKOFF_BITS;
    }
    if (known >= 1) {
      const q = this.bigram[((history & 63) << 6) | sym] as number;
      if (q !== 0) return q / COST_SCALE + penalty;
      penalty += BACKOFF_BITS;
    }
    const q = this.unigram[sym] as number;
    return (q !== 0 ? q / COST_SCALE : 255 / COST_SCALE) + penalty;
  }
}
