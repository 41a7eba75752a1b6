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

export class SseParser {
  private buffer = '';
  /** Where to look for the next line terminator. */
  private scan = 0;
  /** Start of the current line in the buffer. */
  private lineStart = 0;
  /** The last event ended with a CR at the end of the input: an LF first in the next chunk belongs to it. */
  private crEnded = false;
  private first = true;

  constructor(private readonly maxEventChars = 8 * 1024 * 1024) {}

  push(chunk: string): SseEvent[] {
    if (chunk.length === 0) return [];
    this.buffer += chunk;
    if (this.crEnded) {
      this.crEnded = false;
      if (this.buffer.startsWith('\n')) this.scan = this.lineStart = 1;
    }
    const events: SseEvent[] = [];
    for (let end = this.nextEventEnd(); end >= 0; end = this.nextEventEnd()) {
      events.push(this.parse(this.buffer.slice(0, end)));
      this.buffer = this.buffer.slice(end);
      this.scan = this.lineStart = 0;
    }
    if (this.buffer.length > this.maxEventChars) throw new SseFormatError('the upstream sent an oversized stream event');
    return events;
  }

  /** The input ended: the text after the last blank line, if any, as a last (incomplete) event. */
  end(): SseEvent[] {
    if (this.buffer.length === 0) return [];
    const raw = this.buffer;
    this.buffer = '';
    this.scan = this.lineStart = 0;
    return [this.parse(raw)];
  }

  /** Offset just past the blank line that ends the first event in the buffer, or -1. */
  private nextEventEnd(): number {
    const b = this.buffer;
    for (;;) {
      LINE_END.lastIndex = this.scan;
      const m = LINE_END.exec(b);
      if (!m) {
        this.scan = b.length;
        return -1;
      }
      const at = m.index;
      const blank = at === this.lineStart;
      let next = at + 1;
      if (b[at] === '\r') {
        if (next === b.length) {
          if (!blank) {
            this.scan = at; // CR or CRLF: known with the next chunk
            return -1;
          }
          this.crEnded = true;
          return next;
        }
        if (b[next] === '\n') next += 1;
      }
      this.scan = this.lineStart = next;
      if (blank) return next;
    }
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
