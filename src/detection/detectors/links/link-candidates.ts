import { parse } from 'tldts';

/**
 * Finding link candidates cheaply and in linear time, without regex backtracking and without RE2 (whose
 * per-call cost on short strings with Unicode classes dominated): a JS hint scan (". followed by a
 * letter" or "://", fixed-length alternatives) locates whitespace-delimited tokens that could hold a URL;
 * a bare token is only parsed when one of its dot-labels is a real ICANN top-level domain (cached
 * lookups), so dotted code identifiers (`console.log`, `this.state`) cost a hint hit and a few Set
 * lookups. findCandidates then walks the token (at most 8 KB) once, left to right.
 */

/**
 * Where a link can be: a `.` followed by a letter (ASCII, or any code unit from U+00A1), or a scheme
 * separator `://`. Found with two `indexOf` searches (memory speed; a regular expression alternation walks
 * every character), merged in text order. `from` only grows between calls on one LinkHints.
 */
export class LinkHints {
  private dot = -1;
  private scheme = -1;

  constructor(private readonly text: string) {}

  /** The first hint at or after `from`, or -1. */
  next(from: number): number {
    const text = this.text;
    if (this.dot !== Infinity && this.dot < from) {
      let i = text.indexOf('.', from);
      while (i >= 0 && !startsLinkLabel(text.charCodeAt(i + 1))) i = text.indexOf('.', i + 1);
      this.dot = i < 0 ? Infinity : i;
    }
    if (this.scheme !== Infinity && this.scheme < from) {
      const i = text.indexOf('://', from);
      this.scheme = i < 0 ? Infinity : i;
    }
    const at = Math.min(this.dot, this.scheme);
    return at === Infinity ? -1 : at;
  }
}

function startsLinkLabel(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c >= 0xa1;
}

const MAX_TOKEN_HALF = 4096;

export type CandidateKind = 'scheme' | 'www' | 'bare';

export interface Token {
  start: number;
  end: number;
}

const TOKEN_STOP_BACK = new Set([0x20, 0x09, 0x0a, 0x0d, 0x0c, 0x0b, 0x22, 0x27, 0x60, 0x3c, 0x3e, 0x28, 0x5b, 0x7b]);
const TOKEN_STOP_FORWARD = new Set([0x20, 0x09, 0x0a, 0x0d, 0x0c, 0x0b, 0x22, 0x27, 0x60, 0x3c, 0x3e]);

/** The token around a hint: back to whitespace/quote/opening bracket, forward to whitespace/quote. */
export function tokenAround(text: string, at: number): Token {
  let start = at;
  const minStart = Math.max(0, at - MAX_TOKEN_HALF);
  while (start > minStart && !TOKEN_STOP_BACK.has(text.charCodeAt(start - 1)) && !isUnicodeSpace(text, start - 1)) start--;
  let end = at + 1;
  const maxEnd = Math.min(text.length, at + MAX_TOKEN_HALF);
  while (end < maxEnd && !TOKEN_STOP_FORWARD.has(text.charCodeAt(end)) && !isUnicodeSpace(text, end)) end++;
  return { start, end };
}

function isUnicodeSpace(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return c === 0xa0 || c === 0x2028 || c === 0x2029 || c === 0x3000 || (c >= 0x2000 && c <= 0x200a);
}

const TLD_CACHE = new Map<string, boolean>();
const TLD_CACHE_LIMIT = 8192;

/** True when `label` (lowercase) is a top-level domain of the ICANN section of the public suffix list. */
export function isIcannTld(label: string): boolean {
  const cached = TLD_CACHE.get(label);
  if (cached !== undefined) return cached;
  const result = parse(`x.${label}`).isIcann === true;
  if (TLD_CACHE.size < TLD_CACHE_LIMIT) TLD_CACHE.set(label, result);
  return result;
}

/**
 * True when a token is worth an RE2 run: it has a scheme or `www.`, a non-ASCII dot-label (IDN), or a
 * lowercase dot-label that ends the label run and is a real TLD.
 */
export function tokenMayHoldLink(text: string, token: Token): boolean {
  for (let i = token.start; i < token.end - 1; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x3a && text.charCodeAt(i + 1) === 0x2f && text.charCodeAt(i + 2) === 0x2f) return true; // ://
    if (c !== 0x2e) continue;
    if (i >= token.start + 3 && /^www$/i.test(text.slice(i - 3, i))) return true;
    let j = i + 1;
    let nonAscii = false;
    while (j < token.end) {
      const d = text.charCodeAt(j);
      if (d >= 0x61 && d <= 0x7a) j++;
      else if (d > 0x7f && /\p{L}/u.test(text.charAt(j))) {
        nonAscii = true;
        j++;
      } else break;
    }
    if (j - i - 1 < 2) continue;
    const next = j < token.end ? text.charCodeAt(j) : 0x20;
    const labelEnds = !(
      (next >= 0x41 && next <= 0x5a) || (next >= 0x30 && next <= 0x39) || next === 0x5f || next === 0x2d
    );
    if (!labelEnds) continue;
    if (nonAscii) return true;
    if (text.startsWith('xn--', i + 1) || isIcannTld(text.slice(i + 1, j))) return true;
  }
  return false;
}

