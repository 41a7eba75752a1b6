import type { FastifyRequest } from 'fastify';
import { request as upstreamRequest, type Dispatcher } from 'undici';
import { AppError } from '../../shared/errors';
import { discardBody, upstreamTransportError } from '../../shared/http/upstream';
import type { HttpMetrics } from '../../shared/metrics/process-metrics';
import type { RecordedAttempt } from '../../storage/entities/security-event.entity';
import { DEFAULT_RETRY, type ProviderConfig, type ProvidersConfig, type RetrySettings, type RouteConfig, type RouteTarget } from './providers-file';

/**
 * Every call of the gateway's proxy routes to an OpenAI-compatible upstream (chat completions,
 * embeddings, models, responses): `callUpstream`. Without PROVIDERS_FILE it is one request to
 * OPENAI_BASE_URL, as it always was (no retries). With it (docs/providers.md) the request's model picks
 * a route, and the route's targets are tried in order: each one retried on 429, 5xx and connection
 * failures with exponential backoff and jitter (Retry-After respected), then the next target (fallback).
 * All of it happens before the answer is handed to the route, so before any byte reached the client:
 * once an answer (or a stream's headers) is returned, nothing is retried.
 */

/** The provider name of the single OPENAI_BASE_URL upstream (audit events, metrics). */
export const SINGLE_PROVIDER = 'openai';

/** What a gateway route needs to call the OpenAI-compatible upstream. */
export interface UpstreamCallDeps {
  /** OPENAI_BASE_URL (with its /v1). */
  upstreamBaseUrl: string;
  /** OPENAI_API_KEY: the gateway's own upstream credential (a caller's gateway key never goes upstream). */
  upstreamApiKey?: string;
  upstreamTimeoutMs?: number;
  /** Upstream latency and error statuses (docs/metrics.md). */
  metrics?: HttpMetrics;
  /** PROVIDERS_FILE: named providers, routes by model, retries and fallback; the single upstream above when absent. */
  providers?: ProvidersConfig;
  /** Waits between attempts and their jitter (tests inject both); real timers and Math.random by default. */
  retryTiming?: RetryTiming;
}

export interface RetryTiming {
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  random(): number;
}

/** Request headers passed to the upstream (the caller's Authorization — our key — never is). */
const FORWARDED = /^(accept|accept-language|user-agent|openai-organization|openai-project|openai-beta|x-stainless-[a-z-]+|idempotency-key)$/;

/** The upstream request's headers: the forwarded client headers and the gateway's own credential (`withBody`: a JSON content type). */
export function upstreamHeaders(request: FastifyRequest, apiKey: string | undefined, withBody = true): Record<string, string> {
  const out: Record<string, string> = withBody ? { 'content-type': 'application/json' } : {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string' && FORWARDED.test(name)) out[name] = value;
  }
  if (apiKey) out.authorization = `Bearer ${apiKey}`;
  return out;
}

export interface UpstreamCallOptions {
  method: 'GET' | 'POST' | 'DELETE';
  /** Below the provider's base URL (`/chat/completions`); a function of the target's model when the path names it (`/models/{id}`). */
  path: string | ((model: string | undefined) => string);
  body?: Buffer;
  /** The request's model: picks the route (PROVIDERS_FILE). Absent: the default route. */
  model?: string;
}

// ---------------------------------------------------------------------------------------------------
// Routing

