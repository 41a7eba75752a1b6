/**
 * Text preparation shared by the builtin model's featuriser and its heuristics, at training and at
 * inference time (the same code on both sides, so there is no train/serve skew).
 *
 * The engine already hands detectors NFKC-normalised text without invisible characters, with a
 * confusable-folded and a base64/hex-decoded view beside it (see src/detection/normalize/). What is left
 * to undo here is evasion the engine's views do not address:
 *
 *   - casing: everything is lower-cased;
 *   - letter spacing: "i g n o r e", "i.g.n.o.r.e", "i-g-n-o-r-e" (three or more single letters or digits
 *     joined by one separator) become "ignore";
 *   - runs of spaces and tabs become one space (so phrase patterns need not allow for padding).
 *
 * The heuristics also look at a "squashed" form (letters and digits only, common leetspeak digits mapped
 * to letters) for their longest, most specific phrases, where word boundaries do not matter.
 */

/** Three or more single letters/digits separated by one space, dot, dash, underscore or asterisk. */
const SPACED_LETTERS = /(?<![\p{L}\p{N}])(?:[\p{L}\p{N}][ .\-_*]){2,}[\p{L}\p{N}](?![\p{L}\p{N}])/gu;
const BLANKS = /[ \t\u00a0]{2,}/g;
const SEPARATORS = /[ .\-_*]/g;

/** Lower-cased, with spaced-out letters joined. The output is what features and heuristics read. */
export function prepareText(text: string): string {
  const lower = text.toLowerCase();
  const from = spacedRunFrom(lower);
  const joined =
    from < 0 ? lower : lower.slice(0, from) + lower.slice(from).replace(SPACED_LETTERS, (run) => run.replace(SEPARATORS, ''));
  return joined.replace(BLANKS, ' ');
}

/**
 * Where SPACED_LETTERS can first match, or -1 when it cannot: one pass over the code points looking for
 * its necessary start (a non-letter/digit or the start, then letter/digit, separator, letter/digit,
 * separator, letter/digit). Every match begins with such a start, so none begins before the first one:
 * the regex only needs to run from there (from the unit before it, which then serves its lookbehind
 * exactly as in the whole text). Most texts have no such run.
 */
function spacedRunFrom(text: string): number {
  let reg = 0; // 2 bits per code point, newest lowest: 0 other, 1 letter/digit, 2 separator
  const starts = [0, 0, 0, 0, 0]; // start indices of the last five code points (ring)
  let k = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    starts[k++ % 5] = i;
    let cls: number;
    if (c < 0x80) cls = ASCII_CLASS[c] as number;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && isLow(text.charCodeAt(i + 1))) {
      cls = isLetterOrDigit(text.codePointAt(i) as number) ? 1 : 0;
      i++;
    } else cls = isLetterOrDigit(c) ? 1 : 0;
    reg = ((reg << 2) | cls) & 0xfff;
    // oldest first: (not 1) 1 2 1 2 1
    if ((reg & 0x3ff) === 0x199 && reg >>> 10 !== 1) {
      const first = starts[k % 5] as number; // the candidate's first letter, 5 code points back
      return first > 0 ? first - 1 : 0;
    }
  }
  return -1;
}

function isLow(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/** ASCII unit → 1 letter or digit, 2 separator of SPACED_LETTERS, 0 other. */
const ASCII_CLASS = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  ASCII_CLASS[c] = /[\p{L}\p{N}]/u.test(ch) ? 1 : /[ .\-_*]/.test(ch) ? 2 : 0;
}

const LETTER_OR_DIGIT = /^[\p{L}\p{N}]$/u;
/** BMP unit → 0 not yet known, 1 letter or digit, 2 not (filled lazily; a lone surrogate is neither). */
const BMP_CLASS = new Uint8Array(0x10000);

/** \p{L} or \p{N}, for one code point (a lone surrogate is neither). */
function isLetterOrDigit(cp: number): boolean {
  if (cp >= 0x10000) return LETTER_OR_DIGIT.test(String.fromCodePoint(cp));
  let k = BMP_CLASS[cp] as number;
  if (k === 0) {
    k = cp >= 0xd800 && cp <= 0xdfff ? 2 : LETTER_OR_DIGIT.test(String.fromCharCode(cp)) ? 1 : 2;
    BMP_CLASS[cp] = k;
  }
  return k === 1;
}

