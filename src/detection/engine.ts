import { performance } from 'node:perf_hooks';
import type { DetectorOutcome, DetectResult } from '../shared/detection-client';
import { isDetectorType, type DetectorType } from '../shared/detector-catalog';
import { invalidRequest } from '../shared/errors';
import type { Action, DetectionPolicy, DetectorEntry, Direction } from '../shared/policy';
import type { FailMode } from '../shared/proto';
import { decide, MAX_FINDINGS_PER_DETECTOR, mergeFindings, THRESHOLD_CUTOFFS, type FailedDetector, type RuleResult } from './decide';
import type { DetectorFinding, DetectorInput } from './detector';
import { Deadline, runDetector, type DetectorRun } from './detector-runner';
import { allowListSpans, blankSpans, exemptFindings, isWindowClassifier } from './allow-spans';
import { compileRules, matchListSpans, RuleCache, type CompiledRules } from './match-rules';
import { alignmentBase, buildViewSet, type HiddenPayload, type TextView, type ViewSet } from './normalize';
import { isSubstantialPayload } from './normalize/invisible-text';
import { defaultRegistry, type DetectorRegistry } from './registry';
import { findAll, type Span } from './regex-scan';
import { customSignal, DENY_LIST_SIGNAL, signatureSignal } from './signals';
import { TextIndex } from './text-index';

/**
 * Evaluates one text against one detector configuration. Order:
 *   (a) policy_mode excludes the direction → not scanned, not blocked;
 *   (b) allow list: the spans its entries match are exempt (allow-spans.ts): findings lying inside one are
 *       dropped, classifiers score the text with them blanked out; the rest of the text is scanned as usual
 *       and can block. `allow_listed` = at least one entry matched;
 *   (c) deny list: every match → category `deny_list`, confidence 1.0, action block;
 *   (d) the detectors configured for the direction, in parallel, each isolated and bounded;
 *   (e) custom detectors: every match → category `custom/<name>`, confidence 1.0, its action.
 * (c)-(e) run on every view of the text (normalize/views.ts: the normalized text, its canonical form with
 * decoded references, folded confusables and de-obfuscated e-mails, and decoded base64 / hex blobs);
 * reported spans point into the original text, and overlapping findings of one type are merged.
 *
 * `prepare` splits validation and compilation (once per configuration) from scanning (once per text):
 * the streaming scanner prepares once and scans every window of the stream.
 */

export const DEFAULT_DETECTOR_TIMEOUT_MS = 1000;
export const MAX_DETECTOR_TIMEOUT_MS = 60_000;

export interface EvaluateInput {
  text: string;
  direction: Direction;
  config: DetectionPolicy;
  /** Default closed. */
  failMode?: FailMode;
  /** Per-detector budget; undefined or 0 = DEFAULT_DETECTOR_TIMEOUT_MS. */
  detectorTimeoutMs?: number;
  /** `config` already validated and compiled (DetectionEngine.compile, kept by the server's config cache). */
  compiled?: CompiledConfig;
}

/** A configuration validated and its pattern rules compiled: what a text is scanned against. */
export interface CompiledConfig {
  readonly config: DetectionPolicy;
  readonly rules: CompiledRules;
}

export type PrepareInput = Omit<EvaluateInput, 'text'>;

export interface ScanOptions {
  /**
   * Whether the text is the whole text (default true). `exact` allow / deny entries compare the whole
   * text, so they only match when it is; a window of a stream is not.
   */
  wholeText?: boolean;
}

/** What one scan found, before the verdict (decide.ts) is drawn. Spans are original-text offsets. */
export interface RawScan {
  allowListed: boolean;
  results: RuleResult[];
  failed: FailedDetector[];
  outcomes: DetectorOutcome[];
}

export interface PreparedScan {
  /** False when policy_mode excludes the direction (scan then finds nothing). */
  readonly scanned: boolean;
  readonly failMode: FailMode;
  scan(text: string, options?: ScanOptions): Promise<RawScan>;
}

export interface EngineDeps {
  registry?: DetectorRegistry;
  ruleCache?: RuleCache;
}

