import type { DetectorType } from '../../shared/detector-catalog';

/**
 * The classifier types of the spec: detected by models rather than signatures.
 */
export const CLASSIFIER_TYPES = [
  'prompt_attack',
  'jailbreak',
  'moderated_content/harassment',
  'moderated_content/harassment_threatening',
  'moderated_content/hate',
  'moderated_content/hate_threatening',
  'moderated_content/sexual',
  'moderated_content/sexual_minors',
  'moderated_content/violence',
  'moderated_content/violence_graphic',
  'moderated_content/self_harm',
  'moderated_content/self_harm_intent',
  'moderated_content/self_harm_instructions',
  'moderated_content/illicit',
  'moderated_content/illicit_violent',
] as const satisfies readonly DetectorType[];

export type ClassifierType = (typeof CLASSIFIER_TYPES)[number];

/** Scores 0..1 per type this backend covers; a type it does not cover is absent. */
export type ClassifierScores = Partial<Record<ClassifierType, number>>;

/**
 * One model backend (builtin, openai-moderation, http-classifier, llm-judge, onnx). `classify` scores ONE
 * window of text (the caller splits long inputs into windows). It throws on any failure (timeout,
 * transport error, malformed answer): the engine turns a throw into an `error` outcome for the
 * detectors that depend on it and applies the request's fail mode (open → unscanned, closed → block).
 */
export interface ClassifierBackend {
  /** e.g. "builtin", "openai-moderation". */
  readonly name: string;
  /** The types this backend can score. */
  readonly types: readonly ClassifierType[];
  /**
   * In-process computation (builtin): its work always completes, like a synchronous detector's, and is
   * not cut by the detector budget (detector-runner.ts). External backends leave it unset.
   */
  readonly local?: boolean;
  classify(text: string, signal: AbortSignal): Promise<ClassifierScores>;
  /**
   * Optional: scores many windows at once (one promise per text, same meaning as `classify`), for a
   * backend that can share a batch out (the builtin worker pool). The router's shared calls use it for
   * the windows of a text that no earlier call covers.
   */
  classifyMany?(texts: readonly string[], signals: readonly AbortSignal[]): Array<Promise<ClassifierScores>>;
  /**
   * Optional, for an in-process backend: the scores of `texts` computed now on the calling thread (same
   * meaning as `classify`; throws where it would reject), or undefined when the backend would rather
   * score them elsewhere (the builtin pool's workers, for many windows). Lets a short text's 15
   * classifier detectors answer without a promise (shared-calls.ts, classifyAllNow).
   */
  classifyNow?(texts: readonly string[]): ClassifierScores[] | undefined;
}

/**
 * What decided a score, per type, when it was not the model itself (e.g. `heuristic:persona_dan`: a
 * builtin heuristic floor). Kept on the scores object under a symbol, non-enumerable: backends that
 * copy or merge scores drop it (their scores are then reported as the classifier's), and equality,
 * JSON and key iteration never see it.
 */
export const SCORE_SIGNALS: unique symbol = Symbol('classifier.scoreSignals');

type ScoresWithSignals = ClassifierScores & { [SCORE_SIGNALS]?: Partial<Record<ClassifierType, string>> };

export function attachScoreSignals(scores: ClassifierScores, signals: Partial<Record<ClassifierType, string>>): ClassifierScores {
  Object.defineProperty(scores, SCORE_SIGNALS, { value: signals, enumerable: false });
  return scores;
}

/** The signal that decided `type`'s score, if a backend said so. */
export function scoreSignalOf(scores: ClassifierScores | undefined, type: ClassifierType): string | undefined {
  return (scores as ScoresWithSignals | undefined)?.[SCORE_SIGNALS]?.[type];
}
