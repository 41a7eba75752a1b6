/**
 * Marks the characters the adversarial-suffix signal must not score: machine strings whose perplexity
 * is high by nature and that other detectors judge (secrets, encodings): URLs, hex (hashes, UUIDs, hex
 * dumps), base64 and API-key-like runs. One pass, no allocation: mask[i] = 1 for a masked character.
 *
 * A "run" is a maximal sequence of [A-Za-z0-9+/=_.%~-]. A run is masked when it is
 * - hex only (0-9 a-f, '-') with ≥ 2 digits and ≥ 8 characters (hashes, UUIDs, addresses),
 * - ≥ 16 characters with ≥ 2 digits (keys, tokens, base64),
 * - ≥ 24 characters (long base64 / identifiers),
 * - an @handle or #hashtag (with its sigil),
 * - part of a URL (letters followed by "://", up to the next space, quote or angle bracket),
 * - part of a chain of ≥ 4 short hex runs separated by single spaces or colons, half of them with digits
 *   (hex dumps, MAC addresses),
 * - identifier-like: ≥ 5 characters with a digit and a letter (order numbers, booking references, short
 *   ids: "zz91p", "A7f3Kq9LmX2b"), when at most one more such run stands next to it (at most 2 characters
 *   apart): token soup with a digit glued into every token forms a longer chain and stays scored,
 * - or, for a whole whitespace-delimited token, regex-like: ≥ 10 characters of which ≥ 30% (and ≥ 5)
 *   are regex metacharacters \ ^ $ | ? * + ( ) [ ] { }, or ≥ 3 backslash escapes (\d \w \s \x...).
 */

/** Identifier-like runs: masked when a chain of them (each ≤ ID_CHAIN_GAP characters from the next) has at most ID_CHAIN_MAX runs. */
const ID_MIN_LENGTH = 5;
const ID_CHAIN_GAP = 2;
const ID_CHAIN_MAX = 2;

const RUN = new Uint8Array(128);
const HEX = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_.%~-') RUN[c.charCodeAt(0)] = 1;
for (const c of '0123456789abcdefABCDEF-') HEX[c.charCodeAt(0)] = 1;

const META = new Uint8Array(128);
for (const c of '\\^$|?*+()[]{}') META[c.charCodeAt(0)] = 1;

/** Masks regex-like whitespace-delimited tokens. */
function maskRegexTokens(text: Uint16Array, n: number, mask: Uint8Array): void {
  let i = 0;
  while (i < n) {
    while (i < n && (text[i] as number) <= 32) i++;
    const start = i;
    let meta = 0;
    let escapes = 0;
    while (i < n) {
      const c = text[i] as number;
      if (c <= 32) break;
      if (c < 128 && META[c] === 1) {
        meta++;
        if (c === 92) {
          const d = text[i + 1] as number;
          if (d === 100 || d === 119 || d === 115 || d === 120 || d === 117 || d === 98 || d === 68 || d === 87 || d === 83 || d === 110 || d === 116 || d === 46 || d === 40 || d === 91) escapes++;
        }
      }
      i++;
    }
    const len = i - start;
    if ((len >= 10 && meta >= 5 && meta * 10 >= len * 3) || escapes >= 3) mask.fill(1, start, i);
  }
}

const isUrlEnd = (c: number) => c <= 32 || c === 34 || c === 39 || c === 60 || c === 62 || c === 96 || c === 41 || c === 93;

export function maskBlobs(text: string, mask: Uint8Array): void {
  maskBlobCodes(codeUnits(text), text.length, mask);
}

/**
 * maskBlobs over the UTF-16 code units of a text, `text[0, n)` (codeUnits: the units past n read as 0, as
 * the out-of-range reads of the string version compared false).
 */
