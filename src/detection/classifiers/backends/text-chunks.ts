/**
 * Splits text into windows of at most `maxChars` UTF-16 units that overlap by `overlap` units, so a
 * phrase cut by one boundary is whole in the next window. Never splits a surrogate pair. Used by the
 * http-classifier backend when the model's own input limit is shorter than the router's windows.
 */
export function splitIntoChunks(text: string, maxChars: number, overlap: number): string[] {
  if (!Number.isInteger(maxChars) || maxChars < 1) throw new Error('maxChars must be a positive integer');
  if (text.length <= maxChars) return [text];
  const step = Math.max(1, maxChars - Math.max(0, Math.min(overlap, maxChars - 1)));
  const chunks: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + maxChars);
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1)) && end - 1 > start) end -= 1;
    chunks.push(text.slice(start, end));
    if (end >= text.length) break;
    let next = start + step;
    if (next >= end) next = end;
    if (isLowSurrogate(text.charCodeAt(next)) && next > start + 1) next -= 1;
    start = next;
  }
  return chunks;
}

/** The default overlap for a given window size: an eighth of it, at most 200 characters. */
export function defaultOverlap(maxChars: number): number {
  return Math.min(200, Math.floor(maxChars / 8));
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
