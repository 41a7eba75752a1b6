import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Dispatcher } from 'undici';
import { auditHooks, type AuditSinks } from '../../management/events/audit.hook';
import type { AuthContext, ProjectAuthService } from '../../management/projects/project-auth.service';
import { authOf, requireBearerKey } from '../../management/projects/request-auth';
import type { DetectCategory, DetectionClient, DetectResult } from '../../shared/detection-client';
import { AppError } from '../../shared/errors';
import { repeatsJsonKey } from '../../shared/http/json-structure-guard';
import { documented, PROXY_ERRORS, relayedAnswer, streamFlag } from '../../shared/http/openapi';
import { bearerCredential, meterStream, trafficLimitHooks } from '../limits/limit-hooks';
import type { LimitsService } from '../limits/limits.service';
import { blockedStreamTail, chatStreamTexts, identityOf, readChatRequest, responseFields, type StreamIdentity } from '../proxy/openai-chat.schema';
import { relayGuardedStream, type GuardedStreamArgs } from '../proxy/guarded-stream';
import type { TextField } from '../../shared/explain/field-layout';
import { decodeBody, errorBodyFields, MAX_ERROR_BODY, MAX_UPSTREAM_BODY, readBounded, scanInputStage, scansOutput, scanStage, setOutputRiskHeaders } from '../proxy/output-scan';
import { abortOnClientClose, copyResponseHeaders, upstreamErrorToAppError, upstreamRepeatsKeyError } from '../../shared/http/upstream';
import { callUpstream, type UpstreamCallDeps } from '../proxy/upstream-router';
import { tapStreamId } from '../proxy/stream-id-tap';

// The upstream call lives in proxy/upstream-router.ts (providers, routes, retries, fallback); every proxy route imports it from here.
export { callUpstream, upstreamHeaders, type UpstreamCallDeps, type UpstreamCallOptions } from '../proxy/upstream-router';

export interface ChatRouteDeps extends UpstreamCallDeps {
  auth: ProjectAuthService;
  detection: DetectionClient;
  audit: AuditSinks;
  /** Characters of context the stream scanner keeps: text is released this far behind the upstream. */
  streamWindowChars: number;
  limits?: LimitsService;
}

const blockedTypes = (cats: readonly DetectCategory[]) => cats.filter((c) => c.action === 'block').map((c) => c.type);

/** The 403 security_block of a blocked request (input_blocked) or answer (output_blocked). */
export function securityBlock(stage: 'input' | 'output', verdict: { categories: readonly DetectCategory[]; blockReason: string }): AppError {
  const types = blockedTypes(verdict.categories);
  const what = types.length > 0 ? `detected ${types.join(', ')}` : verdict.blockReason || 'policy';
  return new AppError('security_block', `The ${stage === 'input' ? 'request' : 'response'} was blocked by the security policy: ${what}`, {
    code: stage === 'input' ? 'input_blocked' : 'output_blocked',
  });
}

/**
 * An upstream error answer (4xx/5xx) of a route whose error body needs no output scan (model listings,
 * embeddings): the upstream's status, message and code in our envelope.
 */
export async function plainUpstreamError(upstream: Dispatcher.ResponseData): Promise<AppError> {
  const raw = await readBounded(upstream.body, MAX_ERROR_BODY);
  const text = raw === null ? '' : decodeBody(raw, upstream.headers['content-encoding'], MAX_ERROR_BODY).toString('utf8');
  return upstreamErrorToAppError(upstream.statusCode, text);
}

/**
 * The request as the OpenAPI document shows it: what readChatRequest requires (model, a non-empty
 * messages array of objects with a string role); every other field of the OpenAI API passes through.
 * Documentation only: readChatRequest validates (test/unit/shared/openapi-wire-schemas.test.ts keeps the two in step).
 */
export const chatRequestDocSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(z.looseObject({ role: z.string(), content: z.unknown().optional() })).min(1),
  stream: streamFlag,
});

const chatDoc = documented({
  tags: ['proxy'],
  summary: 'OpenAI-compatible chat completions, scanned',
  description:
    'The request is scanned with the project policy, then forwarded byte for byte to the upstream provider; its answer (JSON or an SSE stream) is scanned before it is returned. ' +
    'A blocked request or answer is a 403 security_block (code input_blocked / output_blocked); a blocked stream ends with a content_filter chunk. X-Risk-* headers carry the verdict.',
  security: ['bearer'],
  body: chatRequestDocSchema,
  responses: relayedAnswer('a chat.completion object'),
  errors: PROXY_ERRORS,
});

