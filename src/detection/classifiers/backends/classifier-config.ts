import { ConfigError, type Config } from '../../../shared/config';
import { CLASSIFIER_TYPES, type ClassifierType } from '../backend';
import type { JudgeFormat } from './llm-judge-backend';
import { readOnnxModelDir, type OnnxModelSpec } from './onnx-model-config';
import { LLAMA_GUARD_TYPES } from './llm-judge-prompt';
import { MODERATION_TYPES } from './openai-moderation-backend';
import type { ResilienceOptions } from './resilient-backend';

/**
 * Turns the raw CLASSIFIER_* / OPENAI_MODERATION_* / HTTP_CLASSIFIER_* / LLM_JUDGE_* fields of Config into
 * a checked backend configuration. Every problem is reported at once as a ConfigError naming the variable.
 *
 * CLASSIFIER_BACKENDS grammar: `entry (";" entry)*`, entry = `types "=" backends`, both comma lists.
 * types: a classifier type, `moderated_content/*` (the 13 moderation types) or `*` (all 15); backends:
 * builtin, openai-moderation, http-classifier, llm-judge, onnx. Later entries override earlier ones; a type no
 * entry names uses builtin. Two or more backends for one type: the highest score wins, and the type is
 * scanned as long as one of them answers (composite-backend.ts).
 *   e.g. `prompt_attack,jailbreak=builtin,http-classifier;moderated_content/*=openai-moderation`
 * onnx reads its model directory (ONNX_MODEL_DIR) here, so a bad directory fails the start, not a request.
 */

export const BACKEND_NAMES = ['builtin', 'openai-moderation', 'http-classifier', 'llm-judge', 'onnx'] as const;
export type BackendName = (typeof BACKEND_NAMES)[number];

export type ClassifierEnv = Pick<
  Config,
  | 'CLASSIFIER_BACKENDS'
  | 'OPENAI_MODERATION_URL'
  | 'OPENAI_MODERATION_API_KEY'
  | 'OPENAI_MODERATION_MODEL'
  | 'HTTP_CLASSIFIER_URL'
  | 'HTTP_CLASSIFIER_PATH'
  | 'HTTP_CLASSIFIER_API_KEY'
  | 'HTTP_CLASSIFIER_LABELS'
  | 'HTTP_CLASSIFIER_MAX_CHARS'
  | 'LLM_JUDGE_URL'
  | 'LLM_JUDGE_API_KEY'
  | 'LLM_JUDGE_MODEL'
  | 'LLM_JUDGE_FORMAT'
  | 'ONNX_MODEL_DIR'
  | 'ONNX_THREADS'
  | 'ONNX_MAX_CONCURRENCY'
  | 'ONNX_TIMEOUT_MS'
  | 'CLASSIFIER_TIMEOUT_MS'
  | 'CLASSIFIER_MAX_CONCURRENCY'
  | 'CLASSIFIER_MAX_QUEUE'
  | 'CLASSIFIER_CACHE_SIZE'
  | 'CLASSIFIER_CACHE_TTL_MS'
  | 'CLASSIFIER_BREAKER_FAILURES'
  | 'CLASSIFIER_BREAKER_COOLDOWN_MS'
>;

export interface ClassifierBackendsConfig {
  /** Every classifier type → the backends that score it (one or more, in configuration order). */
  assignments: ReadonlyMap<ClassifierType, readonly BackendName[]>;
  openaiModeration?: { baseUrl: string; apiKey?: string; model: string };
  httpClassifier?: { baseUrl: string; path: string; apiKey?: string; labels: ReadonlyMap<string, ClassifierType>; maxChars: number };
  llmJudge?: { baseUrl: string; apiKey?: string; model: string; format: JudgeFormat };
  onnx?: { spec: OnnxModelSpec; threads: number; maxConcurrency: number; timeoutMs: number };
  resilience: ResilienceOptions;
}

const MODERATION_WILDCARD = 'moderated_content/*';