/** Drops trailing punctuation that ends the sentence rather than the URL; keeps balanced brackets. */
export function trimTrailing(url: string): string {
  let end = url.length;
  while (end > 0) {
    const ch = url[end - 1] as string;
    if ('.,;:!?*_~\'"'.includes(ch)) {
      end--;
      continue;
    }
    if (ch === ')' || ch === ']' || ch === '}') {
      const open = ch === ')' ? '(' : ch === ']' ? '[' : '{';
      const body = url.slice(0, end);
      if (count(body, open) < count(body, ch)) {
        end--;
        continue;
      }
    }
    break;
  }
  return url.slice(0, end);
}

function count(s: string, ch: string): number {
  let n = 0;
  for (let i = s.indexOf(ch); i >= 0; i = s.indexOf(ch, i + 1)) n++;
  return n;
}

export interface Candidate {
  /** Offset in the token. */
  index: number;
  raw: string;
  kind: CandidateKind;
}

const SCHEMES = new Set(['http', 'https', 'ftp', 'ftps', 'ws', 'wss', 'hxxp', 'hxxps']);
const NON_URL = new Set([...' \t\n\r\f\v<>"\'`{}|\\^[]'].map((c) => c.charCodeAt(0)));
const NON_AUTHORITY = new Set([...NON_URL, 0x28, 0x29, 0x2f, 0x3f, 0x23]); // ( ) / ? #
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;

function isLabelChar(code: number, ch: string): boolean {
  if ((code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || (code >= 0x30 && code <= 0x39)) return true;
  return code > 0x7f && LETTER_OR_DIGIT.test(ch);
}

/** Authority (or `[IPv6]`) then an optional path/query/fragment; returns the end offset. */
function urlEnd(tok: string, from: number): number {
  let i = from;
  if (tok.charCodeAt(i) === 0x5b) {
    const close = tok.indexOf(']', i);
    if (close < 0 || close - i > 46) return from;
    i = close + 1;
  }
  while (i < tok.length && !NON_AUTHORITY.has(tok.charCodeAt(i))) i++;
  const c = tok.charCodeAt(i);
  if (c === 0x2f || c === 0x3f || c === 0x23) {
    while (i < tok.length && !NON_URL.has(tok.charCodeAt(i))) i++;
  }
  return i;
}

/** Every scheme URL, `www.` URL and bare `host.tld[:port][/path]` in the token, left to right. */
export function findCandidates(tok: string): Candidate[] {
  const out: Candidate[] = [];
  let i = 0;
  while (i < tok.length) {
    const found = schemeAt(tok, i) ?? wwwAt(tok, i) ?? bareAt(tok, i);
    if (found) {
      out.push(found);
      i = found.index + Math.max(1, found.raw.length);
    } else i++;
  }
  return out;
}

function schemeAt(tok: string, i: number): Candidate | null {
  const c = tok.charCodeAt(i);
  if (!((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a))) return null;
  if (i > 0 && isLabelChar(tok.charCodeAt(i - 1), tok.charAt(i - 1))) return null;
  const sep = tok.indexOf('://', i);
  if (sep < 0 || sep - i > 5 || !SCHEMES.has(tok.slice(i, sep).toLowerCase())) return null;
  const end = urlEnd(tok, sep + 3);
  return end > sep + 3 ? { index: i, raw: tok.slice(i, end), kind: 'scheme' } : null;
}

function wwwAt(tok: string, i: number): Candidate | null {
  if (!/^www\d{0,3}\./i.test(tok.slice(i, i + 7))) return null;
  if (i > 0 && isLabelChar(tok.charCodeAt(i - 1), tok.charAt(i - 1))) return null;
  const end = urlEnd(tok, i);
  return end > i + 4 ? { index: i, raw: tok.slice(i, end), kind: 'www' } : null;
}

/** A run of labels and dots with a letters-only (or xn--) last label, plus optional :port and path. */
function bareAt(tok: string, i: number): Candidate | null {
  if (!isLabelChar(tok.charCodeAt(i), tok.charAt(i))) return null;
  if (i > 0) {
    const p = tok.charCodeAt(i - 1);
    if (isLabelChar(p, tok.charAt(i - 1)) || p === 0x2e || p === 0x2d) return null;
  }
  let j = i;
  while (j < tok.length) {
    const c = tok.charCodeAt(j);
    if (c === 0x2e || c === 0x2d || isLabelChar(c, tok.charAt(j))) j++;
    else break;
  }
  while (j > i && (tok.charCodeAt(j - 1) === 0x2e || tok.charCodeAt(j - 1) === 0x2d)) j--;
  const host = tok.slice(i, j);
  if (!validBareHost(host)) return null;
  let end = j;
  if (tok.charCodeAt(end) === 0x3a) {
    let k = end + 1;
    while (k < tok.length && k - end <= 5 && tok.charCodeAt(k) >= 0x30 && tok.charCodeAt(k) <= 0x39) k++;
    if (k > end + 1) end = k;
  }
  const c = tok.charCodeAt(end);
  if (c === 0x2f || c === 0x3f || c === 0x23) {
    while (end < tok.length && !NON_URL.has(tok.charCodeAt(end))) end++;
  }
  return { index: i, raw: tok.slice(i, end), kind: 'bare' };
}

function validBareHost(host: string): boolean {
  const labels = host.split('.');
  if (labels.length < 2) return false;
  for (const l of labels) {
    if (l.length === 0 || l.length > 63 || l.startsWith('-') || l.endsWith('-')) return false;
  }
  const tld = labels[labels.length - 1] as string;
  if (/^xn--[a-z0-9-]+$/i.test(tld)) return true;
  return tld.length >= 2 && !/[\d\-]/.test(tld);
}
