import { CLASSIFIER_TYPES, scoreSignalOf, type ClassifierBackend, type ClassifierScores, type ClassifierType } from './backend';
import { contentDigest, SharedClassifyCalls, sharedCallKey, type SharedCallOptions } from './shared-calls';
import { alignedWindowSpans, type TextWindow, type WindowOptions } from './windows';

/**
 * Chooses the backend for each classifier type and scores texts window by window.
 *
 * Configuration is a plain object (env parsing lives with whoever builds it):
 *
 *   { defaultBackend: 'builtin', byType: { 'moderated_content/hate': 'openai-moderation', ... } }
 *
 * Backends compose: e.g. builtin for prompt_attack / jailbreak and openai-moderation for the 13
 * moderated_content types. Every routed backend must exist and cover the type it is routed to; this is
 * checked when the router is built, so a misconfiguration fails at start-up, not on a request.
 *
 * Calls are shared (shared-calls.ts): one classify per window per backend, whatever the number of
 * detectors (types) that need that window.
 */

export interface ClassifierRoutingConfig {
  /** Backend name for every type not in `byType`. Default "builtin". */
  defaultBackend?: string;
  byType?: Partial<Record<ClassifierType, string>>;
}

export interface ClassifierRouterOptions {
  backends: readonly ClassifierBackend[];
  routing?: ClassifierRoutingConfig;
  windows?: WindowOptions;
  sharedCalls?: SharedCallOptions;
}

export interface WindowScore extends TextWindow {
  score: number;
  /** What decided the score when the backend said (e.g. `heuristic:persona_dan`); else the backend's model. */
  signal?: string;
}

/** A text's windows, their contents and content digests (computed once for all the detectors asking). */
interface WindowPlan {
  base: string | undefined;
  spans: TextWindow[];
  texts: string[];
  digests: string[];
  /**
   * The shared-call keys of the windows per backend name (sharedCallKey), made once: the detectors that
   * ask for the plan then look up the same key strings, whose hashes V8 keeps, instead of new ones.
   */
  keys: Map<string, string[]>;
  /**
   * Per backend name, the last batch of scores asked for with `signal`: the detectors of one scan share
   * one signal (the engine's deadline) and ask for the same windows, so the second to the fifteenth
   * take that batch instead of a classifyAll each (with the same signal they would wait on the same
   * calls, and be aborted together). Dropped when it fails, so a later ask tries again.
   */
  batches: Map<string, { signal: AbortSignal; scores: Promise<ClassifierScores[]>; now?: ClassifierScores[] }>;
}

/** Window plans kept for the texts asked about most recently, up to this many UTF-16 units in all. */
const PLAN_CACHE_UNITS = 2 * 1024 * 1024;

export class ClassifierRouter {
  private readonly routes = new Map<ClassifierType, ClassifierBackend>();
  private readonly calls: SharedClassifyCalls;
  /**
   * The 15 detectors of a request each ask for the same view text: its windows are cut and hashed once
   * (hashing every window per detector was a fifth of a 100 KB Detect). Keyed by the text itself.
   */
  private readonly plans = new Map<string, WindowPlan>();
  private planUnits = 0;

  constructor(private readonly options: ClassifierRouterOptions) {
    const byName = new Map<string, ClassifierBackend>();
    for (const b of options.backends) {
      if (byName.has(b.name)) throw new Error(`classifier backend "${b.name}" is registered twice`);
      byName.set(b.name, b);
    }
    const defaultName = options.routing?.defaultBackend ?? 'builtin';
    for (const type of CLASSIFIER_TYPES) {
      const name = options.routing?.byType?.[type] ?? defaultName;
      const backend = byName.get(name);
      if (!backend) throw new Error(`classifier type ${type} is routed to unknown backend "${name}"`);
      if (!backend.types.includes(type)) throw new Error(`classifier backend "${name}" does not score ${type}`);
      this.routes.set(type, backend);
    }
    this.calls = new SharedClassifyCalls(options.sharedCalls);
  }

  backendFor(type: ClassifierType): ClassifierBackend {
    return this.routes.get(type) as ClassifierBackend;
  }

  /** The backend name per type (for logs, health and the docs). */
  describe(): Record<ClassifierType, string> {
    const out = {} as Record<ClassifierType, string>;
    for (const [type, backend] of this.routes) out[type] = backend.name;
    return out;
  }