export function parseClassifierBackendsConfig(env: ClassifierEnv): ClassifierBackendsConfig {
  const problems: string[] = [];
  const assignments = parseAssignments(env.CLASSIFIER_BACKENDS ?? '', problems);
  const typesOf = (name: BackendName) => [...assignments].filter(([, names]) => names.includes(name)).map(([t]) => t);
  const used = new Set([...assignments.values()].flat());
  const config: ClassifierBackendsConfig = { assignments, resilience: resilienceOf(env) };

  if (used.has('openai-moderation')) {
    const wrong = typesOf('openai-moderation').filter((t) => !MODERATION_TYPES.includes(t));
    if (wrong.length > 0) problems.push(`CLASSIFIER_BACKENDS: openai-moderation only scores moderated_content/* (not ${wrong.join(', ')})`);
    if (!env.OPENAI_MODERATION_API_KEY && /^https:\/\/api\.openai\.com(\/|$)/i.test(env.OPENAI_MODERATION_URL)) {
      problems.push('OPENAI_MODERATION_API_KEY: required when openai-moderation is used with https://api.openai.com');
    }
    config.openaiModeration = { baseUrl: env.OPENAI_MODERATION_URL, apiKey: env.OPENAI_MODERATION_API_KEY, model: env.OPENAI_MODERATION_MODEL };
  }
  if (used.has('http-classifier')) {
    const labels = parseLabels(env.HTTP_CLASSIFIER_LABELS, problems);
    const covered = new Set(labels.values());
    const wrong = typesOf('http-classifier').filter((t) => !covered.has(t));
    if (wrong.length > 0 && labels.size > 0) {
      problems.push(`CLASSIFIER_BACKENDS: http-classifier has no label for ${wrong.join(', ')} (see HTTP_CLASSIFIER_LABELS)`);
    }
    if (!env.HTTP_CLASSIFIER_URL) problems.push('HTTP_CLASSIFIER_URL: required when http-classifier is used');
    else {
      config.httpClassifier = {
        baseUrl: env.HTTP_CLASSIFIER_URL,
        path: env.HTTP_CLASSIFIER_PATH,
        apiKey: env.HTTP_CLASSIFIER_API_KEY,
        labels,
        maxChars: env.HTTP_CLASSIFIER_MAX_CHARS,
      };
    }
  }
  if (used.has('llm-judge')) {
    if (env.LLM_JUDGE_FORMAT === 'llama_guard') {
      const wrong = typesOf('llm-judge').filter((t) => !LLAMA_GUARD_TYPES.includes(t));
      if (wrong.length > 0) problems.push(`CLASSIFIER_BACKENDS: llm-judge with LLM_JUDGE_FORMAT=llama_guard cannot score ${wrong.join(', ')}`);
    }
    if (!env.LLM_JUDGE_URL) problems.push('LLM_JUDGE_URL: required when llm-judge is used');
    if (!env.LLM_JUDGE_MODEL) problems.push('LLM_JUDGE_MODEL: required when llm-judge is used');
    if (env.LLM_JUDGE_URL && env.LLM_JUDGE_MODEL) {
      config.llmJudge = { baseUrl: env.LLM_JUDGE_URL, apiKey: env.LLM_JUDGE_API_KEY, model: env.LLM_JUDGE_MODEL, format: env.LLM_JUDGE_FORMAT };
    }
  }
  if (used.has('onnx')) config.onnx = onnxOf(env, typesOf('onnx'), problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

function onnxOf(env: ClassifierEnv, types: ClassifierType[], problems: string[]): ClassifierBackendsConfig['onnx'] {
  if (!env.ONNX_MODEL_DIR) {
    problems.push('ONNX_MODEL_DIR: required when onnx is used (a directory with model.onnx, tokenizer.json and config.json)');
    return undefined;
  }
  try {
    const spec = readOnnxModelDir(env.ONNX_MODEL_DIR, types);
    return { spec, threads: env.ONNX_THREADS, maxConcurrency: env.ONNX_MAX_CONCURRENCY, timeoutMs: env.ONNX_TIMEOUT_MS };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
    return undefined;
  }
}

function resilienceOf(env: ClassifierEnv): ResilienceOptions {
  return {
    timeoutMs: env.CLASSIFIER_TIMEOUT_MS,
    maxConcurrency: env.CLASSIFIER_MAX_CONCURRENCY,
    maxQueue: env.CLASSIFIER_MAX_QUEUE,
    cacheSize: env.CLASSIFIER_CACHE_SIZE,
    cacheTtlMs: env.CLASSIFIER_CACHE_TTL_MS,
    breakerFailures: env.CLASSIFIER_BREAKER_FAILURES,
    breakerCooldownMs: env.CLASSIFIER_BREAKER_COOLDOWN_MS,
  };
}

function parseAssignments(spec: string, problems: string[]): Map<ClassifierType, readonly BackendName[]> {
  const out = new Map<ClassifierType, readonly BackendName[]>(CLASSIFIER_TYPES.map((t) => [t, ['builtin']]));
  for (const raw of spec.split(';')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const parts = entry.split('=');
    if (parts.length !== 2) {
      problems.push(`CLASSIFIER_BACKENDS: "${entry}" must be of the form types=backends`);
      continue;
    }
    const types = expandTypes(parts[0] as string, problems);
    const names = parseNames(parts[1] as string, entry, problems);
    if (names.length === 0) continue;
    for (const t of types) out.set(t, names);
  }
  return out;
}

function expandTypes(list: string, problems: string[]): ClassifierType[] {
  const before = problems.length;
  const out: ClassifierType[] = [];
  for (const token of splitList(list)) {
    if (token === '*') out.push(...CLASSIFIER_TYPES);
    else if (token === MODERATION_WILDCARD) out.push(...MODERATION_TYPES);
    else if ((CLASSIFIER_TYPES as readonly string[]).includes(token)) out.push(token as ClassifierType);
    else {
      problems.push(
        `CLASSIFIER_BACKENDS: unknown classifier type "${token}" (expected prompt_attack, jailbreak, moderated_content/<name>, ${MODERATION_WILDCARD} or *)`,
      );
    }
  }
  if (out.length === 0 && problems.length === before) problems.push('CLASSIFIER_BACKENDS: an entry names no type');
  return [...new Set(out)];
}

function parseNames(list: string, entry: string, problems: string[]): BackendName[] {
  const names = splitList(list);
  const unknown = names.filter((n) => !(BACKEND_NAMES as readonly string[]).includes(n));
  if (unknown.length > 0) {
    problems.push(`CLASSIFIER_BACKENDS: unknown backend "${unknown.join('", "')}" (expected ${BACKEND_NAMES.join(', ')})`);
    return [];
  }
  if (names.length === 0) problems.push(`CLASSIFIER_BACKENDS: "${entry}" names no backend`);
  return [...new Set(names)] as BackendName[];
}

/** `LABEL=type,LABEL=type`; labels are matched case-insensitively, so they are stored upper-case. */
export function parseLabels(spec: string, problems: string[]): Map<string, ClassifierType> {
  const before = problems.length;
  const out = new Map<string, ClassifierType>();
  for (const item of splitList(spec)) {
    const m = /^([^=\s][^=]*?)\s*=\s*(\S+)$/.exec(item);
    const type = m?.[2];
    if (!m || !type) {
      problems.push(`HTTP_CLASSIFIER_LABELS: "${item}" must be of the form LABEL=detector_type`);
      continue;
    }
    if (!(CLASSIFIER_TYPES as readonly string[]).includes(type)) {
      problems.push(`HTTP_CLASSIFIER_LABELS: "${type}" is not a classifier type`);
      continue;
    }
    const label = (m[1] as string).toUpperCase();
    if (out.has(label)) problems.push(`HTTP_CLASSIFIER_LABELS: label "${label}" is mapped twice`);
    out.set(label, type as ClassifierType);
  }
  if (out.size === 0 && problems.length === before) problems.push('HTTP_CLASSIFIER_LABELS: no LABEL=detector_type mapping');
  return out;
}

function splitList(list: string): string[] {
  return list.split(',').map((s) => s.trim()).filter((s) => s !== '');
}
