import { identityText, MappedTextBuilder, type MappedText } from './offset-map';

/**
 * Rewrites obfuscated e-mail addresses to their plain form, so the e-mail detector (and a deny list)
 * sees "john@example.com" where the text says
 *
 *   john [at] example [dot] com     john(at)example(dot)com     john{at}example{dot}com
 *   john [@] example [.] com        john@example[.]com          john @ example.com
 *   john at example dot com         (the bare-word form: only with at least one bare or bracketed "dot",
 *                                    so "look at example.com" is left alone)
 *
 * Only a complete address is rewritten: a local part (<= 64 characters of [A-Za-z0-9._%+-]), an "at"
 * token, two or more domain labels joined by "dot" tokens, and a last label that looks like a TLD
 * (2-24 letters, or an IDN A-label). Each token maps back to its own source span, so a finding on the
 * rewritten address maps to the whole obfuscated run. Parsing is by hand, linear, and bounded.
 */

/** Where an "at" token may be: an at sign, or the word "at" in any case. */
const AT_ANCHOR = /@|\b[aA][tT]\b/g;
const BRACKET_DOT = /[ \t]*[[({<][ \t]*(?:dot|\.)[ \t]*[\])}>][ \t]*/iy;
const BARE_DOT = /[ \t]+dot[ \t]+/iy;
const SPACED_DOT = /[ \t]+\.[ \t]+/y;
const LABEL = /[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?/y;
const TLD = /^(?:[A-Za-z]{2,24}|[Xx][Nn]--[A-Za-z0-9-]{1,59})$/;
/**
 * Prefilter: an obfuscated address needs a bracketed at/dot, a bare " dot ", or a spaced " @ " (a bare
 * " at " or a plain "@" only counts together with an obfuscated dot). Ordinary prose has none of them.
 */
const BRACKET_TOKEN = /[[({<][ \t]*(?:at|dot|@|\.)[ \t]*[\])}>]/iy;
const OPENING_BRACKETS = ['[', '(', '{', '<'];

/** BRACKET_TOKEN anywhere: tried at each opening bracket, found by indexOf (rare in prose). */
function hasBracketToken(source: string): boolean {
  for (const bracket of OPENING_BRACKETS) {
    for (let i = source.indexOf(bracket); i >= 0; i = source.indexOf(bracket, i + 1)) {
      BRACKET_TOKEN.lastIndex = i;
      if (BRACKET_TOKEN.test(source)) return true;
    }
  }
  return false;
}

const BARE_DOT_ANYWHERE = /[ \t]dot[ \t]/i;

const isBlank = (code: number) => code === 0x20 || code === 0x09;

/**
 * Whether "dot" is written with an upper-case O or T and a lower-case letter ("dOt", "doT", "DoT", "DOt",
 * "dOT": the spellings the three substring searches do not cover), found from those capitals, which are
 * rare in prose, by indexOf.
 */
function hasOddCaseDot(source: string): boolean {
  for (let i = source.indexOf('O'); i >= 0; i = source.indexOf('O', i + 1)) {
    if ((source.charCodeAt(i - 1) | 0x20) === 0x64 && (source.charCodeAt(i + 1) | 0x20) === 0x74) return true;
  }
  for (let i = source.indexOf('T'); i >= 0; i = source.indexOf('T', i + 1)) {
    if ((source.charCodeAt(i - 1) | 0x20) === 0x6f && (source.charCodeAt(i - 2) | 0x20) === 0x64) return true;
  }
  return false;
}

function mayHideAnAddress(source: string): boolean {
  if (hasBracketToken(source)) return true;
  // "dot" in any case ("dOt" too: three substring searches alone missed five spellings, and with them an
  // address written "john at corp dOt com"). Native searches first; the regex only confirms.
  const dot = source.includes('dot') || source.includes('DOT') || source.includes('Dot') || hasOddCaseDot(source);
  if (dot && BARE_DOT_ANYWHERE.test(source)) return true;
  for (let at = source.indexOf('@'); at >= 0; at = source.indexOf('@', at + 1)) {
    if (at > 0 && isBlank(source.charCodeAt(at - 1)) && isBlank(source.charCodeAt(at + 1))) return true;
  }
  return false;
}

const MAX_LOCAL = 64;
const MAX_LABELS = 10;

type AtKind = 'plain' | 'bare' | 'bracket';
type DotKind = 'plain' | 'bare' | 'bracket' | 'spaced';

interface Token {
  start: number;
  end: number;
}

interface ParsedAddress {
  localStart: number;
  at: Token;
  labels: Token[];
  dots: Array<Token & { kind: DotKind }>;
}

/** Rewrites obfuscated addresses in `source`, mapped back through `base`. */
export function deobfuscateEmails(source: string, base?: MappedText): MappedText {
  if (!mayHideAnAddress(source)) return base ?? identityText(source);
  const builder = new MappedTextBuilder(source);
  let cursor = 0;
  AT_ANCHOR.lastIndex = 0;
  for (let m = AT_ANCHOR.exec(source); m; m = AT_ANCHOR.exec(source)) {
    const token = atToken(source, m.index, m[0].length);
    const parsed = token && token.start >= cursor ? parseAddress(source, token) : undefined;
    if (!parsed) continue;
    builder.keep(cursor, parsed.at.start);
    builder.replace(parsed.at.start, parsed.at.end, '@');
    parsed.labels.forEach((label, i) => {
      builder.keep(label.start, label.end);
      const dot = parsed.dots[i];
      if (dot) builder.replace(dot.start, dot.end, '.');
    });
    cursor = (parsed.labels[parsed.labels.length - 1] as Token).end;
    AT_ANCHOR.lastIndex = cursor;
  }
  AT_ANCHOR.lastIndex = 0;
  builder.keep(cursor, source.length);
  return builder.build(base);
}

const isOpen = (code: number) => code === 0x5b || code === 0x28 || code === 0x7b || code === 0x3c; // [ ( { <
const isClose = (code: number) => code === 0x5d || code === 0x29 || code === 0x7d || code === 0x3e; // ] ) } >

/** The whole "at" token around the anchor at [at, at + len), with its kind, or undefined. */
function atToken(source: string, at: number, len: number): (Token & { kind: AtKind }) | undefined {
  let left = at;
  while (left > 0 && isBlank(source.charCodeAt(left - 1))) left--;
  let right = at + len;
  while (right < source.length && isBlank(source.charCodeAt(right))) right++;
  if (left > 0 && isOpen(source.charCodeAt(left - 1)) && right < source.length && isClose(source.charCodeAt(right))) {
    let start = left - 1;
    while (start > 0 && isBlank(source.charCodeAt(start - 1))) start--;
    let end = right + 1;
    while (end < source.length && isBlank(source.charCodeAt(end))) end++;
    return { start, end, kind: 'bracket' };
  }
  const spacedBoth = left < at && right > at + len;
  if (len === 1) {
    if (spacedBoth) return { start: left, end: right, kind: 'bracket' }; // "john @ example.com"
    if (left === at && right === at + 1) return { start: at, end: at + 1, kind: 'plain' };
    return undefined;
  }
  return spacedBoth ? { start: left, end: right, kind: 'bare' } : undefined;
}

function parseAddress(source: string, at: Token & { kind: AtKind }): ParsedAddress | undefined {
  const localStart = scanLocalBackwards(source, at.start);
  if (localStart === undefined) return undefined;
  const domain = parseDomain(source, at.end);
  if (!domain) return undefined;
  const obfuscatedDots = domain.dots.filter((d) => d.kind === 'bare' || d.kind === 'bracket').length;
  const spacedDots = domain.dots.filter((d) => d.kind === 'spaced').length;
  if (at.kind !== 'bracket' && obfuscatedDots === 0) return undefined; // plain address, or "look at example.com"
  if (at.kind === 'plain' && spacedDots > 0) return undefined;
  return { localStart, at: { start: at.start, end: at.end }, ...domain };
}

function isLocalChar(code: number): boolean {
  return (
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x30 && code <= 0x39) ||
    code === 0x2e || // .
    code === 0x5f || // _
    code === 0x25 || // %
    code === 0x2b || // +
    code === 0x2d // -
  );
}

