import { isUtf8 } from 'node:buffer';

/**
 * Finds opaque encoded blobs inside a text and decodes them: base64 (standard and URL-safe alphabets,
 * padded or not) and hex. A blob is kept only when it decodes to valid UTF-8 that is mostly printable
 * text, so identifiers, git SHAs, UUIDs and binary payloads are not mistaken for hidden text.
 *
 *   base64: >= MIN_BASE64_CHARS characters of one alphabet, length % 4 != 1, at most two '=' at the end
 *   hex:    >= MIN_HEX_CHARS hex digits, even length, optionally after 0x (tried before base64 when both fit)
 *   printable: valid UTF-8 (fatal decode), >= MIN_PRINTABLE_RATIO of the characters are not control
 *              characters (tab, CR, LF allowed), and at least one letter, or else nothing but a number
 *              of >= MIN_DIGIT_PAYLOAD digits with the usual separators (a card number or an SSN hidden
 *              in base64 / hex: "NDExOTM5NjcwNzA5NzU4Mg==").
 */

export const MIN_BASE64_CHARS = 16;
export const MIN_HEX_CHARS = 16;
export const MIN_PRINTABLE_RATIO = 0.95;
export const MIN_DIGIT_PAYLOAD = 9;

export type EncodingKind = 'base64' | 'hex';

export interface EncodedSegment {
  kind: EncodingKind;
  start: number;
  end: number;
  decoded: string;
}

/** 1 for the characters of both base64 alphabets (split by alphabet below), 0 otherwise. */
const BLOB_CHAR = new Uint8Array(128);
for (const ch of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-') BLOB_CHAR[ch.charCodeAt(0)] = 1;
const isBlobChar = (code: number) => code < 128 && BLOB_CHAR[code] === 1;
const LETTER = /\p{L}/u;
/** Hex written as a literal: 0x and an even number of hex digits. */
const HEX_PREFIXED = new RegExp(`^0[xX](?:[0-9a-fA-F]{2}){${MIN_HEX_CHARS / 2},}$`);
/** Digits with spaces, dashes, dots, slashes, parentheses or a plus: a number (card, SSN, phone, IBAN digits). */
const NUMBER_ONLY = /^[\d\s\-+.\/()]+$/;

export interface FindSegmentsLimits {
  /** Stop after this many decoded segments. */
  maxSegments: number;
  /** Stop once the decoded text would exceed this many characters in total. */
  maxDecodedChars: number;
}

/** Decoded segments of `text`, left to right, within the limits. */
export function findEncodedSegments(text: string, limits: FindSegmentsLimits): EncodedSegment[] {
  const out: EncodedSegment[] = [];
  let budget = limits.maxDecodedChars;
  const minRun = Math.min(MIN_BASE64_CHARS, MIN_HEX_CHARS);
  const n = text.length;
  // Any run of >= minRun blob characters contains one of the positions minRun-1, 2*minRun-1, ...: look
  // only there, and widen a hit to its whole run. Prose is mostly short words, so this reads a fraction
  // of the characters.
  for (let probe = minRun - 1; probe < n && out.length < limits.maxSegments; probe += minRun) {
    if (!isBlobChar(text.charCodeAt(probe))) continue;
    let start = probe;
    while (start > 0 && isBlobChar(text.charCodeAt(start - 1))) start--;
    let end = probe + 1;
    while (end < n && isBlobChar(text.charCodeAt(end))) end++;
    const runEnd = end;
    while (end < n && end - runEnd < 2 && text.charCodeAt(end) === 0x3d) end++;
    probe = Math.max(probe, end - 1); // the next probe is past this run
    if (runEnd - start < minRun || !standsAlone(text, start, end)) continue;
    const segment = decodeCandidate(text.slice(start, end), start);
    if (!segment || segment.decoded.length > budget) continue;
    budget -= segment.decoded.length;
    out.push(segment);
  }
  return out;
}

/**
 * A run glued to a longer word is not an aligned blob: a non-ASCII letter right before or after it, or
 * more '=' after its padding. (A '=' before it is fine: `token=<blob>`.)
 */
function standsAlone(text: string, start: number, end: number): boolean {
  const before = start > 0 ? text.charCodeAt(start - 1) : 0x20;
  const after = end < text.length ? text.charCodeAt(end) : 0x20;
  return before <= 0x7f && after <= 0x7f && after !== 0x3d;
}

function decodeCandidate(run: string, start: number): EncodedSegment | undefined {
  const end = start + run.length;
  let padding = 0;
  while (padding < run.length && run.charCodeAt(run.length - 1 - padding) === 0x3d) padding++;
  const bodyLength = run.length - padding;
  let allHex = true;
  let standard = false;
  let urlSafe = false;
  for (let i = 0; i < bodyLength; i++) {
    const c = run.charCodeAt(i);
    if (c === 0x2b || c === 0x2f) standard = true; // + /
    else if (c === 0x2d || c === 0x5f) urlSafe = true; // - _
    if (allHex && !((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66))) allHex = false;
  }
  if (allHex && padding === 0 && bodyLength >= MIN_HEX_CHARS && bodyLength % 2 === 0) {
    const decoded = printableUtf8(Buffer.from(run, 'hex'));
    if (decoded !== undefined) return { kind: 'hex', start, end, decoded };
  }
  const prefixed = padding === 0 && HEX_PREFIXED.test(run) ? printableUtf8(Buffer.from(run.slice(2), 'hex')) : undefined;
  if (prefixed !== undefined) return { kind: 'hex', start, end, decoded: prefixed };
  if (bodyLength < MIN_BASE64_CHARS || bodyLength % 4 === 1) return undefined;
  if (standard && urlSafe) return undefined; // mixed alphabets: a path or an identifier, not base64
  if (padding > 0 && run.length % 4 !== 0) return undefined; // padding in the wrong place
  const decoded = printableUtf8(Buffer.from(padding > 0 ? run.slice(0, bodyLength) : run, 'base64'));
  return decoded === undefined ? undefined : { kind: 'base64', start, end, decoded };
}

/** The bytes as text when they are valid UTF-8 and mostly printable; otherwise undefined. */
export function printableUtf8(bytes: Buffer): string | undefined {
  if (bytes.length === 0) return undefined;
  // Cheap reject first: control bytes other than tab / LF / CR.
  let control = 0;
  for (const b of bytes) if ((b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) || b === 0x7f) control++;
  if (control > bytes.length * (1 - MIN_PRINTABLE_RATIO)) return undefined;
  if (!isUtf8(bytes)) return undefined; // native check: no exception per rejected candidate
  const text = bytes.toString('utf8');
  return LETTER.test(text) || isNumberPayload(text) ? text : undefined;
}

function isNumberPayload(text: string): boolean {
  if (!NUMBER_ONLY.test(text)) return false;
  let digits = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39) digits++;
  return digits >= MIN_DIGIT_PAYLOAD;
}