/** Whether `name` matches the glob `pattern` (`*` any characters, `?` one; anything else literal). Linear backtracking, no regex. */
export function globMatch(pattern: string, name: string): boolean {
  let p = 0;
  let n = 0;
  let star = -1;
  let mark = 0;
  while (n < name.length) {
    if (p < pattern.length && (pattern[p] === '?' || pattern[p] === name[n])) {
      p++;
      n++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      mark = n;
    } else if (star >= 0) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

export const isGlob = (pattern: string): boolean => pattern.includes('*') || pattern.includes('?');

/**
 * The route of a model: the first route whose `match` matches it, else the default route. A request
 * without a model takes the default route, or the first route when the file has no default.
 */
export function routeFor(config: ProvidersConfig, model: string | undefined): RouteConfig | undefined {
  if (model === undefined) return config.default ?? config.routes[0];
  return config.routes.find((r) => globMatch(r.match, model)) ?? config.default;
}

/** The retry settings of one target: defaults, then the file's `retry`, the provider's, the route's (most specific last). */
export function retrySettingsFor(config: ProvidersConfig, provider: ProviderConfig, route: RouteConfig): RetrySettings {
  return { ...DEFAULT_RETRY, ...config.retry, ...provider.retry, ...route.retry };
}

// ---------------------------------------------------------------------------------------------------
// Backoff

/** Exponential backoff with jitter before retry number `retry` (0 = the first retry): a random point in [d/2, d], d = min(max, initial·2^retry). */
export function backoffDelay(retry: number, s: Pick<RetrySettings, 'initialDelayMs' | 'maxDelayMs'>, random: () => number): number {
  const full = Math.min(s.maxDelayMs, s.initialDelayMs * 2 ** Math.min(retry, 30));
  return Math.round(full / 2 + (random() * full) / 2);
}

/**
 * The wait an answer asks for, in ms: `retry-after-ms` (OpenAI, Azure), else `Retry-After` in seconds
 * or as an HTTP date (relative to `now`). Undefined when absent or unreadable.
 */
export function retryAfterMs(headers: Record<string, string | string[] | undefined>, now: number): number | undefined {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.trim();
  const msHeader = one(headers['retry-after-ms']);
  if (msHeader && /^\d+(\.\d+)?$/.test(msHeader)) return Math.ceil(Number(msHeader));
  const header = one(headers['retry-after']);
  if (!header) return undefined;
  if (/^\d+(\.\d+)?$/.test(header)) return Math.ceil(Number(header) * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * How long to wait before retrying the same target after a retryable failure, or `null` to leave it:
 * no retries left, or a Retry-After longer than `maxRetryAfterMs` (retrying sooner than the provider
 * asks is pointless: the next target is tried at once instead). A Retry-After within the cap is waited
 * exactly; without one, the backoff.
 */
export function nextWait(retriesDone: number, s: RetrySettings, retryAfter: number | undefined, random: () => number): number | null {
  if (retriesDone >= s.maxRetries) return null;
  if (retryAfter !== undefined) return retryAfter > s.maxRetryAfterMs ? null : retryAfter;
  return backoffDelay(retriesDone, s, random);
}

// ---------------------------------------------------------------------------------------------------
// Request shaping

/**
 * `body` with the top-level `model` string replaced by `model`, every other byte unchanged (a byte-level
 * scan of the JSON: strings and nesting tracked, keys decoded, so an escaped `"mod\u0065l"` counts).
 * Unchanged when the body is not an object with a string `model`.
 */
export function rewriteModel(body: Buffer, model: string): Buffer {
  const spans: Array<[number, number]> = [];
  const n = body.length;
  const stringEnd = (start: number): number => {
    for (let j = start + 1; j < n; j++) {
      const c = body[j];
      if (c === 0x5c) j++;
      else if (c === 0x22) return j;
    }
    return -1;
  };
  const skipWs = (j: number): number => {
    while (j < n && (body[j] === 0x20 || body[j] === 0x09 || body[j] === 0x0a || body[j] === 0x0d)) j++;
    return j;
  };
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < n; i++) {
    const c = body[i];
    if (c === 0x22) {
      const end = stringEnd(i);
      if (end < 0) return body;
      if (depth === 1 && expectKey) {
        expectKey = false;
        let key: unknown;
        try {
          key = JSON.parse(body.toString('utf8', i, end + 1));
        } catch {
          return body;
        }
        const colon = skipWs(end + 1);
        const value = skipWs(colon + 1);
        if (key === 'model' && body[colon] === 0x3a && body[value] === 0x22) {
          const valueEnd = stringEnd(value);
          if (valueEnd < 0) return body;
          spans.push([value, valueEnd + 1]);
          i = valueEnd;
          continue;
        }
      }
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      expectKey = c === 0x7b && depth === 1;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    } else if (c === 0x2c && depth === 1) {
      expectKey = true;
    }
  }
  if (spans.length === 0) return body;
  const parts: Buffer[] = [];
  let at = 0;
  const replacement = Buffer.from(JSON.stringify(model), 'utf8');
  for (const [start, end] of spans) {
    parts.push(body.subarray(at, start), replacement);
    at = end;
  }
  parts.push(body.subarray(at));
  return Buffer.concat(parts);
}

/** Azure OpenAI paths served per deployment (`/openai/deployments/{deployment}{path}`); the others live under `/openai{path}`. */
const AZURE_DEPLOYMENT_PATHS = new Set(['/chat/completions', '/completions', '/embeddings']);

/**
 * The URL of `path` (with its query) at `provider`: the base URL and the path for OpenAI-compatible
 * providers; for Azure, `{endpoint}/openai/deployments/{deployment}{path}?api-version=…` for the
 * deployment paths (the model's deployment, else the model's own name), `{endpoint}/openai{path}?api-version=…` otherwise.
 */
export function providerUrl(provider: ProviderConfig, path: string, model: string | undefined): string {
  if (provider.kind !== 'azure') return `${provider.baseUrl}${path}`;
  const q = path.indexOf('?');
  const pathname = q < 0 ? path : path.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : path.slice(q + 1));
  query.set('api-version', provider.apiVersion ?? '');
  const deployment = model === undefined ? undefined : (provider.deployments[model] ?? model);
  const prefix = deployment !== undefined && AZURE_DEPLOYMENT_PATHS.has(pathname) ? `/openai/deployments/${encodeURIComponent(deployment)}` : '/openai';
  return `${provider.baseUrl}${prefix}${pathname}?${query.toString()}`;
}

/**
 * The `model` the body sends: the target's model; for Azure outside the deployment paths (`/responses`)
 * its deployment name, which is how those Azure APIs name the model.
 */
export function bodyModel(provider: ProviderConfig, path: string, model: string | undefined): string | undefined {
  if (provider.kind !== 'azure' || model === undefined) return model;
  const q = path.indexOf('?');
  return AZURE_DEPLOYMENT_PATHS.has(q < 0 ? path : path.slice(0, q)) ? model : (provider.deployments[model] ?? model);
}

/** The provider's credential header: `api-key` for Azure, `Authorization: Bearer` otherwise. */
function providerHeaders(request: FastifyRequest, provider: ProviderConfig, withBody: boolean): Record<string, string> {
  if (provider.kind !== 'azure') return upstreamHeaders(request, provider.apiKey?.reveal(), withBody);
  const headers = upstreamHeaders(request, undefined, withBody);
  if (provider.apiKey) headers['api-key'] = provider.apiKey.reveal();
  return headers;
}

// ---------------------------------------------------------------------------------------------------
// Attempts

export type TransportKind = 'connect_error' | 'connect_timeout' | 'connection_reset' | 'timeout' | 'transport_error' | 'aborted';

const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/** What kind of transport failure `err` is (`aborted`: the caller went away). */
export function transportKind(err: unknown, signal: AbortSignal): TransportKind {
  if (signal.aborted) return 'aborted';
  const codes = [(err as { code?: unknown })?.code, (err as { cause?: { code?: unknown } })?.cause?.code].filter((c): c is string => typeof c === 'string');
  if (codes.includes('UND_ERR_CONNECT_TIMEOUT')) return 'connect_timeout';
  if (codes.includes('UND_ERR_HEADERS_TIMEOUT') || codes.includes('UND_ERR_BODY_TIMEOUT')) return 'timeout';
  if (codes.some((c) => CONNECT_CODES.has(c))) return 'connect_error';
  if (codes.some((c) => RESET_CODES.has(c))) return 'connection_reset';
  return 'transport_error';
}

/** Retried (and fallen back from): connection failures. A timeout is not (the provider may still be working on it). */
const RETRYABLE_TRANSPORT = new Set<TransportKind>(['connect_error', 'connect_timeout', 'connection_reset']);
export const isRetryableStatus = (status: number): boolean => status === 429 || status >= 500;

/** One attempt's result: an answer (headers received) or a transport failure. */
export type AttemptOutcome = { response: Dispatcher.ResponseData } | { error: unknown; kind: TransportKind };

export interface AttemptPlan {
  targets: Array<{ target: RouteTarget; provider: ProviderConfig; retry: RetrySettings }>;
}

export interface AttemptHooks {
  send(target: AttemptPlan['targets'][number]): Promise<AttemptOutcome>;
  timing: RetryTiming;
  signal: AbortSignal;
  now(): number;
  onRetry?(provider: string): void;
  onFallback?(from: string, to: string): void;
}

/**
 * Tries the plan's targets in order: each retried while its failure is retryable and it has retries
 * left, then the next target. Returns the first non-retryable outcome (a success, a 4xx that another
 * attempt would not change, a timeout), else the last attempt's outcome (an answer or a transport
 * failure). Bodies of answers not returned are discarded. Throws only when the wait is aborted.
 */
export async function runAttempts(plan: AttemptPlan, hooks: AttemptHooks): Promise<AttemptOutcome> {
  let last: AttemptOutcome | undefined;
  for (let t = 0; t < plan.targets.length; t++) {
    const entry = plan.targets[t]!;
    if (t > 0) hooks.onFallback?.(plan.targets[t - 1]!.provider.name, entry.provider.name);
    for (let retries = 0; ; retries++) {
      if (last && 'response' in last) discardBody(last.response.body);
      last = await hooks.send(entry);
      let wait: number | null;
      if ('response' in last) {
        if (!isRetryableStatus(last.response.statusCode)) return last;
        wait = nextWait(retries, entry.retry, retryAfterMs(last.response.headers, hooks.now()), hooks.timing.random);
      } else {
        if (!RETRYABLE_TRANSPORT.has(last.kind)) return last;
        wait = nextWait(retries, entry.retry, undefined, hooks.timing.random);
      }
      if (wait === null) break;
      hooks.onRetry?.(entry.provider.name);
      try {
        await hooks.timing.sleep(wait, hooks.signal);
      } catch (err) {
        if ('response' in last) discardBody(last.response.body);
        throw err;
      }
    }
  }
  return last!;
}

const realTiming: RetryTiming = {
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
    }),
  random: Math.random,
};

