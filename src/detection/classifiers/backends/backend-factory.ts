import type { Agent } from 'undici';
import { ConfigError } from '../../../shared/config';
import { CLASSIFIER_TYPES, type ClassifierBackend, type ClassifierType } from '../backend';
import type { BackendName, ClassifierBackendsConfig } from './classifier-config';
import { CompositeBackend } from './composite-backend';
import { HttpClassifierBackend } from './http-classifier-backend';
import { createKeepAliveAgent } from './http-json';
import { LlmJudgeBackend } from './llm-judge-backend';
import { OnnxClassifierBackend } from './onnx-classifier-backend';
import { OpenAiModerationBackend } from './openai-moderation-backend';
import { ResilientBackend, type BackendStats, type ResilienceOptions } from './resilient-backend';

/**
 * Turns a checked ClassifierBackendsConfig into one backend per classifier type.
 *
 * - Each backend named in the configuration is built ONCE, for the union of the types assigned to it;
 *   external ones are wrapped in a ResilientBackend (one cache, breaker, semaphore and keep-alive pool
 *   each). The in-process onnx backend is wrapped the same way (its own timeout and run bound); its
 *   model loads in the background and `ready()` reports a model that cannot be used. The builtin
 *   backend is injected (it lives in ../builtin) and is used as is.
 * - A type with one backend maps to that instance; types with the same list of two or more backends
 *   share one CompositeBackend (highest score wins; stands while any member answers).
 * So `byType` values are shared: the router should group the requested types by backend instance and
 * call `classify` once per instance and window (and pick the types it needs from the scores).
 */

export interface BuildClassifierBackendsDeps {
  /** The in-process model backend; required when any type uses `builtin` (the default). */
  builtin?: ClassifierBackend | (() => ClassifierBackend);
  /** Clock for breakers and caches (tests). */
  now?: () => number;
}

export interface ClassifierBackends {
  /** Every classifier type → the backend that scores it. */
  byType: ReadonlyMap<ClassifierType, ClassifierBackend>;
  /** The resilient wrappers of the external backends, for metrics. */
  external: readonly ResilientBackend[];
  stats(): BackendStats[];
  /** Settles once every in-process model is loaded; rejects with a ConfigError naming the problem. */
  ready(): Promise<void>;
  /** Closes the keep-alive connection pools and releases the in-process models (call on shutdown). */
  close(): Promise<void>;
}

export function buildClassifierBackends(config: ClassifierBackendsConfig, deps: BuildClassifierBackendsDeps = {}): ClassifierBackends {
  const typesOf = (name: BackendName) => CLASSIFIER_TYPES.filter((t) => config.assignments.get(t)?.includes(name));
  const agents: Agent[] = [];
  const instances = new Map<BackendName, ClassifierBackend>();
  const external: ResilientBackend[] = [];
  const models: OnnxClassifierBackend[] = [];
  const resilient = (inner: ClassifierBackend, overrides: Partial<ResilienceOptions> = {}) => {
    if (inner instanceof OnnxClassifierBackend) models.push(inner);
    const wrapped = new ResilientBackend(inner, { ...config.resilience, ...overrides, now: deps.now ?? config.resilience.now });
    external.push(wrapped);
    return wrapped;
  };
  const agent = () => {
    const a = createKeepAliveAgent({ connections: config.resilience.maxConcurrency });
    agents.push(a);
    return a;
  };

  for (const name of new Set(CLASSIFIER_TYPES.flatMap((t) => config.assignments.get(t) ?? []))) {
    const types = typesOf(name);
    instances.set(name, buildOne({ name, types, config, deps, resilient, agent }));
  }

  const byType = new Map<ClassifierType, ClassifierBackend>();
  const composites = new Map<string, CompositeBackend>();
  for (const type of CLASSIFIER_TYPES) {
    const names = config.assignments.get(type) ?? ['builtin'];
    const members = names.map((n) => instances.get(n) as ClassifierBackend);
    if (members.length === 1) {
      byType.set(type, members[0] as ClassifierBackend);
      continue;
    }
    const key = names.join(',');
    let composite = composites.get(key);
    if (!composite) {
      const sameList = CLASSIFIER_TYPES.filter((t) => (config.assignments.get(t) ?? []).join(',') === key);
      composite = new CompositeBackend(members, sameList);
      composites.set(key, composite);
    }
    byType.set(type, composite);
  }
  return {
    byType,
    external,
    stats: () => external.map((b) => b.stats()),
    ready: async () => {
      await Promise.all(models.map((m) => m.ready));
    },
    close: async () => {
      await Promise.all([...agents.map((a) => a.close()), ...models.map((m) => m.close())]);
    },
  };
}

interface BuildOneArgs {
  name: BackendName;
  types: ClassifierType[];
  config: ClassifierBackendsConfig;
  deps: BuildClassifierBackendsDeps;
  resilient: (inner: ClassifierBackend, overrides?: Partial<ResilienceOptions>) => ResilientBackend;
  agent: () => Agent;
}

function buildOne({ name, types, config, deps, resilient, agent }: BuildOneArgs): ClassifierBackend {
  switch (name) {
    case 'builtin': {
      const builtin = typeof deps.builtin === 'function' ? deps.builtin() : deps.builtin;
      if (!builtin) throw new Error('the builtin classifier backend was not provided to buildClassifierBackends');
      const missing = types.filter((t) => !builtin.types.includes(t));
      if (missing.length > 0) throw new ConfigError([`CLASSIFIER_BACKENDS: builtin cannot score ${missing.join(', ')}`]);
      return builtin;
    }
    case 'openai-moderation': {
      const o = required(config.openaiModeration, name);
      return resilient(new OpenAiModerationBackend({ ...o, types, dispatcher: agent() }));
    }
    case 'http-classifier': {
      const o = required(config.httpClassifier, name);
      // Labels of types assigned to other backends are ignored (the instance reports only its own types).
      const labels = new Map([...o.labels].filter(([, t]) => types.includes(t)));
      return resilient(new HttpClassifierBackend({ ...o, labels, dispatcher: agent() }));
    }
    case 'llm-judge': {
      const o = required(config.llmJudge, name);
      return resilient(new LlmJudgeBackend({ ...o, types, dispatcher: agent() }));
    }
    case 'onnx': {
      // In process, but wrapped all the same: its own timeout and run bound, plus the shared cache and breaker.
      const o = required(config.onnx, name);
      const backend = new OnnxClassifierBackend({ spec: o.spec, types, threads: o.threads, maxConcurrency: o.maxConcurrency });
      return resilient(backend, { timeoutMs: o.timeoutMs, maxConcurrency: o.maxConcurrency });
    }
  }
}

function required<T>(value: T | undefined, name: BackendName): T {
  if (!value) throw new Error(`settings of the ${name} backend are missing (use parseClassifierBackendsConfig)`);
  return value;
}