/**
 * POST /v1/chat/completions: OpenAI-compatible proxy. The request body goes upstream byte for byte
 * (every field, not only model/messages/temperature) after input scanning; the response is scanned
 * before anything of it is returned — whole for JSON, incrementally for SSE streams.
 */
export function registerChatCompletionsRoutes(app: FastifyInstance, deps: ChatRouteDeps): void {
  const limited = trafficLimitHooks(deps.limits, { wire: 'openai-chat', authenticate: requireBearerKey(deps.auth), credential: bearerCredential });
  const hooks = { ...limited, ...auditHooks(deps.audit) };
  app.post('/v1/chat/completions', { ...chatDoc, ...hooks }, async (request, reply) =>
    proxyScanned(deps, request, reply, { path: '/chat/completions', summary: readChatRequest(request.body), fieldsOf: responseFields, streamWire: chatStreamWire }),
  );
}

/** What a scanned OpenAI-compatible POST route (chat completions, responses) gives the shared pipeline. */
export interface ScannedPost {
  /** The upstream path, below the provider's base URL (`/chat/completions`). */
  path: string;
  /** The request as the wire's reader read it: its model and every text the model would read. */
  summary: { model: string | null; texts: string[]; fields: TextField[]; unscanned: string[] };
  /** The fields of a JSON answer, scanned whole with the output policy. */
  fieldsOf: (parsed: unknown) => TextField[];
  /** How the wire's stream is read (its texts, for one stream of the request's `model`) and ended when blocked. */
  streamWire: (model: string) => StreamWire;
  /** The answer's id is recorded before the client can read it (the Responses API's stored responses). */
  recordsId?: AnswerIdRecord;
}

/**
 * Where an answer names its id (a JSON answer, or the first stream event naming it) and what is done
 * with it: `record` is awaited before the client can read the id (it must not reject).
 */
export interface AnswerIdRecord {
  ofJson: (parsed: unknown) => string | null;
  ofEvent: (parsed: unknown) => string | null;
  record: (id: string) => Promise<void>;
}

/** The wire API's part of a guarded stream (guarded-stream.ts). */
export type StreamWire = Pick<GuardedStreamArgs, 'texts' | 'observe' | 'blockedTail'>;

/**
 * A scanned OpenAI-compatible POST: the request body goes upstream byte for byte (every field) after
 * input scanning; the answer is scanned before anything of it is returned — whole for JSON,
 * incrementally for SSE streams. An upstream error keeps its status, message and code (its body scanned).
 */
export async function proxyScanned(deps: ChatRouteDeps, request: FastifyRequest, reply: FastifyReply, w: ScannedPost): Promise<FastifyReply> {
  const ctx = authOf(request);
  const { summary } = w;
  request.audit = { model: summary.model, countTexts: summary.texts, findings: [], blocked: false };
  const abort = abortOnClientClose(request, reply);
  // The request's first detection call: when detection is at capacity it is refused here (503
  // detection_overloaded, Retry-After), before anything reaches the upstream; once admitted, the
  // request's output scans and stream steps are queued, never refused.
  const input = await scanInputStage(deps.detection, request, reply, {
    policy: ctx.policy,
    fields: summary.fields,
    unscanned: summary.unscanned,
    signal: abort.signal,
    errorType: 'security_block',
    deny: (verdict) => securityBlock('input', verdict),
  });

  const upstream = await callUpstream(deps, request, abort.signal, { method: 'POST', path: w.path, body: request.rawBody ?? Buffer.alloc(0), model: summary.model ?? undefined });
  const relay: RelayArgs = { deps, ctx, request, reply, upstream, input };
  if (upstream.statusCode >= 400) throw await upstreamError(relay);
  const isStream = String(upstream.headers['content-type'] ?? '').includes('text/event-stream');
  const ids = w.recordsId;
  // Before the meter (which marks the body it relays as metered): the stream's id recorded as it passes.
  if (isStream && ids) upstream.body = tapStreamId(upstream.body, String(upstream.headers['content-encoding'] ?? ''), ids.ofEvent, ids.record) as typeof upstream.body;
  // Policy limits: counts the streamed output tokens and cuts the stream at max_output_tokens.
  if (isStream) upstream.body = meterStream(request, upstream.body, upstream.headers);
  const scans = scansOutput(ctx.policy.detection);
  // A JSON answer whose id is recorded is read whole, scanned or not (the id is in it).
  if (!isStream && ids) return relayJson(relay, w.fieldsOf, { scan: scans, onParsed: (parsed) => recordJsonId(ids, parsed) });
  if (!scans) return relayUnscanned(reply, upstream);
  if (!isStream) return relayJson(relay, w.fieldsOf);
  // Scanned as it passes: each event released once the text it carries is scanned.
  return relayGuardedStream({
    detection: deps.detection,
    policy: ctx.policy.detection,
    windowChars: deps.streamWindowChars,
    request,
    reply,
    upstream,
    abort,
    ...w.streamWire(summary.model ?? ''),
  });
}

