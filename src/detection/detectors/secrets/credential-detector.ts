import type { Detector, DetectorFinding, DetectorInput } from '../../detector';
import { ASSIGNMENT_RE, CREDENTIAL_RE, CREDENTIAL_RULES, forwardReach, KEYWORD_HINT, PREFIX_HINT } from './credential-rules';
import { classifyKey, scoreAssignment } from './secret-value';

/**
 * secrets/credential (an addition to the spec's 24 detector types): API keys, tokens, private keys and
 * passwords in the text.
 *
 * Two kinds of evidence, see credential-rules.ts and secret-value.ts:
 *   - provider-prefixed formats (AWS, GitHub, GitLab, Slack, Stripe, OpenAI, Anthropic, Google, JWT,
 *     PEM private keys, connection strings with a password, our own `svc_sk_` keys, …): 0.85–0.99,
 *     0.3 when the body is an obvious placeholder ("EXAMPLE", "xxxx", sequential characters);
 *   - generic assignments (`password = "…"`, `api_key: …`, `Authorization: Bearer …`): the key name
 *     must name a secret, the value must not be a placeholder, reference or code expression; then
 *     0.6–0.85 from length, character classes and Shannon entropy.
 *
 * Speed: two linear JS hint scans (literal alternations) find where a credential could be; RE2 runs only
 * on merged windows around provider prefixes and around assignments whose key already classified as a
 * secret's name, so prose costs two quick passes and (almost) no RE2 call.
 */

const MAX_FINDINGS = 1000;
const BACK_REACH = 96;
const KEYWORD_REACH = 560;

interface Window {
  start: number;
  end: number;
}

export class CredentialDetector implements Detector {
  readonly type = 'secrets/credential' as const;

  detect(input: DetectorInput, signal: AbortSignal): DetectorFinding[] {
    const { text } = input;
    const findings: DetectorFinding[] = [];
    let checked = 0;
    for (const w of merge(prefixWindows(text, signal))) {
      if (++checked % 64 === 0) signal.throwIfAborted();
      scanProviders(text.slice(w.start, w.end), w.start, findings, signal);
      if (findings.length >= MAX_FINDINGS * 2) break;
    }
    for (const w of merge(assignmentWindows(text, signal))) {
      if (++checked % 64 === 0) signal.throwIfAborted();
      scanAssignments(text.slice(w.start, w.end), w.start, findings, signal);
      if (findings.length >= MAX_FINDINGS * 2) break;
    }
    return findings.length === 0 ? findings : dedupe(findings).slice(0, MAX_FINDINGS);
  }
}

/** Windows around provider prefixes ("AKIA", "ghp_", "-----BEGIN", …), reaching as far as the format can. */
function prefixWindows(text: string, signal: AbortSignal): Window[] {
  const out: Window[] = [];
  PREFIX_HINT.lastIndex = 0;
  let n = 0;
  for (let m = PREFIX_HINT.exec(text); m; m = PREFIX_HINT.exec(text)) {
    if (++n % 512 === 0) signal.throwIfAborted();
    out.push({ start: Math.max(0, m.index - BACK_REACH), end: Math.min(text.length, m.index + forwardReach(m[0])) });
  }
  PREFIX_HINT.lastIndex = 0;
  return out;
}

const KEY_CHAR = /[A-Za-z0-9_.\-]/;

/**
 * Windows around assignments whose key names a secret: a keyword hit ("pass", "token", "secret", …)
 * grows to the whole key, which must be followed by `=`, `:`, `:=` or `=>` and classify as a secret's
 * name (classifyKey) before any regex runs. Prose ("pass the salt", "the author") costs a few string
 * comparisons per hit.
 */
function assignmentWindows(text: string, signal: AbortSignal): Window[] {
  const out: Window[] = [];
  KEYWORD_HINT.lastIndex = 0;
  let n = 0;
  for (let m = KEYWORD_HINT.exec(text); m; m = KEYWORD_HINT.exec(text)) {
    if (++n % 512 === 0) signal.throwIfAborted();
    let start = m.index;
    while (start > 0 && m.index - start < 48 && KEY_CHAR.test(text.charAt(start - 1))) start--;
    let end = m.index + m[0].length;
    while (end < text.length && end - m.index < 40 && KEY_CHAR.test(text.charAt(end))) end++;
    KEYWORD_HINT.lastIndex = end;
    let op = end;
    if (text[op] === '"' || text[op] === "'") op++;
    if (text[op] === ']') op++;
    while (op < text.length && op - end < 8 && (text[op] === ' ' || text[op] === '\t')) op++;
    if (text[op] !== '=' && text[op] !== ':') continue;
    if (!classifyKey(text.slice(start, end))) continue;
    out.push({ start: Math.max(0, start - 8), end: Math.min(text.length, op + KEYWORD_REACH) });
  }
  KEYWORD_HINT.lastIndex = 0;
  return out;
}

