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
