import RE2 from 're2';
import type { Detector, DetectorFinding, DetectorInput } from '../../detector';

/**
 * pii/email: email addresses (ASCII addr-spec as people actually write them; quoted local parts and
 * IP-literal domains are not reported).
 *
 * Pattern (RE2, compiled once at module load):
 *   local  = atoms of [A-Za-z0-9_%+-] separated by single dots (no leading, trailing or double dot)
 *   domain = one or more labels (alphanumeric, inner hyphens, <= 63 chars) each followed by a dot
 *   tld    = 2..24 letters, or an IDN A-label `xn--...`, then a word boundary
 *
 * Confidence:
 *   0.95  a clean match.
 *   0.60  a reserved placeholder domain (RFC 2606 / RFC 6761): example.com/.org/.net and their
 *         subdomains, and the TLDs .example, .test, .invalid, .localhost. These are documentation
 *         addresses, so they fire only at the sensitive thresholds (L3, L4), not at the default L2.
 *
 * Speed: RE2 runs only on windows around each "@" (atWindows), not over the whole text: no UTF-8
 * conversion of text without e-mail addresses. Same matches as one whole-text scan (see atWindows).
 *
 * Not reported (address-shaped, but not a mailbox):
 *   - `git@github.com:org/repo.git` and `user@host.com:22`: SCP-style SSH targets, recognised by a ':'
 *     immediately followed by a non-space character. (`mail bob@corp.com: he knows` is still reported.)
 *   - `ssh://git@host.com/...`: URL userinfo, recognised by '://' right before the local part.
 *   - `icon@2x.png`, `logo@3x.webp`, `lib@x.js`: the "TLD" is a file extension that is not a delegated
 *     top-level domain (FILE_EXTENSIONS below; real TLDs such as .zip or .py are kept out of that list),
 *     and any `<name>@<n>x.<ext>` (a lone "2x"/"3x" host label is an image scale suffix).
 *   - `pkg@1.2.beta`: every label before the TLD is a (v-prefixed) number, i.e. a version.
 *   - `lodash@4.17.21`, `node@20`, `@Component`, `user@localhost`: never match (numeric or no TLD).
 */

const LOCAL = String.raw`[A-Za-z0-9_%+\-]+(?:\.[A-Za-z0-9_%+\-]+)*`;
const LABEL = String.raw`[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?`;
// The A-label alternative comes first: RE2 prefers the leftmost alternative, and `xn` alone would match.
const TLD = String.raw`(?:[Xx][Nn]--[A-Za-z0-9\-]{1,59}|[A-Za-z]{2,24})`;
const EMAIL_SOURCE = String.raw`(${LOCAL})@((?:${LABEL}\.)+${TLD})\b`;
const EMAIL = new RE2(EMAIL_SOURCE, 'gu');
/**
 * The same pattern on V8, for short windows only: an RE2 call costs ~5 µs (the string is copied to
 * UTF-8 and back), V8 ~0.2 µs. The pattern is ours, not a user's; its backtracking is polynomial in the
 * window length, so windows longer than SHORT_WINDOW always run on RE2.
 */
const EMAIL_V8 = new RegExp(EMAIL_SOURCE, 'g');
const SHORT_WINDOW = 512;

export const EMAIL_CONFIDENCE = 0.95;
export const PLACEHOLDER_CONFIDENCE = 0.6;

const MAX_LOCAL_LENGTH = 64;
const MAX_DOMAIN_LENGTH = 253;
const MAX_FINDINGS = 1000;

const PLACEHOLDER_DOMAINS = ['example.com', 'example.org', 'example.net'];
const PLACEHOLDER_TLDS = new Set(['example', 'test', 'invalid', 'localhost']);

const FILE_EXTENSIONS = new Set([
  'png', 'jpg', 'jpeg', 'gif', 'svg', 'webp', 'bmp', 'ico', 'tif', 'tiff', 'avif', 'heic',
  'css', 'scss', 'sass', 'less', 'js', 'mjs', 'cjs', 'jsx', 'ts', 'tsx', 'vue', 'json', 'yaml', 'yml', 'toml',
  'xml', 'html', 'htm', 'txt', 'log', 'lock', 'map', 'csv', 'pdf', 'docx', 'xlsx', 'pptx',
  'exe', 'dll', 'bin', 'wasm', 'tar', 'tgz', 'gz', 'bz', 'jar', 'java', 'kt', 'rb', 'php', 'cpp', 'hpp',
  'wav', 'ogg', 'webm', 'ttf', 'otf', 'woff', 'eot', 'ini', 'cfg', 'env', 'sql', 'bak', 'tmp',
]);

const VERSION_LABEL = /^v?\d+$/i;
const SCALE_LABEL = /^\d+x$/i;

export class EmailDetector implements Detector {
  readonly type = 'pii/email' as const;