const LEET: Readonly<Record<number, number>> = { 48: 111, 49: 105, 51: 101, 52: 97, 53: 115, 55: 116, 64: 97, 36: 115 }; // 0→o 1→i 3→e 4→a 5→s 7→t @→a $→s

/** Letters and digits only, leetspeak mapped: "1gn0re -- all previous" → "ignoreallprevious". */
export function squashText(prepared: string): string {
  // ASCII fast path (most texts): one pass into a byte buffer, no regex, no per-character strings.
  if (squashBuffer.length < prepared.length) squashBuffer = new Uint8Array(prepared.length + 1024);
  const out = squashBuffer;
  let n = 0;
  for (let i = 0; i < prepared.length; i++) {
    const c = prepared.charCodeAt(i);
    if (c >= 0x80) return squashSlow(prepared);
    const mapped = SQUASH_ASCII[c] as number;
    if (mapped !== 0) out[n++] = mapped;
  }
  return Buffer.from(out.buffer, out.byteOffset, n).toString('latin1');
}

/**
 * squashText for text with non-ASCII units: the same as removing every code point that is not \p{L} or
 * \p{N} after mapping the ASCII leetspeak units (the regex version this replaced), in one pass.
 */
function squashSlow(prepared: string): string {
  if (squashWide.length < prepared.length) squashWide = new Uint16Array(prepared.length + 1024);
  const out = squashWide;
  let n = 0;
  for (let i = 0; i < prepared.length; i++) {
    const c = prepared.charCodeAt(i);
    if (c < 0x80) {
      const mapped = SQUASH_ASCII[c] as number;
      if (mapped !== 0) out[n++] = mapped;
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < prepared.length && isLow(prepared.charCodeAt(i + 1))) {
      if (isLetterOrDigit(prepared.codePointAt(i) as number)) {
        out[n++] = c;
        out[n++] = prepared.charCodeAt(i + 1);
      }
      i++;
    } else if (isLetterOrDigit(c)) out[n++] = c;
  }
  let s = '';
  for (let k = 0; k < n; k += 8192) s += String.fromCharCode.apply(null, out.subarray(k, Math.min(n, k + 8192)) as unknown as number[]);
  return s;
}

let squashWide = new Uint16Array(4096);
let squashBuffer = new Uint8Array(4096);
/** ASCII unit → its squashed unit (leetspeak mapped), 0 = dropped. */
const SQUASH_ASCII = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const mapped = LEET[c];
  if (mapped !== undefined) SQUASH_ASCII[c] = mapped;
  else if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c >= 65 && c <= 90)) SQUASH_ASCII[c] = c;
}

/**
 * Whether a UTF-16 code unit counts as part of a word for n-grams: ASCII letters and digits, and any
 * non-ASCII unit outside the punctuation / symbol / surrogate (emoji) blocks. A table, not a Unicode
 * property lookup, because it runs once per character on the hot path.
 */
export function isWordUnit(c: number): boolean {
  if (c < 0x80) return ASCII_WORD[c] === 1;
  if (c >= 0x2000 && c <= 0x2bff) return false; // general punctuation, symbols, arrows, box drawing, ...
  if (c >= 0x3000 && c <= 0x303f) return false; // CJK punctuation
  if (c >= 0xd800 && c <= 0xdfff) return false; // surrogates: emoji and other astral symbols
  if (c >= 0xfe30 && c <= 0xfe4f) return false; // CJK compatibility forms
  if (c >= 0xff00 && c <= 0xff0f) return false; // full-width punctuation (NFKC normally removes these)
  if (c === 0xa0 || c === 0xab || c === 0xbb || c === 0xb7 || c === 0xbf || c === 0xa1) return false;
  return true;
}

const ASCII_WORD = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const isDigit = c >= 48 && c <= 57;
  const isLower = c >= 97 && c <= 122;
  const isUpper = c >= 65 && c <= 90;
  ASCII_WORD[c] = isDigit || isLower || isUpper ? 1 : 0;
}