/** Start of the local part that ends at `end`, or undefined when there is none (or it is too long). */
function scanLocalBackwards(source: string, end: number): number | undefined {
  let start = end;
  while (start > 0 && isLocalChar(source.charCodeAt(start - 1))) {
    start -= 1;
    if (end - start > MAX_LOCAL) return undefined;
  }
  if (start === end || source.charCodeAt(start) === 0x2e || source.charCodeAt(end - 1) === 0x2e) return undefined;
  return start;
}

function parseDomain(source: string, from: number): Pick<ParsedAddress, 'labels' | 'dots'> | undefined {
  const labels: Token[] = [];
  const dots: Array<Token & { kind: DotKind }> = [];
  let pos = from;
  let label = matchAt(LABEL, source, pos);
  if (!label) return undefined;
  labels.push(label);
  pos = label.end;
  while (labels.length < MAX_LABELS) {
    const dot = matchDot(source, pos);
    if (!dot) break;
    const next = matchAt(LABEL, source, dot.end);
    if (!next) break;
    dots.push(dot);
    labels.push(next);
    pos = next.end;
  }
  // The address ends at the last label that looks like a TLD.
  while (labels.length >= 2 && !TLD.test(source.slice((label = labels[labels.length - 1] as Token).start, label.end))) {
    labels.pop();
    dots.pop();
  }
  if (labels.length < 2) return undefined;
  const last = labels[labels.length - 1] as Token;
  // A TLD directly followed by more address characters is not the end of an address.
  if (last.end < source.length && /[A-Za-z0-9_-]/.test(source.charAt(last.end))) return undefined;
  return { labels, dots };
}

function matchDot(source: string, pos: number): (Token & { kind: DotKind }) | undefined {
  if (source.charCodeAt(pos) === 0x2e) return { start: pos, end: pos + 1, kind: 'plain' };
  const bracket = matchAt(BRACKET_DOT, source, pos);
  if (bracket) return { ...bracket, kind: 'bracket' };
  const bare = matchAt(BARE_DOT, source, pos);
  if (bare) return { ...bare, kind: 'bare' };
  const spaced = matchAt(SPACED_DOT, source, pos);
  if (spaced) return { ...spaced, kind: 'spaced' };
  return undefined;
}

function matchAt(re: RegExp, source: string, pos: number): Token | undefined {
  re.lastIndex = pos;
  const m = re.exec(source);
  re.lastIndex = 0;
  return m ? { start: pos, end: pos + m[0].length } : undefined;
}
