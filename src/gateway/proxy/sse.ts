/**
 * Incremental Server-Sent Events framing: feed raw bytes as they arrive, get complete events back
 * (the exact original bytes of each event, including its blank-line terminator, and its data field).
 * Bounded: an event larger than `maxEventBytes` is an error (a broken or hostile upstream).
 */
export interface SseEvent {
  raw: string;
  /** The joined `data:` lines, or null for events without data (comments, retry). */
  data: string | null;
}

export class SseParser {
  private buffer = '';
  constructor(private readonly maxEventBytes = 8 * 1024 * 1024) {}

  push(chunk: string): SseEvent[] {
    this.buffer += chunk;
    const events: SseEvent[] = [];
    for (;;) {
      const m = /\r?\n\r?\n/.exec(this.buffer);
      if (!m) break;
      const end = m.index + m[0].length;
      const raw = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end);
      events.push({ raw, data: dataOf(raw) });
    }
    if (this.buffer.length > this.maxEventBytes) throw new Error('upstream sent an oversized stream event');
    return events;
  }

  /** What is left when the upstream ends without a final blank line. */
  rest(): SseEvent | null {
    if (this.buffer.trim().length === 0) return null;
    const raw = this.buffer;
    this.buffer = '';
    return { raw, data: dataOf(raw) };
  }
}

function dataOf(raw: string): string | null {
  const lines = raw.split(/\r?\n/).filter((l) => l.startsWith('data:'));
  if (lines.length === 0) return null;
  return lines.map((l) => (l.startsWith('data: ') ? l.slice(6) : l.slice(5))).join('\n');
}
