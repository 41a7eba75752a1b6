import { performance } from 'node:perf_hooks';
import type { DetectorOutcome, DetectResult } from '../shared/detection-client';
import { isDetectorType, type DetectorType } from '../shared/detector-catalog';
import { invalidRequest } from '../shared/errors';
import type { Action, DetectionPolicy, DetectorEntry, Direction } from '../shared/policy';
import type { FailMode } from '../shared/proto';
import { decide, MAX_FINDINGS_PER_DETECTOR, type FailedDetector, type RuleResult } from './decide';
import type { DetectorFinding } from './detector';
import { runDetector } from './detector-runner';
import { anyEntryMatches, matchListSpans, RuleCache, type CompiledRules } from './match-rules';
import { normalizeText, type NormalizedText } from './normalize';
import { defaultRegistry, type DetectorRegistry } from './registry';
import { findAll, type Span } from './regex-scan';

/**
 * Evaluates one text against one detector configuration. Order:
 *   (a) policy_mode excludes the direction → not scanned, not blocked;
 *   (b) allow list: any entry matches → allow_listed, not blocked, nothing else runs;
 *   (c) deny list: every match → category `deny_list`, confidence 1.0, action block;
 *   (d) the detectors configured for the direction, in parallel, each isolated and bounded;
 *   (e) custom detectors: every match → category `custom/<name>`, confidence 1.0, its action.
 * All matching runs on the normalised text; reported spans point into the original text.
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
}

export interface EngineDeps {
  registry?: DetectorRegistry;
  ruleCache?: RuleCache;
}

export interface DetectionEngine {
  evaluate(input: EvaluateInput): Promise<DetectResult>;
}

export function createDetectionEngine(deps: EngineDeps = {}): DetectionEngine {
  const registry = deps.registry ?? defaultRegistry;
  const ruleCache = deps.ruleCache ?? new RuleCache();
  return { evaluate: (input) => evaluateWith(input, registry, ruleCache) };
}

const defaultEngine = createDetectionEngine();

/** Evaluates with the default registry and a process-wide rule cache. */
export function evaluate(input: EvaluateInput): Promise<DetectResult> {
  return defaultEngine.evaluate(input);
}

async function evaluateWith(input: EvaluateInput, registry: DetectorRegistry, cache: RuleCache): Promise<DetectResult> {
  const started = performance.now();
  const failMode = input.failMode ?? 'closed';
  const { config, direction } = input;
  const elapsed = () => Math.round((performance.now() - started) * 1000) / 1000;
  // The configuration is validated (and its patterns compiled) even when this direction is not scanned,
  // so a broken policy is reported on every call rather than only on some.
  assertValidEntries(config.inputDetectors, 'input');
  assertValidEntries(config.outputDetectors, 'output');
  const rules = cache.rulesFor(config.cacheKey, config);
  if (!directionScanned(config.policyMode, direction)) return emptyResult({ scanned: false, elapsedMs: elapsed() });

  const entries = direction === 'input' ? config.inputDetectors : config.outputDetectors;
  const normalized = normalizeText(input.text);
  if (anyEntryMatches(rules.allow, normalized.text)) {
    return emptyResult({ scanned: true, allowListed: true, elapsedMs: elapsed() });
  }

  const results: RuleResult[] = [];
  const denySpans = matchListSpans(rules.deny, normalized.text, MAX_FINDINGS_PER_DETECTOR);
  results.push(patternRule('deny_list', 'block', denySpans, normalized));
  const detectors = await runConfiguredDetectors({ entries, normalized, direction, failMode, registry, input });
  results.push(...detectors.results);
  results.push(...customRules(rules, normalized));

  const verdict = decide({ results, failed: detectors.failed, failMode });
  return { ...verdict, scanned: true, allowListed: false, outcomes: detectors.outcomes, elapsedMs: elapsed() };
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

interface RunConfiguredArgs {
  entries: DetectorEntry[];
  normalized: NormalizedText;
  direction: Direction;
  failMode: FailMode;
  registry: DetectorRegistry;
  input: EvaluateInput;
}

interface ConfiguredRuns {
  results: RuleResult[];
  failed: FailedDetector[];
  outcomes: DetectorOutcome[];
}

async function runConfiguredDetectors(args: RunConfiguredArgs): Promise<ConfiguredRuns> {
  const { normalized, direction, failMode, registry } = args;
  const timeoutMs = detectorBudget(args.input.detectorTimeoutMs);
  const runs = await Promise.all(
    args.entries.map(async (entry) => {
      const type: DetectorType = entry.detector_type;
      const detector = registry.get(type);
      if (!detector) return { entry, run: null };
      const detectorInput = { text: normalized.text, direction };
      const maxFindings = MAX_FINDINGS_PER_DETECTOR;
      const run = await runDetector({ detector, input: detectorInput, timeoutMs, maxFindings });
      return { entry, run };
    }),
  );
  const out: ConfiguredRuns = { results: [], failed: [], outcomes: [] };
  for (const { entry, run } of runs) {
    const type = entry.detector_type;
    if (!run) {
      const message = `Detector ${type} is not implemented in this version of the detection service`;
      out.outcomes.push({ type, status: 'unavailable', message, elapsedMs: 0, failMode });
      continue;
    }
    out.outcomes.push({ type, status: run.status, message: run.message, elapsedMs: run.elapsedMs, failMode });
    if (run.status !== 'ok') {
      out.failed.push({ type, action: entry.action, status: run.status });
      continue;
    }
    const findings = run.findings.map((f) => toOriginal(f, normalized));
    out.results.push({ type, action: entry.action, threshold: entry.threshold, findings });
  }
  return out;
}

function detectorBudget(requested: number | undefined): number {
  if (requested === undefined || !Number.isFinite(requested) || requested <= 0) return DEFAULT_DETECTOR_TIMEOUT_MS;
  return Math.min(Math.floor(requested), MAX_DETECTOR_TIMEOUT_MS);
}

function customRules(rules: CompiledRules, normalized: NormalizedText): RuleResult[] {
  return rules.custom.map((c) =>
    patternRule(c.type, c.action, findAll(c.re, normalized.text, MAX_FINDINGS_PER_DETECTOR), normalized),
  );
}

function patternRule(type: string, action: Action, spans: Span[], normalized: NormalizedText): RuleResult {
  const findings = spans.map((s) => toOriginal({ confidence: 1, start: s.start, end: s.end }, normalized));
  return { type, action, findings };
}

function toOriginal(f: DetectorFinding, normalized: NormalizedText): DetectorFinding {
  const span = normalized.toOriginal(f.start, f.end);
  return { confidence: f.confidence, start: span.start, end: span.end };
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