export function maskBlobCodes(text: Uint16Array, n: number, mask: Uint8Array): void {
  mask.fill(0, 0, n);
  let chainStart = -1;
  let chainEnd = -1;
  let chainRuns = 0;
  let chainDigitRuns = 0;
  // The current chain of identifier-like runs: its first two runs' bounds and its length.
  let idRuns = 0;
  let idEnd = -1;
  let id0s = 0, id0e = 0, id1s = 0, id1e = 0;
  const flushIds = () => {
    if (idRuns > 0 && idRuns <= ID_CHAIN_MAX) {
      mask.fill(1, id0s, id0e);
      if (idRuns === 2) mask.fill(1, id1s, id1e);
    }
    idRuns = 0;
  };
  let i = 0;
  while (i < n) {
    const c = text[i] as number;
    if (c >= 128 || RUN[c] === 0) {
      i++;
      continue;
    }
    const start = i;
    let digits = 0;
    let letters = 0;
    let hexOnly = true;
    while (i < n) {
      const d = text[i] as number;
      if (d >= 128 || RUN[d] === 0) break;
      if (d >= 48 && d <= 57) digits++;
      else if ((d | 32) >= 97 && (d | 32) <= 122) letters++;
      if (HEX[d] === 0) hexOnly = false;
      i++;
    }
    const len = i - start;
    if (len >= ID_MIN_LENGTH && digits > 0 && letters > 0) {
      if (idRuns > 0 && start - idEnd > ID_CHAIN_GAP) flushIds();
      if (idRuns === 0) (id0s = start), (id0e = i);
      else if (idRuns === 1) (id1s = start), (id1e = i);
      idRuns++;
      idEnd = i;
    }
    const before = start > 0 ? (text[start - 1] as number) : 0;
    if (before === 64 || before === 35) {
      // @handles and #hashtags: names, not language
      mask.fill(1, start - 1, i);
      chainEnd = -1;
      continue;
    }
    if (text[i] === 58 && text[i + 1] === 47 && text[i + 2] === 47) {
      let e = i + 3;
      while (e < n && !isUrlEnd(text[e] as number)) e++;
      mask.fill(1, start, e);
      i = e;
      continue;
    }
    if ((hexOnly && digits >= 2 && len >= 8) || (len >= 16 && digits >= 2) || len >= 24) mask.fill(1, start, i);
    // hex-dump chains: "de ad be ef 00 12", "00:1a:2b:3c:4d:5e"
    const chainable = hexOnly && len >= 2 && len <= 8;
    const sep = start > 0 ? (text[start - 1] as number) : 0;
    const continues = chainable && chainEnd === start - 1 && (sep === 32 || sep === 58);
    if (!continues) {
      if (chainRuns >= 4 && chainDigitRuns * 2 >= chainRuns) mask.fill(1, chainStart, chainEnd);
      chainRuns = 0;
      chainDigitRuns = 0;
      chainStart = chainable ? start : -1;
    }
    if (chainable) {
      chainRuns++;
      if (digits > 0) chainDigitRuns++;
      chainEnd = i;
    } else chainEnd = -1;
  }
  if (chainRuns >= 4 && chainDigitRuns * 2 >= chainRuns) mask.fill(1, chainStart, chainEnd);
  flushIds();
  maskRegexTokens(text, n, mask);
}

/** The code units' buffer (not from Buffer's shared pool: its own memory, 2-byte aligned). */
let unitBytes = Buffer.allocUnsafeSlow(2 * 4096);
let units = new Uint16Array(unitBytes.buffer, unitBytes.byteOffset, 4096);

/**
 * The UTF-16 code units of `text` in a module buffer (valid until the next call), followed by at least
 * three 0 units: the suffix passes read units, not the string (one copy instead of a string read per
 * character per pass), and their look-ahead past the end reads 0. The copy is Buffer#write in UTF-16LE
 * (the units verbatim, lone surrogates included; 10–80× faster than a charCodeAt loop on a 2,000-char
 * window), read back through a Uint16Array of the same memory: Node runs on little-endian machines only
 * (checked below), where that is each unit's value.
 */
export function codeUnits(text: string): Uint16Array {
  const n = text.length;
  if (units.length < n + 4) {
    unitBytes = Buffer.allocUnsafeSlow(2 * (n + 4 + 1024));
    units = new Uint16Array(unitBytes.buffer, unitBytes.byteOffset, n + 4 + 1024);
  }
  unitBytes.write(text, 0, 2 * n, 'utf16le');
  units[n] = units[n + 1] = units[n + 2] = 0;
  return units;
}

if (new Uint8Array(Uint16Array.of(1).buffer)[0] !== 1) throw new Error('suffix-mask: a little-endian machine is required');
