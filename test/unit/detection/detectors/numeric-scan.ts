import type { Detector, DetectorFinding } from '../../../../src/detection/detector';

/** A finding with the text it covers. */
export interface Match {
  match: string;
  confidence: number;
  start: number;
  end: number;
}

/**
 * Runs a synchronous detector on `text` after NFKC (what the engine's normalisation does first) and
 * returns each finding with the text it covers.
 */
export function scanWith(detector: Detector, text: string): Match[] {
  const normalized = text.normalize('NFKC');
  const findings = detector.detect({ text: normalized, direction: 'input' }, new AbortController().signal);
  if (findings instanceof Promise) throw new Error('expected a synchronous detector');
  return (findings as DetectorFinding[]).map((f) => ({
    match: normalized.slice(f.start, f.end),
    confidence: f.confidence,
    start: f.start,
    end: f.end,
  }));
}

/** The highest confidence of any finding, 0 without findings. */
export function topConfidence(detector: Detector, text: string): number {
  return Math.max(0, ...scanWith(detector, text).map((m) => m.confidence));
}

/** An aborted signal whose reason is `message`. */
export function abortedSignal(message = 'stop'): AbortSignal {
  const controller = new AbortController();
  controller.abort(new Error(message));
  return controller.signal;
}