export interface DetectionEngine {
  evaluate(input: EvaluateInput): Promise<DetectResult>;
  /** Validates and compiles a configuration once, for scanning many texts (throws invalid_request). */
  prepare(input: PrepareInput): PreparedScan;
  /**
   * Validates a configuration and compiles its pattern rules, bypassing the rule cache (throws
   * invalid_request); pass the result as `compiled` to evaluate / prepare.
   */
  compile(config: DetectionPolicy): CompiledConfig;
}

export function createDetectionEngine(deps: EngineDeps = {}): DetectionEngine {
  const registry = deps.registry ?? defaultRegistry;
  const ruleCache = deps.ruleCache ?? new RuleCache();
  const prepare = (input: PrepareInput) => prepareWith(input, registry, ruleCache);
  return { prepare, evaluate: (input) => evaluateWith(input, prepare), compile: (config) => compileConfig(config) };
}

const defaultEngine = createDetectionEngine();

/** Evaluates with the default registry and a process-wide rule cache. */
export function evaluate(input: EvaluateInput): Promise<DetectResult> {
  return defaultEngine.evaluate(input);
}

async function evaluateWith(input: EvaluateInput, prepare: (i: PrepareInput) => PreparedScan): Promise<DetectResult> {
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 1000) / 1000;
  const prepared = prepare(input);
  if (!prepared.scanned) return emptyResult({ scanned: false, elapsedMs: elapsed() });
  const raw = await prepared.scan(input.text);
  const verdict = decide({ results: raw.results, failed: raw.failed, failMode: prepared.failMode });
  return { ...verdict, scanned: true, allowListed: raw.allowListed, outcomes: raw.outcomes, elapsedMs: elapsed() };
}

function prepareWith(input: PrepareInput, registry: DetectorRegistry, cache: RuleCache): PreparedScan {
  const failMode = input.failMode ?? 'closed';
  const { direction } = input;
  // The configuration is validated (and its patterns compiled) even when this direction is not scanned,
  // so a broken policy is reported on every call rather than only on some.
  const { config, rules } = input.compiled ?? compileConfig(input.config, cache);
  const scanned = directionScanned(config.policyMode, direction);
  const entries = direction === 'input' ? config.inputDetectors : config.outputDetectors;
  const timeoutMs = detectorBudget(input.detectorTimeoutMs);
  const piiRegions = config.piiRegions !== undefined && config.piiRegions.length > 0 ? config.piiRegions : undefined;
  const context: ScanContext = { rules, entries, direction, failMode, registry, timeoutMs, piiRegions };
  return {
    scanned,
    failMode,
    scan: (text, options = {}) =>
      scanned ? scanText(context, text, options.wholeText ?? true) : Promise.resolve(emptyScan(false)),
  };
}

/** Validation and compilation of a configuration; `cache` (the rule cache, by cache_key) when given. */
function compileConfig(config: DetectionPolicy, cache?: RuleCache): CompiledConfig {
  assertValidEntries(config.inputDetectors, 'input');
  assertValidEntries(config.outputDetectors, 'output');
  return { config, rules: cache ? cache.rulesFor(config.cacheKey, config) : compileRules(config) };
}

interface ScanContext {
  rules: CompiledRules;
  entries: DetectorEntry[];
  direction: Direction;
  failMode: FailMode;
  registry: DetectorRegistry;
  timeoutMs: number;
  piiRegions: readonly string[] | undefined;
}

async function scanText(context: ScanContext, text: string, wholeText: boolean): Promise<RawScan> {
  const { rules } = context;
  const { views, hidden } = buildViewSet(text);
  const allowSpans = allowListSpans(rules.allow, views[0] as TextView, wholeText);
  const results: RuleResult[] = [];
  const denySpans = views.flatMap((view) =>
    mapSpans(matchListSpans(rules.deny, view.text, MAX_FINDINGS_PER_DETECTOR, { wholeText: wholeText && view.depth === 0 }), view),
  );
  results.push(patternRule({ type: 'deny_list', action: 'block', spans: denySpans, signal: DENY_LIST_SIGNAL }));
  const detectors = await runAllDetectors(context, { views, hidden }, text, allowSpans);
  results.push(...detectors.results);
  for (const custom of rules.custom) {
    const spans = views.flatMap((view) => mapSpans(findAll(custom.re, view.text, MAX_FINDINGS_PER_DETECTOR), view));
    results.push(patternRule({ type: custom.type, action: custom.action, spans, signal: customSignal(custom.type) }));
  }
  const exempt = exemptFindings(results, allowSpans);
  return { allowListed: allowSpans.length > 0, results: exempt.results, failed: detectors.failed, outcomes: detectors.outcomes };
}

