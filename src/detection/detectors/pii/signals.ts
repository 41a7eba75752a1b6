/**
 * Small helpers shared by the numeric PII detectors (credit card, SSN, IBAN, IP address, phone number):
 * character classes, the Luhn checksum, digit-group extraction from a separated number, context-word
 * scoring and abort checks. Everything here is linear in its input.
 *
 * Why these detectors use JavaScript RegExp and not RE2. Their patterns are fixed (never user input) and
 * written so that V8's backtracking engine stays linear: every repetition is either bounded or, once the
 * next character is known, has exactly one way to continue (a separator class disjoint from digits, then
 * a digit), and unbounded runs only start where a run starts (a look-behind such as `(?<![0-9])`), so no
 * position is re-walked more than a constant number of times. Each detector's unit tests scan megabytes
 * of the worst input for its pattern (digit walls, "1.1.1…", ":::") under a time limit. Measured on 1 MB of
 * prose, RE2 through node-re2 was 5-30x slower here: it converts the text to UTF-8 once per pattern and
 * pays ~3 µs per exec() call across the native boundary, while V8 scans these patterns at 0.5-3 GB/s.
 *
 * Context words are matched the same way: escaped literal alternatives between look-arounds (no nested
 * quantifiers), on a bounded window (CONTEXT_WINDOW characters each side of a span).
 */

/** Characters looked at on each side of a finding for context words. */
export const CONTEXT_WINDOW = 40;

/** Check the abort signal every this many candidates. */
export const ABORT_CHECK_EVERY = 256;

/** Findings kept per detector per call (the engine caps at the same number). */
export const MAX_FINDINGS = 1000;

export function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/** The character code at `i`, or -1 outside the string. */
export function codeAt(text: string, i: number): number {
  return i >= 0 && i < text.length ? text.charCodeAt(i) : -1;
}

export function isAsciiLetter(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

/** [A-Za-z0-9_] */
export function isWordChar(code: number): boolean {
  return isDigit(code) || isAsciiLetter(code) || code === 0x5f;
}

/** [A-Za-z0-9] */
export function isAlnum(code: number): boolean {
  return isDigit(code) || isAsciiLetter(code);
}

export function isHexDigit(code: number): boolean {
  return isDigit(code) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);
}

/** The ASCII digits of `s`, in order. */
export function digitsOf(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (isDigit(c)) out += s[i];
  }
  return out;
}

/** Luhn (mod 10) checksum over a string of ASCII digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 0x30;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** A run of contiguous ASCII digits inside a separated number, with UTF-16 offsets into the text. */
export interface DigitGroup {
  start: number;
  end: number;
  /** True when the separator before this group (if any) contains a line break. */
  afterLineBreak: boolean;
  /** True when the separator before this group (if any) contains a dot. */
  afterDot: boolean;
}

/**
 * Splits `text[start, end)` (digits separated by non-digits) into its digit groups. The caller's pattern
 * decides which separators are allowed; this only records where the digits are.
 */
export function digitGroups(text: string, start: number, end: number): DigitGroup[] {
  const groups: DigitGroup[] = [];
  let i = start;
  let sawBreak = false;
  let sawDot = false;
  while (i < end) {
    const c = text.charCodeAt(i);
    if (!isDigit(c)) {
      if (c === 0x0a || c === 0x0d) sawBreak = true;
      else if (c === 0x2e) sawDot = true;
      i++;
      continue;
    }
    const g = i;
    while (i < end && isDigit(text.charCodeAt(i))) i++;
    groups.push({ start: g, end: i, afterLineBreak: sawBreak, afterDot: sawDot });
    sawBreak = false;
    sawDot = false;
  }
  return groups;
}

/**
 * Case-insensitive whole-word matcher for a list of context words or phrases. A word matches when it is
 * not glued to another letter or digit on either side ("cc" matches "cc#" and "CC:", not "accept").
 */
export class ContextWords {
  private readonly re: RegExp;
  private readonly all: RegExp;

