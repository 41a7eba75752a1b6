import { readFileSync } from 'node:fs';
import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/cjs/encodingParams/constants';

/** The library's split regex, sticky: a match must start where the previous one ended (see countTokens). */
const STICKY_SPLIT = new RegExp(O200K_TOKEN_SPLIT_REGEX.source, 'uy');

/**
 * o200k_base token counts from a compact rank table: the same counts as gpt-tokenizer's `countTokens`
 * (special-token strings counted as ordinary text), at a fraction of its memory. gpt-tokenizer keeps
 * the 200,000 ranks as a 2.2 MB JavaScript source of string literals, a string array and a Map of
 * strings: ~14 MB of heap once built and ~55 MB of resident memory in every thread that loads it (the
 * parser's memory and the heap the build leaves committed). Here the ranks are read from the library's
 * own `o200k_base.tiktoken` data file into three typed arrays (token bytes, their offsets, an
 * open-addressing hash table): ~5 MB, no JavaScript compiled.
 *
 * The algorithm is gpt-tokenizer's, step for step, including its quirks, so counts are identical
 * (test/unit/shared/o200k-compact.test.ts compares both on every rank and on mixed text):
 * - the text is split with the library's own o200k pattern; a piece that is a token counts 1;
 * - otherwise the piece's UTF-8 bytes are merged pairwise, lowest rank first (ties: leftmost), and the
 *   parts left are the count;
 * - a byte slice is looked up as the library does: valid UTF-8 is decoded (which drops one leading
 *   U+FEFF) and looked up among tokens that are valid UTF-8 text; invalid UTF-8 by its exact bytes
 *   among the others. Tokens that begin with U+FEFF are therefore never found by text, as there;
 * - a piece with a lone surrogate is never a whole token (the library's string lookup misses it) and is
 *   merged from its UTF-8 encoding (U+FFFD for the surrogate).
 */

const INF = 0x7fffffff;
const BOM0 = 0xef;
const BOM1 = 0xbb;
const BOM2 = 0xbf;

export interface RankTable {
  /** Token bytes, concatenated in rank order. */
  bytes: Uint8Array;
  /** Rank r's bytes are bytes[offsets[r] .. offsets[r + 1]). */
  offsets: Uint32Array;
  /** 1 when rank r is valid UTF-8 text found by text lookups (the library's string-keyed tokens). */
  text: Uint8Array;
  /** Open addressing: rank + 1, 0 = empty. */
  slots: Int32Array;
  mask: number;
}

const B64 = new Int8Array(128).fill(-1);
for (let i = 0; i < 64; i++) B64['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.charCodeAt(i)] = i;

function hashOf(bytes: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ (bytes[i] as number), 16777619);
  return h >>> 0;
}

/** gpt-tokenizer's isValidUTF8 on bytes[from..to): strict UTF-8 (no overlongs, surrogates, > U+10FFFF). */
function validUtf8(b: Uint8Array, from: number, to: number): boolean {
  let i = from;
  while (i < to) {
    const b1 = b[i] as number;
    let n: number;
    let cp: number;
    if (b1 <= 0x7f) {
      i++;
      continue;
    } else if ((b1 & 0xe0) === 0xc0) {
      if (b1 <= 0xc1) return false;
      n = 2;
      cp = b1 & 0x1f;
    } else if ((b1 & 0xf0) === 0xe0) {
      n = 3;
      cp = b1 & 0x0f;
    } else if ((b1 & 0xf8) === 0xf0) {
      if (b1 > 0xf4) return false;
      n = 4;
      cp = b1 & 0x07;
    } else return false;
    if (i + n > to) return false;
    for (let j = 1; j < n; j++) {
      const c = b[i + j] as number;
      if ((c & 0xc0) !== 0x80) return false;
      cp = (cp << 6) | (c & 0x3f);
    }
    if ((n === 3 && cp < 0x800) || (n === 4 && cp < 0x10000)) return false;
    if (cp >= 0xd800 && cp <= 0xdfff) return false;
    if (cp > 0x10ffff) return false;
    i += n;
  }
  return true;
}