function emptyScan(allowListed: boolean): RawScan {
  return { allowListed, results: [], failed: [], outcomes: [] };
}

export function directionScanned(mode: DetectionPolicy['policyMode'], direction: Direction): boolean {
  return mode === 'IO' || (mode === 'I' && direction === 'input') || (mode === 'O' && direction === 'output');
}

/** Unknown types, and a type listed twice for one direction (which threshold? which action?), are rejected. */
function assertValidEntries(entries: DetectorEntry[], direction: Direction): void {
  const seen = new Set<string>();
  for (const e of entries) {
    if (!isDetectorType(e.detector_type)) {
      const message = `Unknown detector_type "${e.detector_type}" in ${direction}_detectors`;
      throw invalidRequest(message, 'unknown_detector_type');
    }
    if (seen.has(e.detector_type)) {
      throw invalidRequest(`detector_type "${e.detector_type}" is configured more than once in ${direction}_detectors`);
    }
    seen.add(e.detector_type);
  }
}

interface ConfiguredRuns {
  results: RuleResult[];
  failed: FailedDetector[];
  outcomes: DetectorOutcome[];
}

/**
 * Runs the configured detectors. With exempt spans, the window classifiers score the text with those spans
 * blanked out (allow-spans.ts), the other detectors the text itself (their findings inside an exempt span
 * are dropped afterwards). Outcomes keep the configured order.
 */
async function runAllDetectors(context: ScanContext, viewSet: ViewSet, text: string, allowSpans: Span[]): Promise<ConfiguredRuns> {
  const classifiers = allowSpans.length > 0 ? context.entries.filter((e) => isWindowClassifier(e.detector_type)) : [];
  if (classifiers.length === 0) return runConfiguredDetectors(context, context.entries, viewSet.views, viewSet.hidden);
  const others = context.entries.filter((e) => !classifiers.includes(e));
  const blanked = buildViewSet(blankSpans(text, allowSpans));
  const [a, b] = await Promise.all([
    runConfiguredDetectors(context, others, viewSet.views, viewSet.hidden),
    runConfiguredDetectors(context, classifiers, blanked.views, blanked.hidden),
  ]);
  const order = (type: string) => context.entries.findIndex((e) => e.detector_type === type);
  const outcomes = [...a.outcomes, ...b.outcomes].sort((x, y) => order(x.type) - order(y.type));
  return { results: [...a.results, ...b.results], failed: [...a.failed, ...b.failed], outcomes };
}

