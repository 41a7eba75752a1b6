import { foldLookalikes } from './normalize/confusables';
import type { MappedText } from './normalize/offset-map';
import { normalizeUnicode } from './normalize/unicode';

/**
 * Text canonicalisation before detection, so that disguised content is seen as what it reads as. The
 * pieces live in `normalize/`:
 *
 *   unicode.ts           NFKC, invisible characters (zero-width, bidi controls, tag block, variation
 *                        selectors) removed, lone surrogates → U+FFFD
 *   invisible-text.ts    text hidden in tag characters / variation-selector bytes decoded (canonical view)
 *   word-deobfuscate.ts  marks on every letter, letters with separators, leetspeak undone (canonical view)
 *   rot13.ts             lines that read as ROT13 of English, decoded (rot13 view)
 *   inline-decode.ts     HTML character references and URL percent-escapes decoded in place
 *   confusables.ts       Cyrillic / Greek look-alikes folded to Latin, other scripts' digits to ASCII
 *   email-deobfuscate.ts "john [at] example [dot] com" → "john@example.com"
 *   encoded-segments.ts  base64 / hex blobs found and decoded
 *   views.ts             the list of views (normalized, canonical, rot13, decoded) the engine scans
 *   offset-map.ts        the exact span maps back to the original text
 *
 * Digit separators ("4111 1111-1111 1111") are left to the digit detectors, which know their formats.
 * Every view maps spans back to UTF-16 offsets of the original text, which is what the API reports.
 */

export interface NormalizedText {
  readonly text: string;
  /** Maps a span of `text` [start, end) to the span of the original it came from. */
  toOriginal(start: number, end: number): { start: number; end: number };
}

/** NFKC + invisible-character removal, with the span map back to `original` (the `normalized` view). */
export function normalizeText(original: string): NormalizedText & MappedText {
  return normalizeUnicode(original);
}

/** The forms a deny / allow literal is matched in: normalized, and with look-alikes folded (canonical view). */
export function normalizeLiteral(literal: string): { normalized: string; folded: string } {
  const normalized = normalizeUnicode(literal).text;
  return { normalized, folded: foldLookalikes(normalized).text };
}

export { alignmentBase, buildViews, buildViewSet, canonicalize, MAX_DECODE_DEPTH, MAX_DECODED_SEGMENTS, type TextView, type ViewKind, type ViewSet } from './normalize/views';
export type { HiddenPayload } from './normalize/invisible-text';
export type { MappedText, Span } from './normalize/offset-map';
