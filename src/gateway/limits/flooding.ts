import { deflateRawSync } from 'node:zlib';

/**
 * Token flooding: input padded with the same token or short n-gram repeated far beyond anything natural
 * ("hello hello hello …", 30 000 × "a", one sentence pasted 500 times), sent to burn tokens or push the
 * instructions out of the context window.
 *
 * Rule: the text is cut into 4 096-character spans; a span that deflate (level 1, raw) compresses at
 * least 32:1 is flooding. Natural prose compresses ~2.5:1, source code ~3:1, JSON arrays and logs
 * 5–20:1 (measured: 18:1 for pretty-printed arrays of identical objects and near-identical log
 * lines); floods 40–200:1. Units repeated with a period up to roughly 150 characters are caught; a
 * whole paragraph pasted many times is not (it compresses like ordinary repetitive data). Texts under
 * 2 048 characters are never flagged; the first MAX_SCANNED characters are examined.
 */

export const FLOOD_SPAN_CHARS = 4096;
export const FLOOD_MIN_CHARS = 2048;
export const FLOOD_MAX_RATIO = 32;
export const FLOOD_MAX_SCANNED = 1_048_576;

export interface FloodFinding {
  /** Character offset of the span in the examined text. */
  offset: number;
  /** Its compression ratio (uncompressed / compressed bytes). */
  ratio: number;
}

function ratioOf(span: string): number {
  const bytes = Buffer.from(span, 'utf8');
  return bytes.length / deflateRawSync(bytes, { level: 1 }).length;
}

/** The first span of `text` that looks like token flooding, or null. */
export function findTokenFlooding(text: string): FloodFinding | null {
  const length = Math.min(text.length, FLOOD_MAX_SCANNED);
  if (length < FLOOD_MIN_CHARS) return null;
  for (let start = 0; start < length; start += FLOOD_SPAN_CHARS) {
    // A short tail is examined as the last full span of the text instead (overlapping the previous one).
    const from = length - start < FLOOD_MIN_CHARS ? Math.max(0, length - FLOOD_SPAN_CHARS) : start;
    const ratio = ratioOf(text.slice(from, Math.min(from + FLOOD_SPAN_CHARS, length)));
    if (ratio >= FLOOD_MAX_RATIO) return { offset: from, ratio: Math.round(ratio * 10) / 10 };
    if (from !== start) break;
  }
  return null;
}