  detect(input: DetectorInput, signal: AbortSignal): DetectorFinding[] {
    const { text } = input;
    const findings: DetectorFinding[] = [];
    const windows = atWindows(text);
    for (let k = 0; k < windows.length && findings.length < MAX_FINDINGS; k += 2) {
      if (k % 512 === 510) signal.throwIfAborted();
      // A match cannot start before the end of the previous one (the whole-text scan resumes there).
      const last = findings[findings.length - 1];
      const from = Math.max(windows[k] as number, last ? last.end : 0);
      if (from < (windows[k + 1] as number)) scan(text, from, windows[k + 1] as number, findings, signal);
    }
    return findings;
  }
}

/** EMAIL over text[from, to), findings with whole-text offsets (scored against the whole text). */
function scan(text: string, from: number, to: number, findings: DetectorFinding[], signal: AbortSignal): void {
  const slice = from === 0 && to === text.length ? text : text.slice(from, to);
  const offset = from;
  const re: { lastIndex: number; exec(s: string): RegExpExecArray | null } = slice.length <= SHORT_WINDOW ? EMAIL_V8 : EMAIL;
  re.lastIndex = 0;
  let scanned = 0;
  for (let m = re.exec(slice); m && findings.length < MAX_FINDINGS; m = re.exec(slice)) {
    if (++scanned % 256 === 0) signal.throwIfAborted();
    const local = m[1] ?? '';
    const domain = m[2] ?? '';
    const start = offset + m.index;
    const end = start + m[0].length;
    const confidence = scoreEmail({ text, start, end, local, domain });
    if (confidence > 0) findings.push({ confidence, start, end });
  }
  re.lastIndex = 0;
}

const isLocalChar = (c: number) =>
  (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x5f || c === 0x25 || c === 0x2b || c === 0x2d || c === 0x2e;
const isDomainChar = (c: number) => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e;

/**
 * Where a match can be: every match holds exactly one "@", its local part made of local-part characters
 * (letters, digits, `_%+-.`) right before it and its domain of domain characters right after it. Each
 * "@" with a local-part character before and a letter or digit after gives the window from the start of
 * that run of local-part characters to one character past the run of domain characters (so the final
 * `\b` sees the same next character as in the whole text); overlapping or touching windows merge. A
 * match can start nowhere else (a match starting earlier would need a local-part character at the
 * window start - 1), so scanning the windows in order, each from no earlier than the previous finding's
 * end, gives the whole-text scan's matches. Flat array [start0, end0, start1, end1, …]. There is no cap on
 * the number of windows: windows never overlap, so their total length is at most the text's, and a
 * short window on V8 costs far less than converting the whole text for RE2 (a text with a few hundred
 * addresses per MB took 7 ms on one whole-text RE2 scan against under 0.5 ms in windows).
 */
function atWindows(text: string): number[] {
  const out: number[] = [];
  for (let at = text.indexOf('@'); at >= 0; at = text.indexOf('@', at + 1)) {
    if (!isLocalChar(text.charCodeAt(at - 1)) || !isAlnumCode(text.charCodeAt(at + 1))) continue;
    let start = at - 1;
    while (start > 0 && isLocalChar(text.charCodeAt(start - 1))) start--;
    let end = at + 1;
    while (end < text.length && isDomainChar(text.charCodeAt(end))) end++;
    end = Math.min(text.length, end + 1);
    const n = out.length;
    if (n > 0 && start <= (out[n - 1] as number)) {
      out[n - 1] = Math.max(out[n - 1] as number, end);
    } else {
      out.push(start, end);
    }
  }
  return out;
}

const isAlnumCode = (c: number) => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39);

interface Candidate {
  text: string;
  start: number;
  end: number;
  local: string;
  domain: string;
}

/** 0 = not an email; otherwise the confidence. */
export function scoreEmail(c: Candidate): number {
  if (c.local.length > MAX_LOCAL_LENGTH || c.domain.length > MAX_DOMAIN_LENGTH) return 0;
  const labels = c.domain.toLowerCase().split('.');
  const tld = labels[labels.length - 1] ?? '';
  const hostLabels = labels.slice(0, -1);
  if (FILE_EXTENSIONS.has(tld)) return 0;
  if (hostLabels.length === 1 && SCALE_LABEL.test(hostLabels[0] ?? '')) return 0;
  if (hostLabels.length >= 2 && hostLabels.every((l) => VERSION_LABEL.test(l))) return 0;
  if (isScpTarget(c.text, c.end) || (c.start >= 3 && c.text.startsWith('://', c.start - 3))) return 0;
  const domain = labels.join('.');
  const placeholder =
    PLACEHOLDER_TLDS.has(tld) || PLACEHOLDER_DOMAINS.some((d) => domain === d || domain.endsWith(`.${d}`));
  return placeholder ? PLACEHOLDER_CONFIDENCE : EMAIL_CONFIDENCE;
}

function isScpTarget(text: string, end: number): boolean {
  if (text.charCodeAt(end) !== 0x3a /* ':' */) return false;
  const next = text.charAt(end + 1);
  return next !== '' && !/\s/.test(next);
}