/** The 404 of a model no route (and no default) takes. */
export function notRoutableError(model: string | undefined): AppError {
  return new AppError('not_found', `No provider serves the model '${model ?? ''}': it matches no route of the gateway's providers file`, {
    code: 'model_not_found',
  });
}

function noteAttempts(request: FastifyRequest, provider: string | undefined, attempts: RecordedAttempt[]): void {
  request.audit ??= {};
  if (provider !== undefined) request.audit.provider = provider;
  request.audit.upstreamAttempts = [...(request.audit.upstreamAttempts ?? []), ...attempts];
}

const pathOf = (o: UpstreamCallOptions, model: string | undefined) => (typeof o.path === 'function' ? o.path(model) : o.path);

/**
 * One call to the upstream: the forwarded headers and the gateway's own credential, the timeouts, the
 * caller's abort; a transport failure becomes our 502/504 error. The provider and every attempt go to
 * the request's audit draft. With PROVIDERS_FILE: routed by `o.model`, retried and fallen back (see above).
 */
export async function callUpstream(deps: UpstreamCallDeps, request: FastifyRequest, signal: AbortSignal, o: UpstreamCallOptions): Promise<Dispatcher.ResponseData> {
  if (!deps.providers) return callSingle(deps, request, signal, o);
  const config = deps.providers;
  const route = routeFor(config, o.model);
  if (!route) throw notRoutableError(o.model);
  const plan: AttemptPlan = {
    targets: route.targets.map((target) => {
      const provider = config.providers.get(target.provider)!;
      return { target, provider, retry: retrySettingsFor(config, provider, route) };
    }),
  };
  return executePlan(deps, request, signal, o, plan, true);
}