async function runConfiguredDetectors(
  context: ScanContext,
  entries: DetectorEntry[],
  views: TextView[],
  hidden: HiddenPayload[],
): Promise<ConfiguredRuns> {
  const { direction, failMode, registry, timeoutMs, piiRegions } = context;
  const inputs: DetectorInput[] = views.map((view) => {
    const base = alignmentBase(view, views);
    const regions = piiRegions === undefined ? {} : { piiRegions };
    return { text: view.text, direction, index: new TextIndex(view.text), ...(base === undefined ? {} : { base }), ...regions };
  });
  const deadline = entries.length > 0 ? new Deadline(timeoutMs) : undefined;
  // Every detector starts now, in order; the synchronous ones (signature detectors) have finished when
  // runDetector returns, and only the runs that are promises are awaited.
  const started = entries.map((entry) => {
    const detector = registry.get(entry.detector_type);
    return detector ? runDetector({ detector, inputs, timeoutMs, maxFindings: MAX_FINDINGS_PER_DETECTOR, deadline }) : null;
  });
  let runs: Array<DetectorRun | null>;
  try {
    runs = started.some((r) => r instanceof Promise) ? await Promise.all(started) : (started as Array<DetectorRun | null>);
  } finally {
    deadline?.dispose();
  }
  const out: ConfiguredRuns = { results: [], failed: [], outcomes: [] };
  for (let k = 0; k < entries.length; k++) {
    const entry = entries[k] as DetectorEntry;
    const run = runs[k] as DetectorRun | null;
    const type = entry.detector_type;
    if (!run) {
      const message = `Detector ${type} is not implemented in this version of the detection service`;
      out.outcomes.push({ type, status: 'unavailable', message, elapsedMs: 0, failMode });
      continue;
    }
    out.outcomes.push({ type, status: run.status, message: run.message, elapsedMs: run.elapsedMs, failMode });
    if (run.status !== 'ok') out.failed.push({ type, action: entry.action, status: run.status });
    // In view order, as found; most runs find nothing, and then nothing is allocated for them here.
    const findings: DetectorFinding[] = [];
    let signal: string | undefined;
    for (let i = 0; i < run.findings.length; i++) {
      const perView = run.findings[i] as DetectorFinding[];
      if (perView.length === 0) continue;
      signal ??= signatureSignal(type);
      for (const f of perView) findings.push(toOriginal(f, views[i] as TextView, signal));
    }
    if (type === 'prompt_attack') findings.push(...hiddenTextFindings(hidden));
    // A failed run keeps what it found before failing (a finding that exists is never thrown away).
    if (run.status === 'ok' || findings.length > 0) {
      out.results.push({ type, action: entry.action, threshold: entry.threshold, findings: mergeFindings(findings) });
    }
  }
  return out;
}

export const INVISIBLE_TEXT_SIGNAL = signatureSignal('invisible-text');

/**
 * Text hidden in invisible characters is itself a prompt_attack signal, whatever it says: a payload of
 * at least MIN_HIDDEN_PAYLOAD_CHARS characters with a letter at the L2 cut-off (blocked by a policy
 * that blocks prompt_attack at L2), a shorter one at the L4 cut-off (reported only).
 */
function hiddenTextFindings(hidden: HiddenPayload[]): DetectorFinding[] {
  return hidden.map((p) => ({
    confidence: isSubstantialPayload(p) ? THRESHOLD_CUTOFFS.L2 : THRESHOLD_CUTOFFS.L4,
    start: p.start,
    end: p.end,
    signal: INVISIBLE_TEXT_SIGNAL,
  }));
}

function detectorBudget(requested: number | undefined): number {
  if (requested === undefined || !Number.isFinite(requested) || requested <= 0) return DEFAULT_DETECTOR_TIMEOUT_MS;
  return Math.min(Math.floor(requested), MAX_DETECTOR_TIMEOUT_MS);
}

function mapSpans(spans: Span[], view: TextView): Span[] {
  return view.identity ? spans : spans.map((s) => view.toOriginal(s.start, s.end));
}

function patternRule(rule: { type: string; action: Action; spans: Span[]; signal: string }): RuleResult {
  const findings = mergeFindings(rule.spans.map((s) => ({ confidence: 1, start: s.start, end: s.end, signal: rule.signal })));
  return { type: rule.type, action: rule.action, findings };
}

/** A finding in original-text offsets, naming its signal (`fallback` when the detector named none). */
function toOriginal(f: DetectorFinding, view: TextView, fallback: string): DetectorFinding {
  const signal = f.signal ?? fallback;
  if (view.identity) return f.signal === undefined ? { confidence: f.confidence, start: f.start, end: f.end, signal } : f;
  const span = view.toOriginal(f.start, f.end);
  return { confidence: f.confidence, start: span.start, end: span.end, signal };
}

function emptyResult(fields: { scanned: boolean; allowListed?: boolean; elapsedMs: number }): DetectResult {
  return {
    blocked: false,
    scanned: fields.scanned,
    allowListed: fields.allowListed ?? false,
    categories: [],
    findings: [],
    outcomes: [],
    blockReason: '',
    elapsedMs: fields.elapsedMs,
  };
}