/** The upstream's answer as it is (status, end-to-end headers, body): nothing of it to scan. */
export function relayUnscanned(reply: FastifyReply, upstream: Dispatcher.ResponseData): FastifyReply {
  reply.status(upstream.statusCode);
  copyResponseHeaders(reply, upstream.headers);
  return reply.send(upstream.body);
}

export interface RelayArgs {
  deps: ChatRouteDeps;
  ctx: AuthContext;
  request: FastifyRequest;
  reply: FastifyReply;
  upstream: Dispatcher.ResponseData;
  input: DetectResult;
}

/**
 * An upstream error answer (4xx/5xx) → our envelope, keeping the upstream's message and code. When
 * the policy scans output, the error body's strings (it may echo the caller's content) are scanned
 * with the output policy first; a flagged one is replaced by the output block error. A body over
 * MAX_ERROR_BODY is not read further and its message not kept (nothing unscanned is echoed).
 */
export async function upstreamError(a: RelayArgs): Promise<AppError> {
  const raw = await readBounded(a.upstream.body, MAX_ERROR_BODY);
  const text = raw === null ? '' : decodeBody(raw, a.upstream.headers['content-encoding'], MAX_ERROR_BODY).toString('utf8');
  const fields = errorBodyFields(text);
  if (scansOutput(a.ctx.policy.detection) && fields.length > 0) {
    const output = await scanStage(a.deps.detection, a.request, { direction: 'output', policy: a.ctx.policy.detection, fields });
    setOutputRiskHeaders(a.reply, a.input, output);
    if (output.blocked) return securityBlock('output', output);
  }
  return upstreamErrorToAppError(a.upstream.statusCode, text);
}

async function recordJsonId(ids: AnswerIdRecord, parsed: unknown): Promise<void> {
  const id = ids.ofJson(parsed);
  if (id !== null) await ids.record(id);
}

/**
 * A JSON answer, read whole and scanned (`fieldsOf`: the wire's output fields) before any of it is
 * returned; `scan: false` relays it unscanned. `onParsed` runs beside the scan and is awaited before
 * the answer is sent (it must not reject).
 */
export async function relayJson(a: RelayArgs, fieldsOf: (parsed: unknown) => TextField[], o: { scan?: boolean; onParsed?: (parsed: unknown) => Promise<void> } = {}): Promise<FastifyReply> {
  const raw = await readBounded(a.upstream.body, MAX_UPSTREAM_BODY);
  if (raw === null) throw new AppError('internal_error', 'The upstream response is too large', { code: 'upstream_too_large', status: 502 });
  // Accept-Encoding is not forwarded, but an upstream may compress anyway: the answer is relayed decoded.
  const body = decodeBody(raw, a.upstream.headers['content-encoding'], MAX_UPSTREAM_BODY);
  let parsed: unknown;
  const text = body.toString('utf8');
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AppError('internal_error', 'The upstream provider sent a response that is not JSON', { code: 'upstream_invalid', status: 502 });
  }
  if (repeatsJsonKey(text)) throw upstreamRepeatsKeyError();
  const recorded = o.onParsed?.(parsed);
  if (o.scan !== false) {
    const output = await scanStage(a.deps.detection, a.request, { direction: 'output', policy: a.ctx.policy.detection, fields: fieldsOf(parsed) }).finally(() => recorded);
    setOutputRiskHeaders(a.reply, a.input, output);
    if (output.blocked) throw securityBlock('output', output);
  }
  await recorded;
  a.reply.status(a.upstream.statusCode);
  copyResponseHeaders(a.reply, a.upstream.headers, new Set(['content-encoding']));
  return a.reply.send(body);
}

/** A chat-completions stream: one detection stream per choice and field kind; a blocked one ends with a content_filter chunk. */
function chatStreamWire(model: string): StreamWire {
  let identity: StreamIdentity | null = null;
  const choices = new Set<number>();
  return {
    texts: chatStreamTexts(choices),
    observe: (parsed) => {
      identity ??= identityOf(parsed, model);
    },
    blockedTail: (guard) => {
      const id = identity ?? { id: `chatcmpl-blocked-${Date.now()}`, created: Math.floor(Date.now() / 1000), model };
      return blockedStreamTail(id, [...choices].sort((x, y) => x - y), blockedTypes(guard.fired()));
    },
  };
}