/**
 * One call to one named provider (its own retry settings, no fallback): GET /v1/models asks each
 * provider for its list this way. Its attempts join the request's audit draft; the provider is not
 * noted as the request's (a listing asks several).
 */
export function callProvider(deps: UpstreamCallDeps & { providers: ProvidersConfig }, request: FastifyRequest, signal: AbortSignal, providerName: string, o: UpstreamCallOptions): Promise<Dispatcher.ResponseData> {
  const provider = deps.providers.providers.get(providerName);
  if (!provider) throw new AppError('internal_error', `Unknown provider ${providerName}`);
  const retry = { ...DEFAULT_RETRY, ...deps.providers.retry, ...provider.retry };
  return executePlan(deps, request, signal, o, { targets: [{ target: { provider: providerName }, provider, retry }] }, false);
}

async function executePlan(
  deps: UpstreamCallDeps,
  request: FastifyRequest,
  signal: AbortSignal,
  o: UpstreamCallOptions,
  plan: AttemptPlan,
  noteProvider: boolean,
): Promise<Dispatcher.ResponseData> {
  const attempts: RecordedAttempt[] = [];
  let provider = plan.targets[0]!.provider.name;
  const note = () => noteAttempts(request, noteProvider ? provider : undefined, attempts);
  const outcome = await runAttempts(plan, {
    timing: deps.retryTiming ?? realTiming,
    signal,
    now: Date.now,
    onRetry: (name) => deps.metrics?.upstreamRetry(name),
    onFallback: (from, to) => deps.metrics?.upstreamFallback(from, to),
    send: async ({ target, provider: p }) => {
      provider = p.name;
      const model = target.model ?? o.model;
      const path = pathOf(o, model);
      const sent = bodyModel(p, path, model);
      const body = o.body && sent !== undefined && sent !== o.model ? rewriteModel(o.body, sent) : o.body;
      const started = performance.now();
      const attempt: RecordedAttempt = { provider: p.name, model: model ?? null, status: null, error: null, duration_ms: 0 };
      attempts.push(attempt);
      try {
        const response = await upstreamRequest(providerUrl(p, path, model), {
          method: o.method,
          headers: providerHeaders(request, p, body !== undefined),
          body,
          signal,
          headersTimeout: p.timeoutMs ?? deps.upstreamTimeoutMs ?? 600_000,
          bodyTimeout: p.timeoutMs ?? deps.upstreamTimeoutMs ?? 600_000,
        });
        attempt.status = response.statusCode;
        deps.metrics?.upstreamAnswered(started, response.statusCode, p.name);
        return { response };
      } catch (error) {
        const kind = transportKind(error, signal);
        attempt.error = kind;
        deps.metrics?.upstreamAttemptFailed(p.name, kind);
        return { error, kind };
      } finally {
        attempt.duration_ms = elapsedMs(started);
      }
    },
  }).catch((err: unknown) => {
    // The wait between attempts ended because the caller went away.
    note();
    throw upstreamTransportError(err);
  });
  note();
  if ('error' in outcome) throw upstreamTransportError(outcome.error);
  return outcome.response;
}

