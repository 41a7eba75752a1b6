import { THRESHOLD_CUTOFFS } from '../decide';
import type { Detector, DetectorFactory, DetectorFinding, DetectorInput } from '../detector';
import type { ClassifierType } from './backend';
import { createBuiltinBackend } from './builtin/builtin-backend';
import { ClassifierRouter, type WindowScore } from './router';

/**
 * The detector of one classifier type (prompt_attack, jailbreak, moderated_content/*). It asks the
 * router for its type's score on every window of the text it is given (the engine calls it once per
 * view: normalised, canonical, decoded; the canonical view's windows are aligned with the normalised
 * view's, so its unedited windows are the same texts and the shared calls answer them) and reports one finding per window scoring at least the lowest
 * cut-off (L4), spanning the window; overlapping windows that both fire are merged by the engine.
 * Scores below L4 can never fire, so they are not reported (no noise in the findings list). Each finding
 * names what decided it: `classifier:<backend>` (the routed backend's model, e.g. `classifier:builtin`),
 * or `heuristic:<id>` when a builtin heuristic floor set the score (deciding-signals.ts).
 *
 * The router is looked up on every call, so configureClassifierRouter() applies even to detectors the
 * registry already created.
 */

export const MIN_REPORTED_CONFIDENCE = THRESHOLD_CUTOFFS.L4;

const NEVER_ABORTED = new AbortController().signal;

export class ClassifierDetector implements Detector {
  constructor(
    readonly type: ClassifierType,
    private readonly router: () => ClassifierRouter,
  ) {}

  /** A local backend's scoring completes whatever the budget (see Detector.runsToCompletion). */
  runsToCompletion(): boolean {
    return this.router().backendFor(this.type).local === true;
  }

  /**
   * Synchronous when the scores are at hand (a short text on the builtin model, or windows already
   * scored): then the detector answers like a signature detector, without a promise (the runner and the
   * engine await only promises). Otherwise a promise of the findings.
   */
  detect(input: DetectorInput, signal: AbortSignal): DetectorFinding[] | Promise<DetectorFinding[]> {
    const router = this.router();
    // The deadline does not cut a local backend's work (as it cannot cut synchronous work).
    const waitOn = router.backendFor(this.type).local === true ? NEVER_ABORTED : signal;
    const now = router.scoreWindowsNow(this.type, input.text, waitOn, input.base);
    if (now !== undefined) return this.findingsOf(now, router);
    return router.scoreWindows(this.type, input.text, waitOn, input.base).then((windows) => this.findingsOf(windows, router));
  }

  private findingsOf(windows: readonly WindowScore[], router: ClassifierRouter): DetectorFinding[] {
    const findings: DetectorFinding[] = [];
    let model: string | undefined;
    for (const w of windows) {
      if (w.score < MIN_REPORTED_CONFIDENCE) continue;
      model ??= `classifier:${router.backendFor(this.type).name}`;
      findings.push({ confidence: Math.round(w.score * 10_000) / 10_000, start: w.start, end: w.end, signal: w.signal ?? model });
    }
    return findings;
  }
}

let configured: ClassifierRouter | undefined;
let builtinOnly: ClassifierRouter | undefined;

/**
 * Sets the router every classifier detector of the default registry uses (e.g. built from the
 * deployment's backend configuration at start-up). `undefined` restores the default: builtin for all
 * 15 types.
 */
export function configureClassifierRouter(router: ClassifierRouter | undefined): void {
  configured = router;
}

/** The configured router, else a builtin-only one (the model is loaded on first use, once). */
export function defaultClassifierRouter(): ClassifierRouter {
  if (configured) return configured;
  builtinOnly ??= new ClassifierRouter({ backends: [createBuiltinBackend()] });
  return builtinOnly;
}

/** Registry factory for one classifier type. */
export function classifierDetectorFactory(
  type: ClassifierType,
  router: () => ClassifierRouter = defaultClassifierRouter,
): DetectorFactory {
  return () => new ClassifierDetector(type, router);
}
