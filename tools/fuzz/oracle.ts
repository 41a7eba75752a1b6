import type { RawOutcome, RawResponse } from './raw-http';
import type { FuzzTarget } from './targets';

/**
 * What counts as a correct answer to a fuzzed request. Failures: no answer within the deadline (hang),
 * the connection closed without an answer, a status ≥ 500 other than a documented one, an error body
 * outside the spec's envelope (the messages-API shape on the sensor), a JSON 200 that is not JSON where
 * it must be, a GraphQL error masked as internal_error, a stream cut that the upstream did not cause.
 *
 * Documented ≥ 500 answers: 503 `detection_unavailable` (detection overran DETECTION_TIMEOUT_MS, fail
 * closed), `detection_overloaded` (admission queue full), `storage_unavailable`, `shutting_down`; on the proxies, 502 `upstream_unavailable` /
 * `upstream_invalid` and 504 `upstream_timeout` (the fuzz upstream cuts, stalls and garbles answers),
 * and an upstream's own 5xx relayed (the status the fuzz upstream was told to send).
 */
export interface Expectation {
  target: FuzzTarget;
  method: string;
  /** Statuses the fuzz upstream may have answered this case with (relayed by the proxies). */
  upstreamStatuses: ReadonlySet<number>;
  /** The fuzz upstream cuts or stalls this case's answer. */
  upstreamBreaks: boolean;
}

const DOCUMENTED_5XX: Record<number, readonly string[]> = {
  503: ['detection_unavailable', 'detection_overloaded', 'storage_unavailable', 'shutting_down'],
};
const UPSTREAM_5XX: Record<number, readonly string[]> = {
  502: ['upstream_unavailable', 'upstream_invalid'],
  504: ['upstream_timeout'],
};

function parseJson(body: Buffer): Record<string, any> | undefined {
  try {
    const v: unknown = JSON.parse(body.toString('utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, any>) : undefined;
  } catch {
    return undefined;
  }
}

/** The spec's `{error:{message,type,code}}`; on the sensor inside `{type:"error", ...}`. */
export function envelopeOf(target: FuzzTarget, body: Buffer): { type: string; code: string } | undefined {
  const json = parseJson(body);
  const err = json?.error as Record<string, unknown> | undefined;
  if (!err || typeof err.message !== 'string' || typeof err.type !== 'string' || typeof err.code !== 'string') return undefined;
  if (target.envelope === 'messages' && json?.type !== 'error') return undefined;
  return { type: err.type, code: err.code };
}

function graphqlErrors(body: Buffer): Array<{ message?: unknown; extensions?: { code?: unknown } }> | undefined {
  const errors = parseJson(body)?.errors;
  return Array.isArray(errors) && errors.length > 0 ? errors : undefined;
}

function judgeResponse(e: Expectation, r: RawResponse): string | null {
  const { target } = e;
  const relayed = target.upstream !== undefined && e.upstreamStatuses.has(r.status);
  if (r.incomplete && !e.upstreamBreaks && e.method !== 'HEAD') return `incomplete body (status ${r.status})`;
  if (e.method === 'HEAD') return r.status >= 500 ? `status ${r.status} to HEAD` : null;
  if (target.name === 'graphql') {
    const errors = graphqlErrors(r.body);
    if (errors?.some((x) => x.extensions?.code === 'internal_error')) return `GraphQL internal_error (status ${r.status})`;
    if (errors && r.status < 500) return errors.every((x) => typeof x.message === 'string' && typeof x.extensions?.code === 'string') ? null : 'GraphQL error without message/extensions.code';
  }
  if (r.status < 400) {
    if (target.name === 'detect' && r.status === 200 && typeof parseJson(r.body)?.blocked !== 'boolean') return 'detect 200 without a verdict';
    return null;
  }
  const env = envelopeOf(target, r.body);
  if (r.status >= 500) {
    if (relayed) return env || target.envelope === 'messages' ? null : `relayed upstream ${r.status} without the envelope`;
    const allowed = DOCUMENTED_5XX[r.status] ?? (target.upstream ? UPSTREAM_5XX[r.status] : undefined);
    if (!allowed) return `status ${r.status}`;
    if (!env || !allowed.includes(env.code)) return `status ${r.status} with code ${env?.code ?? '(no envelope)'}`;
    return null;
  }
  // A relayed upstream error is the upstream's body (the sensor passes it unchanged).
  if (relayed && target.envelope === 'messages') return null;
  return env ? null : `status ${r.status} without the ${target.envelope} error envelope`;
}

export function judge(e: Expectation, outcome: RawOutcome): string | null {
  if (outcome.kind === 'timeout') return `no answer within ${Math.round(outcome.ms)} ms (hang; ${outcome.bytes} bytes received)`;
  if (outcome.kind === 'no_response') return `connection closed without an answer (${outcome.error ?? 'no error'})`;
  return judgeResponse(e, outcome.response);
}

/** The histogram key of an outcome: the status, with the error code for errors. */
export function outcomeKey(target: FuzzTarget, outcome: RawOutcome): string {
  if (outcome.kind !== 'response') return outcome.kind;
  const r = outcome.response;
  if (r.status < 400) return String(r.status);
  const env = envelopeOf(target, r.body);
  return env ? `${r.status} ${env.code}` : String(r.status);
}
