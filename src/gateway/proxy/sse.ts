import { createParser, type EventSourceMessage } from 'eventsource-parser';

/**
 * Incremental Server-Sent Events framing for a relay that must release exactly the bytes it parsed.
 *
 * Feed decoded text as it arrives; get back whole events: the exact original text of each (its lines
 * and the blank line that ends it, so the concatenation of every `raw` is the input) and what a
 * client following the HTML standard's event-stream rules reads from it (`data`).
 *
 * - Framing (where an event ends) follows the standard's line rules: a line ends at CRLF, LF or a
 *   lone CR; a blank line ends an event. A CR at the end of the input so far is a line end on its
 *   own only once the next character is known not to be an LF (or it ends a blank line: then the
 *   event ends there either way and a following LF is the rest of that CRLF).
 * - Fields (data lines joined with LF, one space after the colon dropped, comments, `data` without a
 *   colon, unknown fields ignored) are parsed by `eventsource-parser`, fed one framed event at a time.
 *   It must dispatch at most one event per framed event: two would mean the framing disagrees with
 *   the standard, and that is an error (the caller fails closed) rather than text released unread.
 * - A leading U+FEFF (byte order mark) is ignored, as the standard says (also a second one, as a
 *   decoder that strips the UTF-8 BOM and then the event-stream parser would); its bytes stay in `raw`.
 * - At the end of the input, text after the last blank line is one last event, parsed as if a
 *   blank line followed: a lenient client reads it, so it is parsed and scanned too.
 * - Bounded: an event longer than `maxEventChars` is an error (a broken or hostile upstream).
 */
export interface SseEvent {
  /** The event's text exactly as received (lines and terminators), to release unchanged. */
  raw: string;
  /** The event's data (data lines joined with LF), or null when the event dispatches nothing (comments, retry, empty). */
  data: string | null;
  /** The `event:` field, when set. */
  type?: string;
}

/** The stream is not a well-formed event stream (oversized event, framing disagreement): never release it. */
export class SseFormatError extends Error {}

const LINE_END = /[\r\n]/g;
const LEADING_BOMS = /^\uFEFF{1,2}/;

/**
 * Linear time however the input is cut: each chunk is searched for line terminators once, from where
 * the last search stopped, and the text of an event still incomplete is kept as a list of pieces,
 * joined once when the event ends (never one growing string searched again per chunk: a 6 MB event in
 * 64 KB chunks took seconds that way).
 */
export class SseParser {
  /** Text of the event in progress, before the current chunk (no event end in it). */
  private pieces: string[] = [];
  private pendingChars = 0;
  /** The position is at the start of a line (a line terminator, or the start of the event, came last). */
  private atLineStart = true;
  /** The last character seen was a CR ending a line: an LF right after it is the rest of that CRLF. */
  private afterCr = false;
  private first = true;
  /** Characters searched for line terminators, all chunks together (linear in the input: see sse-parser.test.ts). */
  scannedChars = 0;

  constructor(private readonly maxEventChars = 8 * 1024 * 1024) {}

  push(chunk: string): SseEvent[] {
    if (chunk.length === 0) return [];
    const events: SseEvent[] = [];
    /** Start, in this chunk, of the event in progress. */
    let from = 0;
    let at = 0;
    if (this.afterCr) {
      this.afterCr = false;
      if (chunk.charCodeAt(0) === 0x0a) at = 1; // the LF of a CRLF split across chunks
    }
    for (;;) {
      LINE_END.lastIndex = at;
      const m = LINE_END.exec(chunk);
      if (!m) {
        this.scannedChars += chunk.length - at;
        if (at < chunk.length) this.atLineStart = false; // a line continues into the next chunk
        break;
      }
      const found = m.index;
      this.scannedChars += found + 1 - at;
      const blank = this.atLineStart && found === at;
      let next = found + 1;
      if (chunk.charCodeAt(found) === 0x0d) {
        // CR or CRLF; a CR last in the chunk: an LF first in the next one is the rest of it.
        if (next === chunk.length) this.afterCr = true;
        else if (chunk.charCodeAt(next) === 0x0a) next += 1;
      }
      this.atLineStart = true;
      at = next;
      if (blank) {
        events.push(this.parse(this.take(chunk.slice(from, next))));
        from = next;
      }
    }
    if (from < chunk.length) {
      const rest = from === 0 ? chunk : chunk.slice(from);
      this.pieces.push(rest);
      this.pendingChars += rest.length;
    }
    if (this.pendingChars > this.maxEventChars) throw new SseFormatError('the upstream sent an oversized stream event');
    return events;
  }

  /** The input ended: the text after the last blank line, if any, as a last (incomplete) event. */
  end(): SseEvent[] {
    if (this.pendingChars === 0) return [];
    const raw = this.take('');
    this.atLineStart = true;
    this.afterCr = false;
    return [this.parse(raw)];
  }

  /** The event in progress (the pieces kept so far, then `last`), and a fresh one after it. */
  private take(last: string): string {
    const raw = this.pieces.length === 0 ? last : this.pieces.join('') + last;
    this.pieces = [];
    this.pendingChars = 0;
    return raw;
  }

  private parse(raw: string): SseEvent {
    const text = this.first ? raw.replace(LEADING_BOMS, '') : raw;
    this.first = false;
    const dispatched: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (e) => dispatched.push(e) });
    parser.feed(text);
    parser.feed('\n\n'); // ends a trailing CR line, or the last event of a stream without its blank line
    if (dispatched.length > 1) throw new SseFormatError('the upstream stream could not be framed');
    const event = dispatched[0];
    return { raw, data: event ? event.data : null, ...(event?.event !== undefined ? { type: event.event } : {}) };
  }
}
