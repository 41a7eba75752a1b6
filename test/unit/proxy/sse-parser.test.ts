import { createParser } from 'eventsource-parser';
import { SseFormatError, SseParser, type SseEvent } from '../../../src/gateway/proxy/sse';

/** Runs a whole stream through the parser in the given pieces. */
function parseAll(pieces: string[]): SseEvent[] {
  const p = new SseParser();
  const events = pieces.flatMap((piece) => p.push(piece));
  return [...events, ...p.end()];
}

/** What a client following the standard reads (the library alone on the whole stream, BOM stripped as a decoder would). */
function standardData(stream: string): string[] {
  const out: string[] = [];
  const parser = createParser({ onEvent: (e) => out.push(e.data) });
  parser.feed(stream.replace(/^\uFEFF/, ''));
  parser.feed('\n'); // the library waits for the character after a final CR; the end of the stream is not an LF
  return out;
}

const datas = (events: SseEvent[]) => events.filter((e) => e.data !== null).map((e) => e.data);

const json1 = '{"choices":[{"index":0,"delta":{"content":"caf\u00e9 \ud83d\ude00"}}]}';
const json2 = '{"choices":[{"index":0,"delta":{"content":" two"}}]}';
const framings: Array<[string, string]> = [
  ['LF', '\n'],
  ['CRLF', '\r\n'],
  ['CR', '\r'],
];

describe('SSE framing by the event-stream rules', () => {
  describe.each(framings)('%s line endings', (_name, nl) => {
    const stream = `: keep-alive${nl}${nl}data: ${json1}${nl}${nl}event: message${nl}data:${json2}${nl}${nl}data: [DONE]${nl}${nl}`;

    it('reads every event, and the raw texts are exactly the input', () => {
      const events = parseAll([stream]);
      expect(events.map((e) => e.raw).join('')).toBe(stream);
      expect(datas(events)).toEqual([json1, json2, '[DONE]']);
      expect(events.find((e) => e.data === json2)?.type).toBe('message');
    });

    it('gives the same events and bytes when split at every offset, and at every pair of offsets', () => {
      for (let i = 0; i <= stream.length; i++) {
        const events = parseAll([stream.slice(0, i), stream.slice(i)]);
        expect(events.map((e) => e.raw).join('')).toBe(stream);
        expect(datas(events)).toEqual([json1, json2, '[DONE]']);
      }
      for (let i = 0; i <= stream.length; i += 3) {
        for (let j = i; j <= stream.length; j += 2) {
          const events = parseAll([stream.slice(0, i), stream.slice(i, j), stream.slice(j)]);
          expect(events.map((e) => e.raw).join('')).toBe(stream);
          expect(datas(events)).toEqual([json1, json2, '[DONE]']);
        }
      }
    });

    it('ignores one or two leading byte order marks and keeps them in the raw text', () => {
      for (const bom of ['\uFEFF', '\uFEFF\uFEFF']) {
        const events = parseAll([bom + stream]);
        expect(events[0]!.raw.startsWith(bom)).toBe(true);
        expect(events.map((e) => e.raw).join('')).toBe(bom + stream);
        expect(datas(events)).toEqual([json1, json2, '[DONE]']);
      }
    });

    it('reads a last event without its blank line (and one without any line end) as an event', () => {
      for (const cut of [`data: [DONE]${nl}`, 'data: [DONE]']) {
        const s = `data: ${json1}${nl}${nl}${cut}`;
        const events = parseAll([s]);
        expect(events.map((e) => e.raw).join('')).toBe(s);
        expect(datas(events)).toEqual([json1, '[DONE]']);
      }
    });

    it('joins multi-line data with LF, as the standard does', () => {
      const s = `data: a${nl}data${nl}data:  b${nl}${nl}`;
      expect(datas(parseAll([s]))).toEqual(['a\n\n b']);
      expect(datas(parseAll([s]))).toEqual(standardData(s));
    });
  });

  it('releases each event as soon as its blank line is complete, even one ending in CR (an LF after it is its CRLF)', () => {
    const p = new SseParser();
    expect(datas(p.push('data: a\r\r'))).toEqual(['a']);
    // The LF completes the CRLF of the blank line above: it is not a second, empty line.
    const next = p.push('\ndata: b\r\n\r\n');
    expect(datas(next)).toEqual(['b']);
    expect(next[0]!.raw).toBe('\ndata: b\r\n\r\n');
    expect(p.end()).toEqual([]);
  });

  it('waits for the character after a CR that ends a field line (CRLF split across chunks is one line end)', () => {
    const p = new SseParser();
    expect(p.push('data: a\r')).toEqual([]);
    expect(p.push('\n')).toEqual([]);
    expect(datas(p.push('data: b\r\n\r\n'))).toEqual(['a\nb']);
  });

  it('agrees with the standard parser on mixed line endings, comments, unknown fields and retry', () => {
    const s = 'retry: 10\r\n: comment\rid: 7\nfoo: bar\r\ndata: x\r\rdata: y\n\r\n\ndata: z\r\n\r\n';
    const events = parseAll([s]);
    expect(events.map((e) => e.raw).join('')).toBe(s);
    expect(datas(events)).toEqual(standardData(s));
    expect(datas(events)).toEqual(['x', 'y', 'z']);
  });

  it('throws on an event longer than the bound (the relay fails closed)', () => {
    const p = new SseParser(100);
    expect(() => p.push(`data: ${'x'.repeat(200)}`)).toThrow(SseFormatError);
    const q = new SseParser(100);
    expect(() => q.push('data: a\r'.repeat(30))).toThrow(SseFormatError); // CR lines, no blank line
  });

  it('keeps every byte of a stream that carries no event at all', () => {
    const s = ': only\r\n: comments\n';
    const events = parseAll([s]);
    expect(events.map((e) => e.raw).join('')).toBe(s);
    expect(datas(events)).toEqual([]);
  });

  it('searches each character once however the input is cut: a 6 MB event in 64 KB chunks (linear, not a rescan per chunk)', () => {
    const body = `{"x":"${'a'.repeat(6 * 1024 * 1024)}"}`;
    const stream = `: hi\r\n\r\ndata: ${body}\r\n\r\ndata: [DONE]\n\n`;
    const p = new SseParser();
    const events: SseEvent[] = [];
    let chunks = 0;
    for (let i = 0; i < stream.length; i += 64 * 1024, chunks++) events.push(...p.push(stream.slice(i, i + 64 * 1024)));
    events.push(...p.end());
    expect(events.map((e) => e.raw).join('')).toBe(stream);
    expect(datas(events)).toEqual([body, '[DONE]']);
    expect(chunks).toBeGreaterThan(90);
    // Every character searched at most once (a rescan of the pending event per chunk: ~300 M).
    expect(p.scannedChars).toBeLessThanOrEqual(stream.length);
    expect(p.scannedChars).toBeGreaterThan(stream.length - 10);
  });

  it('searches each character once when fed one character at a time, with CR, LF and CRLF split everywhere', () => {
    const s = `\uFEFFdata: a\r\r\ndata: b\r\n\r\n: c\n\ndata: d\r\rdata: e\n\n`;
    const p = new SseParser();
    const events = [...[...s].flatMap((ch) => p.push(ch)), ...p.end()];
    expect(events.map((e) => e.raw).join('')).toBe(s);
    expect(datas(events)).toEqual(standardData(s));
    expect(p.scannedChars).toBeLessThanOrEqual(s.length);
  });
});
