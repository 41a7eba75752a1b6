import { charSymbol, UNSCORED } from './suffix-lm';
import { codeUnits } from './suffix-mask';

/**
 * Words for the adversarial-suffix signal's word-order evidence: token soup strings real words in an
 * order ordinary text never has ("interface Manuel WITH steps instead sentences"), so among adjacent
 * pairs of common words, the share never seen together in ordinary text is high. A word is a run of
 * ≥ 2 letters (case and diacritics folded by the LM alphabet), hashed (FNV-1a over symbols); two words
 * are adjacent when at most 3 characters, none a newline, separate them. Masked characters break words.
 */

const LETTER = new Uint8Array(256);
for (let c = 97; c <= 122; c++) LETTER[charSymbol(c)] = 1;

export const wordPairHash = (a: number, b: number): number => {
  let h = Math.imul(a ^ 0x2545f491, 0x9e3779b1) ^ b;
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
  return (h ^ (h >>> 13)) >>> 0;
};

export const hasBit = (bits: Uint8Array, mask: number, h: number): boolean => {
  const i = h & mask;
  return ((bits[i >>> 3] as number) & (1 << (i & 7))) !== 0;
};

export const setBit = (bits: Uint8Array, mask: number, h: number): void => {
  const i = h & mask;
  bits[i >>> 3] = (bits[i >>> 3] as number) | (1 << (i & 7));
};

/**
 * Calls onWord(hash, end, prevHash) for each word of `text` (end = index after its last letter);
 * prevHash is the previous adjacent word's hash, or -1.
 */
export function forEachWord(text: string, mask: Uint8Array, onWord: (hash: number, end: number, prevHash: number) => void): void {
  forEachWordOf(codeUnits(text), text.length, mask, onWord);
}

/** forEachWord over the code units `text[0, n)` (suffix-mask.ts codeUnits). */
export function forEachWordOf(text: Uint16Array, n: number, mask: Uint8Array, onWord: (hash: number, end: number, prevHash: number) => void): void {
  let h = 0x811c9dc5;
  let len = 0;
  let prevHash = -1;
  let prevEnd = -10;
  let gapNewline = false;
  for (let i = 0; i <= n; i++) {
    const sym = i < n && mask[i] !== 1 ? charSymbol(text[i] as number) : UNSCORED;
    if (sym !== UNSCORED && LETTER[sym] === 1) {
      if (len === 0 && (i - prevEnd > 3 || gapNewline)) prevHash = -1;
      h = Math.imul(h ^ sym, 0x01000193);
      len++;
      continue;
    }
    if (len >= 2) {
      const hash = h >>> 0;
      onWord(hash, i, prevHash);
      prevHash = hash;
      prevEnd = i;
      gapNewline = false;
    } else if (len === 1) prevHash = -1;
    h = 0x811c9dc5;
    len = 0;
    if (sym === UNSCORED) prevHash = -1;
    else if (text[i] === 10) gapNewline = true;
  }
}

/**
 * Masks code identifiers made of common words ("foreignKeyName", "getUrlProxy", "MustUrlUseProxy"):
 * a run of ASCII letters with lower→upper case switches whose parts (split at those switches) are all
 * common words of the training text (one-letter parts allowed once). Identifiers glue words like token
 * soup glues pieces, but their pieces are words; soup's ("SureBEtera", "MutableListventions") are not.
 */
export function maskWordIdentifiers(text: string, mask: Uint8Array, words: Uint8Array, wordMask: number): void {
  maskWordIdentifierCodes(codeUnits(text), text.length, mask, words, wordMask);
}

/** maskWordIdentifiers over the code units `text[0, n)` (suffix-mask.ts codeUnits). */
export function maskWordIdentifierCodes(text: Uint16Array, n: number, mask: Uint8Array, words: Uint8Array, wordMask: number): void {
  let i = 0;
  while (i < n) {
    const c = text[i] as number;
    if (!((c >= 65 && c <= 90) || (c >= 97 && c <= 122)) || mask[i] === 1) {
      i++;
      continue;
    }
    const start = i;
    // most runs have no lower→upper switch: find the run's end first and skip those cheaply
    let switches = 0;
    let end = i;
    for (let wasLower = false; end < n; end++) {
      const d = text[end] as number;
      const upper = d >= 65 && d <= 90;
      const lower = d >= 97 && d <= 122;
      if ((!upper && !lower) || mask[end] === 1) break;
      if (upper && wasLower) switches++;
      wasLower = lower;
    }
    if (switches === 0) {
      i = end;
      continue;
    }
    let parts = 0;
    let ok = true;
    let singles = 0;
    let h = 0x811c9dc5;
    let len = 0;
    let prevLower = false;
    for (; i <= n; i++) {
      const d = i < n ? (text[i] as number) : 0;
      const upper = d >= 65 && d <= 90;
      const lower = d >= 97 && d <= 122;
      if ((!upper && !lower) || (upper && prevLower) || (i < n && mask[i] === 1)) {
        // close the current part
        parts++;
        if (len === 1) singles++;
        else if (!hasBit(words, wordMask, h >>> 0)) ok = false;
        h = 0x811c9dc5;
        len = 0;
        if (!upper && !lower) break;
      }
      h = Math.imul(h ^ charSymbol(d), 0x01000193);
      len++;
      prevLower = lower;
    }
    if (ok && parts >= 2 && singles <= 1) mask.fill(1, start, i);
  }
}
