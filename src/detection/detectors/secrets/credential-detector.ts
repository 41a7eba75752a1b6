import type { Detector, DetectorFinding, DetectorInput } from '../../detector';
import { credentialHints } from './credential-hints';
import { ASSIGNMENT_RE, CREDENTIAL_RE, CREDENTIAL_RULES } from './credential-rules';
import { classifyKey, scoreAssignment } from './secret-value';
import { signatureSignal } from '../../signals';

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
 * Speed: credential-hints.ts finds where a credential could be (a few single-character searches, each
 * hit checked with string comparisons); RE2 runs only on merged windows around provider prefixes and
 * around assignments whose key already classified as a secret's name, so prose costs a few quick
 * searches and (almost) no RE2 call.
 */

const MAX_FINDINGS = 1000;
/** Findings name their rule: `signature:<rule id>` (credential-rules.ts), or this for a generic assignment. */
const ASSIGNMENT_SIGNAL = signatureSignal('secret-assignment');

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
    const hints = credentialHints(text, signal);
    for (const w of merge(hints.providers)) {
      if (++checked % 64 === 0) signal.throwIfAborted();
      scanProviders(text.slice(w.start, w.end), w.start, findings, signal);
      if (findings.length >= MAX_FINDINGS * 2) break;
    }
    for (const w of merge(hints.assignments)) {
      if (++checked % 64 === 0) signal.throwIfAborted();
      scanAssignments(text.slice(w.start, w.end), w.start, findings, signal);
      if (findings.length >= MAX_FINDINGS * 2) break;
    }
    return findings.length === 0 ? findings : dedupe(findings).slice(0, MAX_FINDINGS);
  }
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
    if (confidence > 0) out.push({ confidence, start: offset + valueStart, end: offset + end, signal: signatureSignal(rule.id) });
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
    out.push({ confidence, start: offset + valueStart, end: offset + valueEnd, signal: ASSIGNMENT_SIGNAL });
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