/** Sorted, overlapping windows merged. */
function merge(windows: Window[]): Window[] {
  if (windows.length < 2) return windows;
  windows.sort((a, b) => a.start - b.start);
  const merged: Window[] = [{ ...(windows[0] as Window) }];
  for (let i = 1; i < windows.length; i++) {
    const w = windows[i] as Window;
    const last = merged[merged.length - 1] as Window;
    if (w.start <= last.end) last.end = Math.max(last.end, w.end);
    else merged.push({ ...w });
  }
  return merged;
}

function scanProviders(slice: string, offset: number, out: DetectorFinding[], signal: AbortSignal): void {
  CREDENTIAL_RE.lastIndex = 0;
  let n = 0;
  for (let m = CREDENTIAL_RE.exec(slice); m; m = CREDENTIAL_RE.exec(slice)) {
    if (++n % 256 === 0) signal.throwIfAborted();
    const ruleIndex = m.findIndex((g, i) => i > 0 && g !== undefined) - 1;
    const rule = CREDENTIAL_RULES[ruleIndex];
    if (!rule) continue;
    let end = m.index + m[0].length;
    if (rule.extend) {
      end = rule.extend(slice, end);
      if (end < 0) continue;
      CREDENTIAL_RE.lastIndex = Math.max(CREDENTIAL_RE.lastIndex, end);
    }
    if (rule.endClass && rule.endClass.test(slice.charAt(end))) continue;
    const matched = slice.slice(m.index, end);
    const confidence = rule.score(matched);
    const valueStart = m.index + (rule.valueOffset ? rule.valueOffset(matched) : 0);
    if (confidence > 0) out.push({ confidence, start: offset + valueStart, end: offset + end });
    // A match that wraps another credential (a token inside a URL or an Authorization header) must not
    // hide it: scan again from where the inner value starts; dedupe keeps the more confident finding.
    const inner = rule.rescanFrom?.(matched);
    if (inner !== undefined && inner > 0) CREDENTIAL_RE.lastIndex = m.index + inner;
  }
  CREDENTIAL_RE.lastIndex = 0;
}

function scanAssignments(slice: string, offset: number, out: DetectorFinding[], signal: AbortSignal): void {
  ASSIGNMENT_RE.lastIndex = 0;
  let n = 0;
  for (let m = ASSIGNMENT_RE.exec(slice); m; m = ASSIGNMENT_RE.exec(slice)) {
    if (++n % 256 === 0) signal.throwIfAborted();
    const key = m[1] ?? '';
    const kind = classifyKey(key);
    if (!kind) {
      // The key was not a secret's name; retry right after it, the value may hold another assignment.
      ASSIGNMENT_RE.lastIndex = m.index + Math.max(1, key.length);
      continue;
    }
    const quotedValue = m[2] ?? m[3] ?? m[4];
    const value = quotedValue ?? m[5] ?? '';
    const confidence = scoreAssignment(kind, { value, quoted: quotedValue !== undefined });
    if (confidence <= 0) continue;
    const valueEnd = m.index + m[0].length - (quotedValue !== undefined ? 1 : 0);
    const valueStart = valueEnd - value.length;
    out.push({ confidence, start: offset + valueStart, end: offset + valueEnd });
  }
  ASSIGNMENT_RE.lastIndex = 0;
}

/** Overlapping findings collapse into the most confident one (a provider token inside an assignment). */
function dedupe(findings: DetectorFinding[]): DetectorFinding[] {
  findings.sort((a, b) => a.start - b.start || b.confidence - a.confidence);
  const out: DetectorFinding[] = [];
  for (const f of findings) {
    const last = out[out.length - 1];
    if (last && f.start < last.end) {
      if (f.confidence > last.confidence) out[out.length - 1] = f;
      continue;
    }
    out.push(f);
  }
  return out;
}
