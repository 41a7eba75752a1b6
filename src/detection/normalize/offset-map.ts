/**
 * Exact offset maps between a transformed text and the text it was made from.
 *
 * A transformation (NFKC, invisible-character removal, confusable folding, entity decoding, e-mail
 * de-obfuscation, concatenating decoded segments) is recorded as an ordered list of pieces, each saying
 * "this stretch of the output came from that stretch of the source". `linear` pieces have equal lengths
 * on both sides and map offset for offset; the others map as a whole (a span touching any part of such
 * a piece maps onto the whole source stretch). Source stretches no piece covers were dropped; a span of
 * the output that spans a drop maps onto a source span that includes it.
 *
 * Offsets are UTF-16 code units (JavaScript string indices), end exclusive.
 */

export interface Span {
  start: number;
  end: number;
}

/** A text together with the map of its spans back to the original text the caller cares about. */
export interface MappedText {
  readonly text: string;
  /** True when `text` is the source itself and the map is the identity. */
  readonly identity: boolean;
  toOriginal(start: number, end: number): Span;
}

interface Piece {
  outStart: number;
  outLen: number;
  srcStart: number;
  srcLen: number;
  linear: boolean;
}

export function identityText(text: string): MappedText {
  return { text, identity: true, toOriginal: (start, end) => ({ start, end }) };
}

/**
 * Builds an output text piece by piece from a source text. Pieces must be appended in source order and
 * must not overlap in the source.
 */
export class MappedTextBuilder {
  private readonly parts: string[] = [];
  private readonly pieces: Piece[] = [];
  private outLen = 0;
  private changed = false;
  private srcCursor = 0;

  constructor(private readonly source: string) {}

  get length(): number {
    return this.outLen;
  }

  /** Copies source[start, end) unchanged. */
  keep(start: number, end: number): void {
    if (end <= start) return;
    this.noteGap(start);
    this.push({ outStart: this.outLen, outLen: end - start, srcStart: start, srcLen: end - start, linear: true });
    this.parts.push(start === 0 && end === this.source.length ? this.source : this.source.slice(start, end));
    this.srcCursor = end;
  }

  /**
   * Replaces source[start, end) with `text`. `linear` (only meaningful when the lengths are equal) maps
   * character for character, e.g. a one-to-one fold; otherwise the replacement maps as a whole.
   */
  replace(start: number, end: number, text: string, linear = false): void {
    this.noteGap(start);
    this.srcCursor = Math.max(this.srcCursor, end);
    if (text === this.source.slice(start, end)) {
      if (end > start) this.keep(start, end);
      return;
    }
    this.changed = true;
    if (text.length === 0) return;
    const isLinear = linear && text.length === end - start;
    this.push({ outStart: this.outLen, outLen: text.length, srcStart: start, srcLen: end - start, linear: isLinear });
    this.parts.push(text);
  }

  /** Inserts text that has no source (e.g. a separator); it maps to the empty span at source offset `at`. */
  insert(at: number, text: string): void {
    if (text.length === 0) return;
    this.changed = true;
    this.push({ outStart: this.outLen, outLen: text.length, srcStart: at, srcLen: 0, linear: false });
    this.parts.push(text);
  }

  /**
   * The result. `base` maps source offsets on to the original (omit when the source is the original);
   * when nothing changed and the whole source was kept, the base itself is returned.
   */
  build(base?: MappedText): MappedText {
    this.noteGap(this.source.length);
    const text = this.parts.length === 1 ? (this.parts[0] as string) : this.parts.join('');
    if (!this.changed && text === this.source) return base ?? identityText(text);
    const pieces = this.pieces;
    const sourceLength = this.source.length;
    const own = (start: number, end: number) => mapSpan(pieces, sourceLength, start, end);
    if (!base || base.identity) return { text, identity: false, toOriginal: own };
    return {
      text,
      identity: false,
      toOriginal: (start, end) => {
        const s = own(start, end);
        return base.toOriginal(s.start, s.end);
      },
    };
  }

  private noteGap(start: number): void {
    if (start > this.srcCursor) this.changed = true; // something was dropped
  }

  /** Appends a piece, merging it into the previous one when both are linear and contiguous on both sides. */
  private push(piece: Piece): void {
    this.outLen += piece.outLen;
    const prev = this.pieces[this.pieces.length - 1];
    if (prev && prev.linear && piece.linear && prev.srcStart + prev.srcLen === piece.srcStart) {
      prev.outLen += piece.outLen;
      prev.srcLen += piece.srcLen;
      return;
    }
    this.pieces.push(piece);
  }
}

/** The piece containing output offset `pos` (pieces are sorted and contiguous in the output). */
function findPiece(pieces: Piece[], pos: number): Piece | undefined {
  let lo = 0;
  let hi = pieces.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const piece = pieces[mid] as Piece;
    if (pos < piece.outStart) hi = mid - 1;
    else if (pos >= piece.outStart + piece.outLen) lo = mid + 1;
    else return piece;
  }
  return undefined;
}

function mapSpan(pieces: Piece[], sourceLength: number, start: number, end: number): Span {
  const first = findPiece(pieces, start);
  const srcStart = !first ? sourceLength : first.linear ? first.srcStart + (start - first.outStart) : first.srcStart;
  if (end <= start) return { start: srcStart, end: srcStart };
  const last = findPiece(pieces, end - 1);
  const srcEnd = !last
    ? sourceLength
    : last.linear
      ? last.srcStart + (end - 1 - last.outStart) + 1
      : last.srcStart + last.srcLen;
  return { start: srcStart, end: Math.max(srcStart, srcEnd) };
}