  constructor(words: readonly string[]) {
    const alternatives = [...words]
      .sort((a, b) => b.length - a.length)
      .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '[\\s_-]?'));
    const source = `(?<![a-z0-9])(?:${alternatives.join('|')})(?![a-z0-9])`;
    this.re = new RegExp(source, 'i');
    this.all = new RegExp(source, 'gi');
  }

  /**
   * Every occurrence in text[from, to) as [start, end) pairs in text order, judged against the whole
   * text (so "discard" never yields "card" at a window edge). For scoring many spans of one region.
   */
  hits(text: string, from: number, to: number): ContextHits {
    return new ContextHits(this.wholeWords(text, Math.max(0, from), Math.min(text.length, to), Infinity));
  }

  /** True when one of the words occurs in `text`. */
  test(text: string): boolean {
    return this.re.test(text);
  }

  /**
   * True when one of the words occurs within `window` characters before `start` or after `end`. Whole words
   * of the text, not of the window: a window that starts inside "paragraph" or ends inside "calligraphy"
   * does not yield "ph" or "call" (it did, and a 10-digit request number after "…the paragraph below in
   * plain\nGood morning (request 1234501820)" read as a phone number at 0.85).
   */
  near(text: string, start: number, end: number, window = CONTEXT_WINDOW): boolean {
    return this.occursIn(text, Math.max(0, start - window), start) || this.occursIn(text, end, Math.min(text.length, end + window));
  }

  /** True when one of the words occurs within `window` characters before `start` (whole words of the text, as `near`). */
  before(text: string, start: number, window = CONTEXT_WINDOW): boolean {
    return this.occursIn(text, Math.max(0, start - window), start);
  }

  /** Whether a word lies inside text[from, to) and is not glued to a letter or digit of the text around it. */
  private occursIn(text: string, from: number, to: number): boolean {
    return this.wholeWords(text, from, to, 1).length > 0;
  }

  /**
   * Up to `limit` occurrences in text[from, to) (0 <= from, to <= text.length), judged against the whole text.
   * Only a match at the region's edges can be glued to the text around it (the pattern's own lookarounds
   * see nothing past the region): "card" of a region starting inside "discard". The search then goes on
   * from that match's next character, so a whole word starting inside it (the "security card" of a region
   * starting inside "antisocial security card") still counts.
   */
  private wholeWords(text: string, from: number, to: number, limit: number): Array<[number, number]> {
    const region = text.slice(from, to);
    const found: Array<[number, number]> = [];
    this.all.lastIndex = 0;
    for (let m = this.all.exec(region); m; m = this.all.exec(region)) {
      const s = from + m.index;
      const e = s + m[0].length;
      if (isAlnum(codeAt(text, s - 1)) || isAlnum(codeAt(text, e))) {
        this.all.lastIndex = m.index + 1;
        continue;
      }
      found.push([s, e]);
      if (found.length >= limit) break;
    }
    this.all.lastIndex = 0;
    return found;
  }
}

/** Context-word occurrences of a region (see ContextWords.hits). */
export class ContextHits {
  constructor(private readonly found: ReadonlyArray<readonly [number, number]>) {}

  /** True when a word lies within `window` characters before `start` or after `end`. */
  near(start: number, end: number, window = CONTEXT_WINDOW): boolean {
    const found = this.found;
    if (found.length === 0) return false;
    // First hit starting at or after start - window (hits are in text order and do not overlap).
    let lo = 0;
    let hi = found.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((found[mid] as readonly [number, number])[0] < start - window) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; k < found.length; k++) {
      const [s, e] = found[k] as readonly [number, number];
      if (s > end + window) break;
      if (e <= start || (s >= end && e <= end + window)) return true;
    }
    return false;
  }
}

/** Counts candidates and throws the signal's reason every ABORT_CHECK_EVERY of them once it is aborted. */
export class AbortTicker {
  private count = 0;

  constructor(private readonly signal: AbortSignal) {
    signal.throwIfAborted();
  }

  tick(): void {
    if (++this.count % ABORT_CHECK_EVERY === 0) this.signal.throwIfAborted();
  }
}