/** Parses a `.tiktoken` file (`<base64 token> <rank>` per line) into a RankTable. */
export function parseTiktoken(data: Buffer): RankTable {
  const bytes = new Uint8Array(Math.ceil((data.length * 3) / 4));
  const starts: number[] = [];
  const ends: number[] = [];
  let maxRank = -1;
  let w = 0;
  let i = 0;
  while (i < data.length) {
    const lineStart = i;
    // base64 field
    const start = w;
    let acc = 0;
    let bits = 0;
    while (i < data.length && data[i] !== 32 && data[i] !== 10) {
      const c = data[i++] as number;
      if (c === 61) continue; // '='
      const v = c < 128 ? (B64[c] as number) : -1;
      if (v < 0) throw new Error(`o200k_base.tiktoken: bad base64 at byte ${i - 1}`);
      acc = (acc << 6) | v;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        bytes[w++] = (acc >> bits) & 0xff;
      }
    }
    if (i >= data.length || data[i] !== 32) {
      if (i === lineStart) {
        i++; // empty line
        continue;
      }
      throw new Error(`o200k_base.tiktoken: no rank at byte ${i}`);
    }
    i++;
    let rank = 0;
    while (i < data.length && data[i] !== 10 && data[i] !== 13) rank = rank * 10 + ((data[i++] as number) - 48);
    while (i < data.length && data[i] !== 10) i++;
    i++;
    starts[rank] = start;
    ends[rank] = w;
    if (rank > maxRank) maxRank = rank;
  }
  const n = maxRank + 1;
  // Rank order, contiguous: offsets[r]..offsets[r+1] (a missing rank is empty and never looked up).
  const packed = new Uint8Array(w);
  const offsets = new Uint32Array(n + 1);
  let p = 0;
  for (let r = 0; r < n; r++) {
    offsets[r] = p;
    const s = starts[r];
    if (s === undefined) continue;
    packed.set(bytes.subarray(s, ends[r] as number), p);
    p += (ends[r] as number) - s;
  }
  offsets[n] = p;
  const text = new Uint8Array(n);
  let size = 1;
  while (size < n * 2) size <<= 1;
  const slots = new Int32Array(size);
  const mask = size - 1;
  for (let r = 0; r < n; r++) {
    const from = offsets[r] as number;
    const to = offsets[r + 1] as number;
    if (starts[r] === undefined) continue;
    const bom = to - from >= 3 && packed[from] === BOM0 && packed[from + 1] === BOM1 && packed[from + 2] === BOM2;
    text[r] = validUtf8(packed, from, to) && !bom ? 1 : 0;
    let h = hashOf(packed, from, to) & mask;
    while (slots[h] !== 0) h = (h + 1) & mask;
    slots[h] = r + 1;
  }
  return { bytes: packed, offsets, text, slots, mask };
}

/** The rank of bytes b[from..to) among tokens of the given kind (text or not), or INF. */
function find(t: RankTable, b: Uint8Array, from: number, to: number, text: number): number {
  const len = to - from;
  let h = hashOf(b, from, to) & t.mask;
  for (;;) {
    const slot = t.slots[h] as number;
    if (slot === 0) return INF;
    const r = slot - 1;
    const s = t.offsets[r] as number;
    if ((t.offsets[r + 1] as number) - s === len && t.text[r] === text) {
      let k = 0;
      while (k < len && t.bytes[s + k] === b[from + k]) k++;
      if (k === len) return r;
    }
    h = (h + 1) & t.mask;
  }
}

/** gpt-tokenizer's getBpeRankFromBytes. */
function rankOfBytes(t: RankTable, b: Uint8Array, from: number, to: number, ascii: boolean): number {
  if (ascii) return find(t, b, from, to, 1);
  if (!validUtf8(b, from, to)) return find(t, b, from, to, 0);
  // The library decodes with a TextDecoder, which drops one leading byte-order mark.
  if (to - from >= 3 && b[from] === BOM0 && b[from + 1] === BOM1 && b[from + 2] === BOM2) from += 3;
  return from === to ? INF : find(t, b, from, to, 1);
}

export class CompactO200k {
  private scratch = new Uint8Array(1024);
  private starts = new Int32Array(1025);
  private ranks = new Int32Array(1025);
  private readonly encoder = new TextEncoder();
  /** Pieces that are not one token → their count (the library's merge cache, smaller: bounded entries of ≤ 64 characters). */
  private readonly cache = new Map<string, number>();

  constructor(
    private readonly table: RankTable,
    private readonly cacheEntries = 4096,
  ) {}

