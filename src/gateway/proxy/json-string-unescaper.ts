/**
 * Incremental decoding of the string literals of a JSON document that arrives in fragments: streamed
 * tool-call arguments (`{"card":"\u0034\u0035…"}` split anywhere, even inside an escape). The output
 * is the document with every string's escapes resolved — the characters the tool receives after
 * JSON.parse — and everything else as sent (quotes, structure, numbers, whitespace). An escape split
 * across fragments is held until it is complete, and so is a high surrogate until its low half
 * arrives (a detection stream is UTF-8: half a pair would become U+FFFD). Invalid escapes are passed
 * through as written; the input need not be valid JSON (a model's broken arguments are still scanned).
 */
const SIMPLE: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const HEX = /^[0-9a-fA-F]$/;
const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;

export class JsonStringUnescaper {
  private inString = false;
  /** An escape begun but not complete: `\`, or `\u` and the hex digits so far. */
  private escape = '';
  /** A high surrogate waiting for its low half. */
  private high = '';

  /** Decodes the next fragment; returns the decoded text that is complete so far. */
  write(fragment: string): string {
    let out = '';
    let i = 0;
    while (i < fragment.length) {
      const ch = fragment[i]!;
      if (!this.inString) {
        if (ch === '"') this.inString = true;
        out += ch;
      } else if (this.escape === '') {
        if (ch === '\\') this.escape = ch;
        else if (ch === '"') {
          out += this.flushHigh() + ch;
          this.inString = false;
        } else out += this.unit(ch);
      } else if (this.escape === '\\') {
        if (ch === 'u') this.escape = '\\u';
        else {
          out += this.unit(SIMPLE[ch] ?? `\\${ch}`);
          this.escape = '';
        }
      } else if (HEX.test(ch)) {
        this.escape += ch;
        if (this.escape.length === 6) {
          out += this.unit(String.fromCharCode(parseInt(this.escape.slice(2), 16)));
          this.escape = '';
        }
      } else {
        // `\u` with fewer than four hex digits: not an escape; the character is read again as text.
        out += this.unit(this.escape);
        this.escape = '';
        continue;
      }
      i += 1;
    }
    return out;
  }

  /** The end of the document: whatever was held back (an unfinished escape, a lone high surrogate). */
  end(): string {
    const rest = this.flushHigh() + this.escape;
    this.escape = '';
    return rest;
  }

  private flushHigh(): string {
    const h = this.high;
    this.high = '';
    return h;
  }

  /** Appends decoded text, holding a trailing high surrogate back until the next unit. */
  private unit(text: string): string {
    let s = this.flushHigh() + text;
    const last = s.charCodeAt(s.length - 1);
    if (isHigh(last)) {
      this.high = s.slice(-1);
      s = s.slice(0, -1);
    }
    return s;
  }
}
