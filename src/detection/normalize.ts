/**
 * Text canonicalisation before detection, so that trivially disguised content (full-width letters,
 * ligatures, zero-width characters spliced into a word) is seen as what it reads as:
 *
 *   - Unicode NFKC (compatibility composition),
 *   - removal of zero-width / invisible format characters,
 *   - lone surrogates replaced by U+FFFD (same length), so RE2 (UTF-8 inside) and JS agree on offsets.
 *
 * Detectors run on the normalised text; `toOriginal` maps a span back to UTF-16 offsets of the original
 * text, which is what the API reports.
 *
 * NFKC is applied per segment (a code point plus the combining marks that follow it), which is what
 * makes the offset map exact. It equals whole-string NFKC except for the rare compositions between two
 * starters (e.g. conjoining Hangul jamo), which stay decomposed; later normalisation work can refine it.
 */

/** Zero-width and invisible format characters that are dropped. */
const ZERO_WIDTH = new Set<number>([
  0x00ad, // soft hyphen
  0x180e, // Mongolian vowel separator
  0x200b, // zero width space
  0x200c, // zero width non-joiner
  0x200d, // zero width joiner
  0x2060, // word joiner
  0x2061, // function application
  0x2062, // invisible times
  0x2063, // invisible separator
  0x2064, // invisible plus
  0xfeff, // zero width no-break space / BOM
]);

const NON_ASCII = /[^\x00-\x7f]/;
const MARK = /^\p{M}$/u;

export interface NormalizedText {
  readonly text: string;
  /** Maps a span of `text` [start, end) to the span of the original it came from. */
  toOriginal(start: number, end: number): { start: number; end: number };
}

/**
 * One contiguous piece of the mapping. `linear` pieces have equal lengths on both sides and map
 * offset-for-offset; the others (a segment NFKC changed in length) map as a whole.
 */
interface Run {
  normStart: number;
  normLen: number;
  origStart: number;
  origLen: number;
  linear: boolean;
}

export function normalizeText(original: string): NormalizedText {
  if (!NON_ASCII.test(original)) return identity(original);
  const runs: Run[] = [];
  const out: string[] = [];
  let normLen = 0;
  let i = 0;
  while (i < original.length) {
    const cp = original.codePointAt(i) as number;
    const cpLen = cp > 0xffff ? 2 : 1;
    if (ZERO_WIDTH.has(cp)) {
      i += cpLen;
      continue;
    }
    const segStart = i;
    i += cpLen;
    while (i < original.length) {
      const next = original.codePointAt(i) as number;
      if (next < 0x300 || !MARK.test(String.fromCodePoint(next))) break;
      i += next > 0xffff ? 2 : 1;
    }
    const piece = original.slice(segStart, i);
    const normalized = normalizePiece(piece, cp);
    if (normalized.length === 0) continue;
    const linear = normalized === piece || (piece.length === 1 && normalized.length === 1);
    const run = { normStart: normLen, normLen: normalized.length, origStart: segStart, origLen: piece.length, linear };
    pushRun(runs, run);
    out.push(normalized);
    normLen += normalized.length;
  }
  const text = out.join('');
  if (text === original) return identity(original);
  return { text, toOriginal: (start, end) => mapSpan(runs, original.length, start, end) };
}

function normalizePiece(piece: string, firstCodePoint: number): string {
  if (firstCodePoint < 0x80 && piece.length === 1) return piece;
  if (firstCodePoint >= 0xd800 && firstCodePoint <= 0xdfff) return '\ufffd'; // lone surrogate
  return piece.normalize('NFKC');
}

function identity(text: string): NormalizedText {
  return { text, toOriginal: (start, end) => ({ start, end }) };
}

/** Appends a run, merging it into the previous one when both are linear and contiguous on both sides. */
function pushRun(runs: Run[], run: Run): void {
  const prev = runs[runs.length - 1];
  if (
    prev &&
    prev.linear &&
    run.linear &&
    prev.origStart + prev.origLen === run.origStart
  ) {
    prev.normLen += run.normLen;
    prev.origLen += run.origLen;
    return;
  }
  runs.push(run);
}

/** Index of the run containing normalised offset `pos` (runs are sorted and contiguous in `text`). */
function findRun(runs: Run[], pos: number): Run | undefined {
  let lo = 0;
  let hi = runs.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const run = runs[mid] as Run;
    if (pos < run.normStart) hi = mid - 1;
    else if (pos >= run.normStart + run.normLen) lo = mid + 1;
    else return run;
  }
  return undefined;
}

function mapSpan(runs: Run[], originalLength: number, start: number, end: number): { start: number; end: number } {
  const first = findRun(runs, start);
  const origStart = !first
    ? originalLength
    : first.linear
      ? first.origStart + (start - first.normStart)
      : first.origStart;
  if (end <= start) return { start: origStart, end: origStart };
  const last = findRun(runs, end - 1);
  const origEnd = !last
    ? originalLength
    : last.linear
      ? last.origStart + (end - 1 - last.normStart) + 1
      : last.origStart + last.origLen;
  return { start: origStart, end: Math.max(origStart, origEnd) };
}
