import { performance } from 'node:perf_hooks';
import type { Detector, DetectorFinding, DetectorInput } from './detector';

/**
 * Runs one detector in isolation over the views of a text. A throw (or a rejected promise, or findings
 * that break the contract) becomes an `error` run, a deadline overrun a `timeout` run; in neither case
 * does it affect other detectors. The fail mode is applied later, by decide.ts.
 *
 * The detectors of one scan start together and have the same budget, so they share one Deadline (one
 * timer and one AbortController per scan instead of one per detector: creating AbortControllers was a
 * fifth of the cost of scanning a 1 KB text). When it fires, every detector still working is aborted
 * and reported as `timeout`; detectors that already finished are unaffected.
 *
 * A detector that does synchronous work cannot be interrupted. If it completes after its deadline its
 * findings are still used (a finding that exists is never thrown away: under fail-open that would let
 * it through); only work that has not completed by the deadline is a timeout. Views are scanned in
 * order; when the detector's own elapsed time passes the budget between two views the remaining ones
 * are skipped and the run is a `timeout`. A failed run still carries the findings of the views scanned
 * before the failure.
 */

export interface DetectorRun {
  status: 'ok' | 'error' | 'timeout';
  message: string;
  elapsedMs: number;
  /** Findings per input, in the order of `inputs` (empty arrays for inputs not scanned). */
  findings: DetectorFinding[][];
}

export interface RunDetectorArgs {
  detector: Detector;
  /** The views to scan, in priority order (the first is the normalised text itself). */
  inputs: DetectorInput[];
  timeoutMs: number;
  /** Per input. */
  maxFindings: number;
  /** Shared by the detectors of one scan; a private one is made (and disposed of) when omitted. */
  deadline?: Deadline;
}

class DeadlineExceeded extends Error {
  constructor(timeoutMs: number) {
    super(`detector exceeded its ${timeoutMs} ms budget`);
    this.name = 'DeadlineExceeded';
  }
}

/** One timer and one abort signal for the detectors of a scan. Dispose of it when they are done. */
export class Deadline {
  readonly signal: AbortSignal;
  /** Rejects with DeadlineExceeded when the budget runs out. */
  readonly expired: Promise<never>;
  private readonly timer: NodeJS.Timeout;

  constructor(readonly timeoutMs: number) {
    const controller = new AbortController();
    this.signal = controller.signal;
    let timer: NodeJS.Timeout | undefined;
    this.expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const reason = new DeadlineExceeded(timeoutMs);
        controller.abort(reason);
        reject(reason);
      }, timeoutMs);
    });
    this.expired.catch(() => undefined);
    this.timer = timer as NodeJS.Timeout;
  }

  dispose(): void {
    clearTimeout(this.timer);
  }
}

/**
 * A detector that answers synchronously on every view (the signature detectors) is run without a promise:
 * the run is returned as is. Only a detector that returns a promise makes the run a promise, from that view
 * on. (Per scan, an async function per detector cost the detection thread ~1 KB of allocation per run, the
 * plumbing of 50 runs per chat completion; bench:c1-gc's allocation profile, bench/RESULTS.md.)
 */
export function runDetector(args: RunDetectorArgs): DetectorRun | Promise<DetectorRun> {
  const own = args.deadline === undefined;
  const deadline = args.deadline ?? new Deadline(args.timeoutMs);
  const run = new Run(args, deadline);
  const result = run.from(0);
  if (own) {
    if (isPromise(result)) return result.finally(() => deadline.dispose());
    deadline.dispose();
  }
  return result;
}

/** One detector's run over the views; `from` goes on synchronously until the detector returns a promise. */
class Run {
  private started = performance.now();
  readonly findings: DetectorFinding[][];

  constructor(
    private readonly args: RunDetectorArgs,
    private readonly deadline: Deadline,
  ) {
    this.findings = args.inputs.map(() => []);
  }

  private elapsed(): number {
    return round(performance.now() - this.started);
  }

  from(first: number): DetectorRun | Promise<DetectorRun> {
    const { detector, inputs, timeoutMs } = this.args;
    try {
      for (let i = first; i < inputs.length; i++) {
        const input = inputs[i] as DetectorInput;
        if (i > 0 && performance.now() - this.started > timeoutMs) {
          return { status: 'timeout', message: new DeadlineExceeded(timeoutMs).message, elapsedMs: this.elapsed(), findings: this.findings };
        }
        if (i === 0) this.started = performance.now(); // its own time, not that of detectors that ran before it
        const result = detector.detect(input, this.deadline.signal);
        // Signature detectors answer synchronously: no promise and no race for them (a fifth of the cost of
        // a 1 KB scan was this plumbing). An asynchronous detector races the shared deadline.
        // Nor for an in-process one whose work runs to completion (builtin classifier windows in workers): awaited without the race.
        if (isPromise(result)) return this.settle(i, detector.runsToCompletion?.() ? result : Promise.race([result, this.deadline.expired]));
        this.keep(i, result);
      }
      return { status: 'ok', message: '', elapsedMs: this.elapsed(), findings: this.findings };
    } catch (err) {
      return this.failed(err);
    }
  }

  /** View `i`'s answer is a promise: its findings when it settles, then the views after it. */
  private async settle(i: number, pending: Promise<DetectorFinding[]>): Promise<DetectorRun> {
    try {
      this.keep(i, await pending);
    } catch (err) {
      return this.failed(err);
    }
    return this.from(i + 1);
  }

  /** View `i`'s findings, checked against its text and capped (throws on an invalid one). */
  private keep(i: number, raw: DetectorFinding[]): void {
    this.findings[i] = capFindings(checkFindings(raw, (this.args.inputs[i] as DetectorInput).text.length), this.args.maxFindings);
  }

  private failed(err: unknown): DetectorRun {
    if (err instanceof DeadlineExceeded) return { ...failure('timeout', err.message, this.elapsed()), findings: this.findings };
    return { ...failure('error', errorMessage(err), this.elapsed()), findings: this.findings };
  }
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
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
      f.end <= textLength &&
      (f.signal === undefined || typeof f.signal === 'string');
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