  /**
   * Tokens of `text` (special-token strings count as ordinary text). The pieces are the library's: its split
   * regex matches at every position (each character is a letter, mark, number, space or something else, and
   * every alternative takes at least one), so its matches are back to back and a sticky copy finds the same
   * ones. `test` on the sticky copy gives each piece's end without a match array, and one-character ASCII
   * pieces (one token each) are never sliced out: the count of a chat turn allocated ~11 KB on the gateway's
   * main thread with `matchAll` (bench:c1-gc's allocation profile, bench/RESULTS.md).
   */
  countTokens(text: string): number {
    let n = 0;
    let start = 0;
    const split = STICKY_SPLIT;
    split.lastIndex = 0;
    while (start < text.length) {
      if (!split.test(text) || split.lastIndex <= start) return n + this.countFrom(text, start);
      const end = split.lastIndex;
      n += end - start === 1 && text.charCodeAt(start) < 0x80 ? 1 : this.countPiece(text.slice(start, end));
      start = end;
    }
    return n;
  }

  /** The library's way from `start` on (never taken for well-formed JavaScript strings; kept in case a piece ever is not found at its position). */
  private countFrom(text: string, start: number): number {
    let n = 0;
    O200K_TOKEN_SPLIT_REGEX.lastIndex = start;
    for (let m = O200K_TOKEN_SPLIT_REGEX.exec(text); m !== null; m = O200K_TOKEN_SPLIT_REGEX.exec(text)) n += this.countPiece(m[0]);
    O200K_TOKEN_SPLIT_REGEX.lastIndex = 0;
    return n;
  }

  private countPiece(piece: string): number {
    if (piece.length === 1 && piece.charCodeAt(0) < 0x80) return 1;
    const cached = this.cache.get(piece);
    if (cached !== undefined) return cached;
    let ascii = true;
    let wellFormed = true;
    for (let i = 0; i < piece.length; i++) {
      const c = piece.charCodeAt(i);
      if (c < 0x80) continue;
      ascii = false;
      if (c >= 0xd800 && c <= 0xdbff) {
        const d = piece.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) i++;
        else wellFormed = false;
      } else if (c >= 0xdc00 && c <= 0xdfff) wellFormed = false;
    }
    if (this.scratch.length < piece.length * 3) this.grow(piece.length * 3);
    const len = ascii ? this.ascii(piece) : this.encoder.encodeInto(piece, this.scratch).written;
    const b = this.scratch;
    // The library's whole-piece lookup is by string: it misses lone surrogates and a leading U+FEFF.
    if (wellFormed && !(len >= 3 && b[0] === BOM0 && b[1] === BOM1 && b[2] === BOM2) && find(this.table, b, 0, len, 1) !== INF) return 1;
    const count = this.merge(len, ascii);
    if (piece.length <= 64) {
      if (this.cache.size >= this.cacheEntries) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(piece, count);
    }
    return count;
  }

  private ascii(piece: string): number {
    const b = this.scratch;
    for (let i = 0; i < piece.length; i++) b[i] = piece.charCodeAt(i);
    return piece.length;
  }

  private grow(bytes: number): void {
    this.scratch = new Uint8Array(bytes);
    this.starts = new Int32Array(bytes + 1);
    this.ranks = new Int32Array(bytes + 1);
  }

  /** gpt-tokenizer's bytePairMerge over scratch[0..n): the number of parts left. */
  private merge(n: number, ascii: boolean): number {
    const t = this.table;
    const b = this.scratch;
    const starts = this.starts;
    const ranks = this.ranks;
    let parts = n + 1; // length of starts (and of ranks)
    for (let i = 0; i <= n; i++) {
      starts[i] = i;
      ranks[i] = i < n - 1 ? rankOfBytes(t, b, i, i + 2, ascii) : INF;
    }
    const rankAt = (i: number) => (i + 2 < parts ? rankOfBytes(t, b, starts[i] as number, starts[i + 2] as number, ascii) : INF);
    while (parts > 1) {
      let lowest = INF;
      let at = -1;
      for (let i = 0; i < parts - 1; i++) {
        const r = ranks[i] as number;
        if (r < lowest) {
          lowest = r;
          at = i;
        }
      }
      if (lowest === INF || at === -1) break;
      starts.copyWithin(at + 1, at + 2, parts);
      ranks.copyWithin(at, at + 1, parts);
      parts--;
      ranks[at] = rankAt(at);
      if (at > 0) ranks[at - 1] = rankAt(at - 1);
    }
    return parts - 1;
  }
}

let shared: CompactO200k | undefined;

/** The process's (thread's) o200k counter, loaded on first use (~0.2 s, ~5 MB). */
export function o200kCounter(): CompactO200k {
  shared ??= new CompactO200k(parseTiktoken(readFileSync(require.resolve('gpt-tokenizer/data/o200k_base.tiktoken'))));
  return shared;
}