const elapsedMs = (started: number) => Math.round((performance.now() - started) * 1000) / 1000;

/** Without PROVIDERS_FILE: one request to OPENAI_BASE_URL, never retried (the behaviour before providers existed). */
async function callSingle(deps: UpstreamCallDeps, request: FastifyRequest, signal: AbortSignal, o: UpstreamCallOptions): Promise<Dispatcher.ResponseData> {
  const started = performance.now();
  const attempt: RecordedAttempt = { provider: SINGLE_PROVIDER, model: o.model ?? null, status: null, error: null, duration_ms: 0 };
  let upstream: Dispatcher.ResponseData;
  try {
    upstream = await upstreamRequest(`${deps.upstreamBaseUrl}${pathOf(o, o.model)}`, {
      method: o.method,
      headers: upstreamHeaders(request, deps.upstreamApiKey, o.body !== undefined),
      body: o.body,
      signal,
      headersTimeout: deps.upstreamTimeoutMs ?? 600_000,
      bodyTimeout: deps.upstreamTimeoutMs ?? 600_000,
    });
  } catch (err) {
    attempt.error = transportKind(err, signal);
    attempt.duration_ms = elapsedMs(started);
    deps.metrics?.upstreamAttemptFailed(SINGLE_PROVIDER, attempt.error);
    noteAttempts(request, SINGLE_PROVIDER, [attempt]);
    throw upstreamTransportError(err);
  }
  attempt.status = upstream.statusCode;
  attempt.duration_ms = elapsedMs(started);
  noteAttempts(request, SINGLE_PROVIDER, [attempt]);
  deps.metrics?.upstreamAnswered(started, upstream.statusCode);
  return upstream;
}
