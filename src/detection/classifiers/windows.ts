/**
 * Long texts are classified in windows so that every part of a 100 KB tool result is scanned, not just
 * its start, at a cost linear in its length.
 *
 * Windows are WINDOW_SIZE UTF-16 units long and consecutive windows overlap by WINDOW_OVERLAP units (so
 * an attack phrase up to 200 characters long that straddles a boundary is whole in one window). The
 * last window is aligned to the end of the text, so every window of a long text is full-size (the models
 * see the same amount of context everywhere). Window edges never split a surrogate pair.
 *
 * A text of n > WINDOW_SIZE units has ceil((n - WINDOW_OVERLAP) / (WINDOW_SIZE - WINDOW_OVERLAP)) windows;
 * 100 KB → 56 windows.
 *
 * Short tails are absorbed: when the next window would add at most WINDOW_SLACK new units (a 2,048-char
 * text: a second window of which 1,952 units repeat the first), the current window is extended to the
 * end of the text instead (windows are then at most WINDOW_SIZE + WINDOW_SLACK units). The features are
 * length-normalised, so a 10% longer window scores like a full one, and no text is scored twice for
 * the sake of a few dozen characters.
 */

export const WINDOW_SIZE = 2000;
export const WINDOW_OVERLAP = 200;
export const WINDOW_SLACK = 200;

export interface TextWindow {
  start: number;
  end: number;
}

export interface WindowOptions {
  size?: number;
  overlap?: number;
  /** Longest tail absorbed into the previous window (default WINDOW_SLACK, never above the step). */
  slack?: number;
}

export function windowSpans(length: number, text?: string, options: WindowOptions = {}): TextWindow[] {
  const size = options.size ?? WINDOW_SIZE;
  const overlap = options.overlap ?? WINDOW_OVERLAP;
  if (!(size > overlap && overlap >= 0)) throw new Error('window size must exceed the overlap');
  const step = size - overlap;
  const slack = Math.max(0, Math.min(options.slack ?? WINDOW_SLACK, step));
  if (length <= size + slack) return [{ start: 0, end: length }];
  const spans: TextWindow[] = [];
  for (let start = 0; ; start += step) {
    if (start + size >= length) {
      spans.push(adjust(Math.max(0, length - size), length, text));
      break;
    }
    if (length - (start + size) <= slack) {
      // The tail after this window is short: extend this window to the end instead of adding one.
      spans.push(adjust(start, length, text));
      break;
    }
    spans.push(adjust(start, start + size, text));
  }
  return spans;
}

/** Context compared either side of a window edge when locating it in a derived text. */
const EDGE_CONTEXT = 32;
/** How far from its expected position an edge's context is looked for. */
const EDGE_SEARCH = 256;

/**
 * Windows of `text` aligned with the windows of `base`, a text that `text` was derived from by local edits
 * (the canonical view of the normalised text: entities and escapes decoded, look-alikes folded, obfuscated
 * e-mails rewritten). Each of base's window edges is located in `text` by the characters around it, so a
 * window whose stretch no edit touched has exactly the content of base's window: the shared-call cache
 * (keyed by content) answers it instead of the model scoring it again. Measured on 100 KB of real
 * README prose with a few dozen escapes, 4–8 of 56 windows differ, so the second view costs a tenth of
 * the first instead of as much again.
 *
 * Alignment is an optimisation only: an edge that cannot be located (an edit right next to it) keeps
 * the position the previous edges imply, and whatever happens the windows cover `text` from 0 to its
 * end, each overlapping the one before by at least `overlap` units (a window is extended back when
 * needed), so nothing in `text` is scanned less than by windowSpans. Without `base`, windowSpans.
 */
export function alignedWindowSpans(text: string, base: string | undefined, options: WindowOptions = {}): TextWindow[] {
  const own = windowSpans(text.length, text, options);
  if (base === undefined || text === base || own.length === 1) return own;
  const baseSpans = windowSpans(base.length, base, options);
  if (baseSpans.length === 1) return own;
  const overlap = options.overlap ?? WINDOW_OVERLAP;
  let delta = 0;
  const locate = (p: number): number => {
    if (p <= 0) return 0;
    if (p >= base.length) return text.length;
    const from = Math.max(0, p - EDGE_CONTEXT);
    const left = p - from;
    const context = base.slice(from, Math.min(base.length, p + EDGE_CONTEXT));
    // Where the edges before this one put it, then where the length ratio puts it (after dense edits).
    for (const guess of [p + delta, Math.round((p * text.length) / base.length)]) {
      const at = Math.min(Math.max(guess, 0), text.length) - left;
      let found = at;
      if (at < 0 || !text.startsWith(context, at)) {
        const lo = Math.max(0, at - EDGE_SEARCH);
        const i = text.slice(lo, Math.max(lo, at + EDGE_SEARCH + context.length)).indexOf(context);
        found = i < 0 ? -1 : lo + i;
      }
      if (found >= 0) {
        delta = found + left - p;
        return found + left;
      }
    }
    return Math.min(Math.max(p + delta, 0), text.length);
  };
  const spans: TextWindow[] = [];
  for (let i = 0; i < baseSpans.length; i++) {
    const b = baseSpans[i] as TextWindow;
    let start = i === 0 ? 0 : locate(b.start);
    const end = i === baseSpans.length - 1 ? text.length : Math.min(Math.max(locate(b.end), start + 1), text.length);
    const prev = spans[spans.length - 1];
    if (prev) start = Math.max(0, Math.min(start, prev.end - overlap));
    // Edges that could not be located (texts too different) give windows that are out of order or too
    // long: then the text gets its own windows (nothing shared, nothing missed).
    if (prev && start <= prev.start) return own;
    if (end - start > (options.size ?? WINDOW_SIZE) + WINDOW_SLACK + overlap) return own;
    spans.push(adjust(start, end, text));
    if (end === text.length) break;
  }
  return spans;
}

/** Moves an edge that falls between a high and a low surrogate one unit outward. */
function adjust(start: number, end: number, text: string | undefined): TextWindow {
  if (!text) return { start, end };
  if (start > 0 && isLowSurrogate(text.charCodeAt(start))) start -= 1;
  if (end < text.length && isLowSurrogate(text.charCodeAt(end))) end += 1;
  return { start, end };
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/** The windows of `text` with their content. */
export function splitWindows(text: string, options: WindowOptions = {}): Array<TextWindow & { text: string }> {
  return windowSpans(text.length, text, options).map((w) => ({ ...w, text: text.slice(w.start, w.end) }));
}
