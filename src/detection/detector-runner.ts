import { performance } from 'node:perf_hooks';
import type { Detector, DetectorFinding, DetectorInput } from './detector';

/**
 * Runs one detector in isolation: its own AbortController and deadline. A throw (or a rejected promise,
 * or findings that break the contract) becomes an `error` run, a deadline overrun a `timeout` run; in
 * neither case does it affect other detectors. The fail mode is applied later, by decide.ts.
 *
 * A detector that does synchronous work cannot be interrupted. If it completes after its deadline its
 * findings are still used (a finding that exists is never thrown away: under fail-open that would let
 * it through); only work that has not completed by the deadline is a timeout.
 */

export interface DetectorRun {
  status: 'ok' | 'error' | 'timeout';
  message: string;
  elapsedMs: number;
  findings: DetectorFinding[];
}

export interface RunDetectorArgs {
  detector: Detector;
  input: DetectorInput;
  timeoutMs: number;
  maxFindings: number;
}

class DeadlineExceeded extends Error {
  constructor(timeoutMs: number) {
    super(`detector exceeded its ${timeoutMs} ms budget`);
    this.name = 'DeadlineExceeded';
  }
}

export async function runDetector(args: RunDetectorArgs): Promise<DetectorRun> {
  const { detector, input, timeoutMs } = args;
  const controller = new AbortController();
  const started = performance.now();
  const elapsed = () => round(performance.now() - started);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const reason = new DeadlineExceeded(timeoutMs);
      controller.abort(reason);
      reject(reason);
    }, timeoutMs);
  });
  try {
    const work = Promise.resolve().then(() => detector.detect(input, controller.signal));
    const raw = await Promise.race([work, deadline]);
    const findings = checkFindings(raw, input.text.length);
    return { status: 'ok', message: '', elapsedMs: elapsed(), findings: capFindings(findings, args.maxFindings) };
  } catch (err) {
    if (err instanceof DeadlineExceeded) return failure('timeout', err.message, elapsed());
    return failure('error', errorMessage(err), elapsed());
  } finally {
    clearTimeout(timer);
    deadline.catch(() => undefined);
  }
}

function failure(status: 'error' | 'timeout', message: string, elapsedMs: number): DetectorRun {
  return { status, message, elapsedMs, findings: [] };
}

/** Findings must be real spans inside the text with a confidence in 0..1; anything else is a detector bug. */
function checkFindings(raw: unknown, textLength: number): DetectorFinding[] {
  if (!Array.isArray(raw)) throw new Error('detector returned no findings array');
  for (const f of raw as DetectorFinding[]) {
    const ok =
      typeof f === 'object' &&
      f !== null &&
      Number.isFinite(f.confidence) &&
      f.confidence >= 0 &&
      f.confidence <= 1 &&
      Number.isInteger(f.start) &&
      Number.isInteger(f.end) &&
      f.start >= 0 &&
      f.start <= f.end &&
      f.end <= textLength;
    if (!ok) throw new Error('detector returned an invalid finding');
  }
  return raw as DetectorFinding[];
}

/** Keeps at most `max` findings: the most confident ones, reported in text order. */
function capFindings(findings: DetectorFinding[], max: number): DetectorFinding[] {
  if (findings.length <= max) return findings;
  return [...findings]
    .sort((a, b) => b.confidence - a.confidence)
    .slice(0, max)
    .sort((a, b) => a.start - b.start);
}

/**
 * The detector's own error text, bounded. Detector messages must not quote the scanned text (that rule
 * is the detectors' to keep); the engine only truncates.
 */
function errorMessage(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.length > 200 ? `${message.slice(0, 200)}…` : message || 'detector failed';
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
