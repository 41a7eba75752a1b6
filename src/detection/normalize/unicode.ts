import { identityText, MappedTextBuilder, type MappedText } from './offset-map';

/**
 * Unicode canonicalisation, the first step of every view:
 *
 *   - NFKC (compatibility composition: full-width letters, ligatures, mathematical alphanumerics,
 *     circled and super-/subscript digits become their plain forms),
 *   - removal of invisible characters (INVISIBLE below: zero-width characters, bidi controls, the tag
 *     block, variation selectors, fillers), which can be spliced into a word without changing how it
 *     reads,
 *   - lone surrogates replaced by U+FFFD (same length), so RE2 (UTF-8 inside) and JS agree on offsets.
 *
 * NFKC is applied per segment (a code point plus the combining marks that follow it), which is what makes
 * the offset map exact. It equals whole-string NFKC except for the rare compositions between two starters
 * (e.g. conjoining Hangul jamo), which stay decomposed. ASCII stretches are copied without inspection.
 */

/** Code points that are removed: they are invisible, or carry no meaning a detector could need. */
export function isInvisible(cp: number): boolean {
  if (cp < 0x00ad) return false;
  if (cp === 0x00ad) return true; // soft hyphen
  if (cp === 0x034f) return true; // combining grapheme joiner
  if (cp === 0x061c) return true; // Arabic letter mark (bidi)
  if (cp === 0x115f || cp === 0x1160) return true; // Hangul choseong / jungseong fillers
  if (cp === 0x17b4 || cp === 0x17b5) return true; // Khmer inherent vowels (invisible)
  if (cp >= 0x180b && cp <= 0x180f) return true; // Mongolian free variation selectors, vowel separator
  if (cp >= 0x200b && cp <= 0x200f) return true; // ZWSP, ZWNJ, ZWJ, LRM, RLM
  if (cp >= 0x202a && cp <= 0x202e) return true; // bidi embeddings and overrides
  if (cp >= 0x2060 && cp <= 0x2064) return true; // word joiner, invisible operators
  if (cp >= 0x2066 && cp <= 0x206f) return true; // bidi isolates, deprecated format characters
  if (cp === 0x3164 || cp === 0xffa0) return true; // Hangul fillers
  if (cp >= 0xfe00 && cp <= 0xfe0f) return true; // variation selectors
  if (cp === 0xfeff) return true; // zero width no-break space / BOM
  if (cp >= 0x1bca0 && cp <= 0x1bca3) return true; // shorthand format controls
  if (cp >= 0xe0000 && cp <= 0xe007f) return true; // tag block (invisible "ASCII smuggling")
  if (cp >= 0xe0100 && cp <= 0xe01ef) return true; // variation selectors supplement
  return false;
}

/** Finds the next character beyond ASCII. */
const NON_ASCII = /[^\x00-\x7f]/g;

/** True when the text is pure ASCII (most texts are): its UTF-8 length equals its length (fast, native). */
export function isAscii(text: string): boolean {
  return Buffer.byteLength(text, 'utf8') === text.length;
}
/** Combining marks following a base character (sticky, used at a position). */
const MARKS = /\p{M}+/uy;

/** Results of single-code-point NFKC, cached: most non-ASCII text repeats a small set of characters. */
const NFKC_CACHE = new Map<number, string>();
const NFKC_CACHE_MAX = 8192;

function nfkcOfCodePoint(cp: number, piece: string): string {
  const cached = NFKC_CACHE.get(cp);
  if (cached !== undefined) return cached;
  const normalized = piece.normalize('NFKC');
  if (NFKC_CACHE.size < NFKC_CACHE_MAX) NFKC_CACHE.set(cp, normalized);
  return normalized;
}

/**
 * NFKC + invisible removal + lone-surrogate repair of `source`, mapped back through `base` (the map of
 * `source` to the original; omit when `source` is the original).
 */
export function normalizeUnicode(source: string, base?: MappedText): MappedText {
  if (isAscii(source)) return base ?? identityText(source);
  const builder = new MappedTextBuilder(source);
  let i = 0;
  NON_ASCII.lastIndex = 0;
  while (i < source.length) {
    NON_ASCII.lastIndex = i;
    const found = NON_ASCII.exec(source);
    let next = found ? found.index : source.length;
    // A combining mark composes with the ASCII letter before it ("e" + U+0301 → "é"): start there.
    if (found && next > i && startsWithMark(source, next)) next -= 1;
    if (next > i) builder.keep(i, next);
    if (!found) break;
    i = normalizeSegment(source, next, builder);
  }
  NON_ASCII.lastIndex = 0;
  return builder.build(base);
}

/** Handles the non-ASCII segment starting at `start`; returns the offset after it. */
function normalizeSegment(source: string, start: number, builder: MappedTextBuilder): number {
  const cp = source.codePointAt(start) as number;
  let end = start + (cp > 0xffff ? 2 : 1);
  if (isInvisible(cp)) return end; // dropped
  if (cp >= 0xd800 && cp <= 0xdfff) {
    builder.replace(start, end, '\ufffd', true); // lone surrogate
    return end;
  }
  MARKS.lastIndex = end;
  if (end < source.length && source.charCodeAt(end) >= 0x300 && MARKS.test(source)) end = MARKS.lastIndex;
  MARKS.lastIndex = 0;
  const piece = source.slice(start, end);
  const single = end - start === (cp > 0xffff ? 2 : 1);
  const normalized = single ? nfkcOfCodePoint(cp, piece) : stripInvisible(piece).normalize('NFKC');
  if (normalized === piece) builder.keep(start, end);
  else builder.replace(start, end, normalized, piece.length === 1 && normalized.length === 1);
  return end;
}

function startsWithMark(source: string, at: number): boolean {
  if (source.charCodeAt(at) < 0x300) return false;
  MARKS.lastIndex = at;
  const mark = MARKS.test(source);
  MARKS.lastIndex = 0;
  return mark;
}

/** Removes invisible code points from a (short) segment, e.g. a variation selector among combining marks. */
function stripInvisible(piece: string): string {
  let out = '';
  for (const ch of piece) if (!isInvisible(ch.codePointAt(0) as number)) out += ch;
  return out;
}