  /**
   * Scores `type` on every window of `text` (windows.ts); with `base` (the view `text` was derived from
   * by local edits) the windows are aligned with base's, so unedited ones are shared calls. Throws when
   * the backend fails or answers without a valid score for the type (a malformed answer is an error,
   * never a pass).
   */
  async scoreWindows(type: ClassifierType, text: string, signal: AbortSignal, base?: string): Promise<WindowScore[]> {
    if (text.trim() === '') return [];
    const backend = this.backendFor(type);
    const plan = this.planFor(text, base);
    const { spans, texts } = plan;
    const keys = this.keysOf(plan, backend);
    let batch = plan.batches.get(backend.name);
    if (batch === undefined || batch.signal !== signal) {
      const mine = { signal, scores: this.calls.classifyAll(backend, texts, keys, signal) };
      mine.scores.catch(() => {
        if (plan.batches.get(backend.name) === mine) plan.batches.delete(backend.name);
      });
      plan.batches.set(backend.name, mine);
      batch = mine;
    }
    return this.windowScores(type, backend, spans, await batch.scores);
  }

  /**
   * scoreWindows without a promise, when the scores are at hand: every window already scored (shared
   * calls) or scored now by an in-process backend (`classifyNow`: a short text on the builtin model).
   * Undefined otherwise: then scoreWindows. Throws where scoreWindows would reject.
   */
  scoreWindowsNow(type: ClassifierType, text: string, signal: AbortSignal, base?: string): WindowScore[] | undefined {
    if (text.trim() === '') return [];
    const backend = this.backendFor(type);
    const plan = this.planFor(text, base);
    // The detectors of a scan after the first take its batch, as in scoreWindows (the windows are asked for once):
    // at hand when the first scored them now, else a promise scoreWindows waits on.
    const batch = plan.batches.get(backend.name);
    if (batch !== undefined && batch.signal === signal) return batch.now === undefined ? undefined : this.windowScores(type, backend, plan.spans, batch.now);
    // A window in flight (a batch of this or another request) makes it undefined: then wait for it.
    const results = this.calls.classifyAllNow(backend, plan.texts, this.keysOf(plan, backend), signal);
    if (results === undefined) return undefined;
    plan.batches.set(backend.name, { signal, scores: Promise.resolve(results), now: results });
    return this.windowScores(type, backend, plan.spans, results);
  }

  private keysOf(plan: WindowPlan, backend: ClassifierBackend): string[] {
    let keys = plan.keys.get(backend.name);
    if (keys === undefined) {
      keys = plan.digests.map((d) => sharedCallKey(backend.name, d));
      plan.keys.set(backend.name, keys);
    }
    return keys;
  }

  private windowScores(type: ClassifierType, backend: ClassifierBackend, spans: readonly TextWindow[], results: readonly ClassifierScores[]): WindowScore[] {
    return spans.map((w, i) => {
      const score = results[i]?.[type];
      if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1) {
        throw new Error(`classifier backend "${backend.name}" returned no valid score for ${type}`);
      }
      const signal = scoreSignalOf(results[i], type);
      return signal === undefined ? { start: w.start, end: w.end, score } : { start: w.start, end: w.end, score, signal };
    });
  }

  private planFor(text: string, base: string | undefined): WindowPlan {
    const known = this.plans.get(text);
    if (known && known.base === base) return known;
    const spans = alignedWindowSpans(text, base, this.options.windows);
    const texts = spans.map((w) => text.slice(w.start, w.end));
    const plan: WindowPlan = { base, spans, texts, digests: texts.map(contentDigest), keys: new Map(), batches: new Map() };
    if (known) this.forget(text, known);
    if (text.length <= PLAN_CACHE_UNITS) {
      this.plans.set(text, plan);
      this.planUnits += text.length;
      while (this.planUnits > PLAN_CACHE_UNITS) {
        const [oldest, p] = this.plans.entries().next().value as [string, WindowPlan];
        this.forget(oldest, p);
      }
    }
    return plan;
  }

  private forget(text: string, plan: WindowPlan): void {
    if (this.plans.get(text) !== plan) return;
    this.plans.delete(text);
    this.planUnits -= text.length;
  }
}
