import type { DetectCategory, DetectFinding } from '../shared/detection-client';
import type { FailMode } from '../shared/proto';
import type { Action, Threshold } from '../shared/policy';
import type { DetectorFinding } from './detector';

/**
 * The verdict: which findings fire, which categories are reported, whether the text is blocked. Detectors
 * only score; everything about thresholds and actions lives here.
 */

/**
 * Confidence cut-off per threshold level. A finding fires when its confidence is >= the cut-off of the
 * threshold configured for its detector. L1 (Confident) is the least sensitive, L4 (Less Likely) the most.
 */
export const THRESHOLD_CUTOFFS: Readonly<Record<Threshold, number>> = Object.freeze({
  L1: 0.9,
  L2: 0.75,
  L3: 0.5,
  L4: 0.3,
});

/** At most this many findings of one detector (or of the deny list, or of one custom detector) are kept. */
export const MAX_FINDINGS_PER_DETECTOR = 1000;

export function cutoffFor(threshold: Threshold): number {
  return THRESHOLD_CUTOFFS[threshold];
}

export function fires(confidence: number, threshold: Threshold): boolean {
  return confidence >= THRESHOLD_CUTOFFS[threshold];
}

/** The scored output of one rule (a configured detector, the deny list or a custom detector). */
export interface RuleResult {
  /** Detector type, `deny_list` or `custom/<name>`. */
  type: string;
  action: Action;
  /** The configured threshold; undefined for rules whose findings always fire (deny list, custom). */
  threshold?: Threshold;
  /** Spans already in original-text offsets. */
  findings: DetectorFinding[];
}

/** A configured detector that threw or overran its deadline. */
export interface FailedDetector {
  type: string;
  action: Action;
  status: 'error' | 'timeout';
}

export interface DecideInput {
  results: RuleResult[];
  failed: FailedDetector[];
  failMode: FailMode;
}

export interface Verdict {
  blocked: boolean;
  categories: DetectCategory[];
  findings: DetectFinding[];
  blockReason: string;
}

const SEVERITY: Readonly<Record<Action, number>> = { log: 0, alert: 1, block: 2 };

export function decide(input: DecideInput): Verdict {
  const categories = new Map<string, DetectCategory>();
  const findings: DetectFinding[] = [];
  for (const rule of input.results) {
    for (const f of rule.findings) {
      const fired = rule.threshold === undefined ? true : fires(f.confidence, rule.threshold);
      findings.push({ type: rule.type, confidence: f.confidence, start: f.start, end: f.end, fired, signal: f.signal ?? '' });
      if (fired) mergeCategory(categories, { type: rule.type, confidence: f.confidence, action: rule.action });
    }
  }
  const reasons: string[] = [];
  const blockedBy = [...categories.values()].filter((c) => c.action === 'block').map((c) => c.type);
  if (blockedBy.length > 0) reasons.push(`Blocked by ${blockedBy.join(', ')}`);
  if (input.failMode === 'closed') {
    for (const f of input.failed) {
      if (f.action !== 'block') continue;
      reasons.push(`Detector ${f.type} ${f.status === 'timeout' ? 'timed out' : 'failed'} and fail mode is closed`);
    }
  }
  return {
    blocked: reasons.length > 0,
    categories: [...categories.values()],
    findings,
    blockReason: reasons.join('; '),
  };
}

/** One category per type: the highest confidence, and the most severe action if a type appears twice. */
function mergeCategory(categories: Map<string, DetectCategory>, next: DetectCategory): void {
  const current = categories.get(next.type);
  if (!current) {
    categories.set(next.type, { ...next });
    return;
  }
  current.confidence = Math.max(current.confidence, next.confidence);
  if (SEVERITY[next.action] > SEVERITY[current.action]) current.action = next.action;
}

/**
 * One finding per stretch of text: findings (of one rule, already in original-text offsets) whose spans
 * overlap are merged into their union with the highest confidence. The same match seen in two views
 * (the normalized text and its canonical form, say) thereby counts once; the union names the signal of
 * its most confident part. Result in text order, at most
 * `max` (the most confident ones are kept).
 */
export function mergeFindings(findings: DetectorFinding[], max = MAX_FINDINGS_PER_DETECTOR): DetectorFinding[] {
  if (findings.length === 0) return findings;
  const sorted = [...findings].sort((a, b) => a.start - b.start || a.end - b.end);
  const merged: DetectorFinding[] = [];
  let current = { ...(sorted[0] as DetectorFinding) };
  for (let i = 1; i < sorted.length; i++) {
    const f = sorted[i] as DetectorFinding;
    if (f.start < current.end || f.start === current.start) {
      current.end = Math.max(current.end, f.end);
      // The union keeps the signal of its most confident part.
      if (f.confidence > current.confidence) {
        current.confidence = f.confidence;
        if (f.signal !== undefined) current.signal = f.signal;
      }
    } else {
      merged.push(current);
      current = { ...f };
    }
  }
  merged.push(current);
  if (merged.length <= max) return merged;
  return merged
    .map((f, i) => ({ f, i }))
    .sort((a, b) => b.f.confidence - a.f.confidence || a.i - b.i)
    .slice(0, max)
    .sort((a, b) => a.i - b.i)
    .map(({ f }) => f);
}
