import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { request as upstreamRequest, type Dispatcher } from 'undici';
import { auditHooks, type AuditSinks } from '../management/events/audit.hook';
import type { ProjectAuthService } from '../management/projects/project-auth.service';
import type { DetectCategory, DetectionClient, DetectResult } from '../shared/detection-client';
import { authOf } from '../management/projects/request-auth';
import { AppError } from '../shared/errors';
import { renderError } from '../shared/http/error-handler';
import { documented, PROXY_ERRORS, relayedAnswer, streamFlag } from '../shared/http/openapi';
import { z } from 'zod';
import { abortOnClientClose, copyResponseHeaders, HOP_BY_HOP, upstreamTransportError } from '../shared/http/upstream';
import { readMessagesRequest, type MessagesRequestSummary } from './messages.schema';
import { messagesResponseFields, messagesStreamTexts } from './messages-response';
import { meterStream, requestOnlyLimitHooks, svcKeyCredential, trafficLimitHooks } from '../gateway/limits/limit-hooks';
import type { LimitsService } from '../gateway/limits/limits.service';
import { relayGuardedStream } from '../gateway/proxy/guarded-stream';
import { decodeBody, errorBodyFields, MAX_ERROR_BODY, relayedBodyFields, MAX_UPSTREAM_BODY, readBounded, scanInputStage, scansOutput, scanStage, setOutputRiskHeaders } from '../gateway/proxy/output-scan';
import type { TextField } from '../shared/explain/field-layout';
import type { HttpMetrics } from '../shared/metrics/process-metrics';

/** Never forwarded upstream: hop-by-hop headers and ours. */
const STRIPPED_REQUEST = new Set([...HOP_BY_HOP, 'x-svc-key', 'x-request-id']);

export interface MessagesRouteDeps {
  auth: ProjectAuthService;
  detection: DetectionClient;
  audit: AuditSinks;
  upstreamBaseUrl: string;
  /** Characters of context the stream scanner keeps: text is released this far behind the upstream. */
  streamWindowChars: number;
  /** UPSTREAM_TIMEOUT_MS: wait for the upstream's headers, and between its body bytes. */
  upstreamTimeoutMs?: number;
  limits?: LimitsService;
  /** Upstream latency and error statuses (docs/metrics.md). */
  metrics?: HttpMetrics;
}

/** Request headers for the upstream: every end-to-end header byte for byte, minus X-Svc-Key and hop-by-hop ones. */
export function upstreamHeaders(incoming: FastifyRequest['headers']): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || STRIPPED_REQUEST.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/** Step 1, before the body is even parsed: the team key in X-Svc-Key. */
function authenticateSensor(deps: MessagesRouteDeps) {
  return async (request: FastifyRequest): Promise<void> => {
    const header = request.headers['x-svc-key'];
    if (Array.isArray(header)) throw new AppError('authentication_error', 'Send exactly one X-Svc-Key header', { code: 'malformed_api_key' });
    request.auth = await deps.auth.authenticate(header?.trim() || undefined);
  };
}

/**
 * POST /v1/messages on the sensor, in the spec's order: 1 authenticate X-Svc-Key, 2 look up the
 * project's policy, 3 scan the request body, 4 forward (original bytes, headers unchanged but
 * X-Svc-Key) or 5 deny with 403 permission_error and forward nothing. When the policy scans output
 * (mode O/IO), the upstream's answer — a message, an SSE stream (event by event, messages-response.ts
 * says which fields carry text) or an error body — is scanned before any of it is returned, and
 * relayed byte for byte with X-Risk-* headers unless flagged.
 */
/**
 * The request as the OpenAPI document shows it: what readMessagesRequest requires (a messages array of
 * objects with content); every other field of the messages API passes through. Documentation only:
 * readMessagesRequest validates (test/unit/shared/openapi-wire-schemas.test.ts keeps the two in step).
 */
export const messagesRequestDocSchema = z.looseObject({
  model: z.string().optional(),
  system: z.unknown().optional(),
  messages: z.array(z.looseObject({ role: z.string().optional(), content: z.unknown() })),
  stream: streamFlag,
});

const messagesDoc = documented({
  tags: ['proxy'],
  summary: 'Messages API passthrough for coding assistants, scanned',
  description:
    'Authenticated by X-Svc-Key (a project API key); every other header, and the body byte for byte, go to the upstream provider after the request is scanned. ' +
    'A denied request or answer is a 403 permission_error (code content_blocked / output_blocked). X-Risk-* headers carry the verdict.',
  security: ['svcKey'],
  body: messagesRequestDocSchema,
  responses: relayedAnswer('a message object'),
  errors: PROXY_ERRORS,
});

const countTokensDoc = documented({
  tags: ['proxy'],
  summary: 'Token count of a messages request, passed through after the input scan',
  description:
    'The body (a messages request: messages, system, tools) is scanned with the input policy exactly as for POST /v1/messages, then forwarded byte for byte with the same header rules. ' +
    'A denied request is a 403 permission_error (code content_blocked) and nothing is forwarded. The answer ({input_tokens}) is relayed unchanged. Counted as one request for rate limits (no tokens, no cost).',
  security: ['svcKey'],
  body: messagesRequestDocSchema,
  responses: { 200: { description: "The upstream's answer, unchanged: {input_tokens: N}", schema: z.looseObject({ input_tokens: z.number().int() }) } },
  errors: PROXY_ERRORS,
});

/** One model as the messages API describes it (the upstream may add fields; they are relayed). */
const modelInfoDocSchema = z.looseObject({ id: z.string(), type: z.literal('model'), display_name: z.string(), created_at: z.string() });
const MODELS_DESCRIPTION =
  'Passed through with the same header rules as POST /v1/messages (the client\'s own provider credentials untouched, X-Svc-Key stripped), the query string (limit, before_id, after_id) as sent. ' +
  'No content either way, nothing scanned; the answer or the upstream error is relayed unchanged. Counted as one request for rate limits and audited.';

const modelsListDoc = documented({
  tags: ['proxy'],
  summary: "List the upstream provider's models",
  description: MODELS_DESCRIPTION,
  security: ['svcKey'],
  query: z.looseObject({ limit: z.string().optional(), before_id: z.string().optional(), after_id: z.string().optional() }),
  responses: { 200: { description: "The upstream's page, unchanged", schema: z.looseObject({ data: z.array(modelInfoDocSchema), has_more: z.boolean() }) } },
  errors: [400, 401, 403, 404, 429, 500, 502, 503, 504],
});

const modelRetrieveDoc = documented({
  tags: ['proxy'],
  summary: 'One model of the upstream provider',
  description: MODELS_DESCRIPTION,
  security: ['svcKey'],
  params: z.strictObject({ model_id: z.string().meta({ description: 'The model id or alias' }) }),
  responses: { 200: { description: "The upstream's model object, unchanged", schema: modelInfoDocSchema } },
  errors: [400, 401, 403, 404, 429, 500, 502, 503, 504],
});

export function registerMessagesRoutes(app: FastifyInstance, deps: MessagesRouteDeps): void {
  const limited = trafficLimitHooks(deps.limits, { wire: 'messages', authenticate: authenticateSensor(deps), credential: svcKeyCredential });
  const hooks = { ...limited, ...auditHooks(deps.audit) };
  app.post('/v1/messages', { ...messagesDoc, ...hooks }, async (request, reply) => {
    const summary = readMessagesRequest(request.body);
    request.audit = { model: summary.model, countTexts: summary.texts, findings: [], blocked: false };
    const { input, abort } = await scanInput(deps, request, reply, summary);
    return forward({ deps, request, reply, input, abort, path: '/v1/messages', scanAnswer: true });
  });
  // count_tokens sends the whole conversation to the provider: the same input scan as /v1/messages (a
  // block there blocks here, or it would be the way around the policy). Its answer ({input_tokens}) is
  // not scanned; an error body is, as for /v1/messages. A request for the limits: no tokens, no cost.
  const counted = { ...requestOnlyLimitHooks(deps.limits, { authenticate: authenticateSensor(deps), credential: svcKeyCredential }), ...auditHooks(deps.audit) };
  app.post('/v1/messages/count_tokens', { ...countTokensDoc, ...counted }, async (request, reply) => {
    const summary = readMessagesRequest(request.body);
    request.audit = { model: summary.model, findings: [], blocked: false };
    const { input, abort } = await scanInput(deps, request, reply, summary);
    return forward({ deps, request, reply, input, abort, path: '/v1/messages/count_tokens', scanAnswer: false });
  });
  // The model listing: no content either way, relayed as it comes (the client's own credentials, as for /v1/messages).
  app.get('/v1/models', { ...modelsListDoc, ...counted }, async (request, reply) => {
    request.audit = { findings: [], blocked: false };
    return relayGet(deps, request, reply, '/v1/models');
  });
  app.get('/v1/models/:model_id', { ...modelRetrieveDoc, ...counted }, async (request, reply) => {
    const { model_id: id } = request.params as { model_id: string };
    request.audit = { model: id, findings: [], blocked: false };
    return relayGet(deps, request, reply, `/v1/models/${encodeURIComponent(id)}`);
  });
}

/**
 * Steps 3 and 5 of the spec's order: the request's texts scanned with the input policy (the request's
 * first detection call: refused with 503 detection_overloaded when detection is at capacity); a block,
 * or content the policy refuses to pass unscanned, denies the request before anything is forwarded.
 */
async function scanInput(
  deps: MessagesRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  summary: MessagesRequestSummary,
): Promise<{ input: DetectResult; abort: AbortController }> {
  const ctx = authOf(request);
  const abort = abortOnClientClose(request, reply);
  const input = await scanInputStage(deps.detection, request, reply, {
    policy: ctx.policy,
    fields: summary.fields,
    unscanned: summary.unscanned,
    signal: abort.signal,
    errorType: 'permission_error',
    deny: (verdict) => denial('input', verdict),
  });
  return { input, abort };
}

const upstreamQuery = (request: FastifyRequest) => (request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '');

/** A GET passed through (headers as for /v1/messages, the query string as sent); the answer relayed unchanged. */
async function relayGet(deps: MessagesRouteDeps, request: FastifyRequest, reply: FastifyReply, path: string): Promise<FastifyReply> {
  const upstream = await callUpstream(deps, request, abortOnClientClose(request, reply), 'GET', path);
  return relay(reply, upstream, upstream.body);
}

/** The upstream request: `path` plus the query string as sent, every end-to-end header but X-Svc-Key; a transport failure → 502 / 504. */
async function callUpstream(deps: MessagesRouteDeps, request: FastifyRequest, abort: AbortController, method: 'GET' | 'POST', path: string, body?: Buffer): Promise<Dispatcher.ResponseData> {
  const upstreamStarted = performance.now();
  try {
    const upstream = await upstreamRequest(`${deps.upstreamBaseUrl}${path}${upstreamQuery(request)}`, {
      method,
      headers: upstreamHeaders(request.headers),
      body,
      signal: abort.signal,
      headersTimeout: deps.upstreamTimeoutMs ?? 600_000,
      bodyTimeout: deps.upstreamTimeoutMs ?? 600_000,
    });
    deps.metrics?.upstreamAnswered(upstreamStarted, upstream.statusCode);
    return upstream;
  } catch (err) {
    request.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'upstream unreachable');
    throw upstreamTransportError(err);
  }
}

/** The sensor's policy denial: 403 permission_error (content_blocked for the request, output_blocked for the answer). */
function denial(stage: 'input' | 'output', verdict: { categories: readonly DetectCategory[]; blockReason: string }): AppError {
  const types = verdict.categories.filter((c) => c.action === 'block').map((c) => c.type);
  const reason = types.length > 0 ? `detected ${types.join(', ')}` : verdict.blockReason || 'policy';
  return stage === 'input'
    ? new AppError('permission_error', `Request blocked by the security policy: ${reason}`, { code: 'content_blocked' })
    : new AppError('permission_error', `Response blocked by the security policy: ${reason}`, { code: 'output_blocked' });
}

interface ForwardArgs {
  deps: MessagesRouteDeps;
  request: FastifyRequest;
  reply: FastifyReply;
  input: DetectResult;
  abort: AbortController;
  /** The upstream path (/v1/messages, /v1/messages/count_tokens). */
  path: string;
  /** Whether a successful answer is scanned with the output policy (error bodies always are, when it scans output). */
  scanAnswer: boolean;
}

async function forward(f: ForwardArgs): Promise<FastifyReply> {
  const { deps, request, reply, input, abort } = f;
  const upstream = await callUpstream(deps, request, abort, 'POST', f.path, request.rawBody ?? Buffer.alloc(0));
  const policy = authOf(request).policy.detection;
  if (!scansOutput(policy)) return relay(reply, upstream, upstream.body);
  const scan = { deps, request, reply, upstream, input };
  if (upstream.statusCode >= 400) return relayScanned(scan, MAX_ERROR_BODY, errorBodyFields);
  if (!f.scanAnswer) return relay(reply, upstream, upstream.body);
  if (!String(upstream.headers['content-type'] ?? '').includes('text/event-stream')) return relayScanned(scan, MAX_UPSTREAM_BODY, bodyFields);
  // Policy limits: a hijacked reply skips onSend, so the stream is metered (and cut) here.
  upstream.body = meterStream(request, upstream.body, upstream.headers);
  return relayGuardedStream({
    detection: deps.detection,
    policy,
    windowChars: deps.streamWindowChars,
    request,
    reply,
    upstream,
    abort,
    texts: messagesStreamTexts,
    blockedTail: (guard) => {
      const error = renderError(denial('output', { categories: guard.fired(), blockReason: guard.blockReason }), 'messages');
      return `event: error\ndata: ${JSON.stringify(error)}\n\n`;
    },
  });
}

/** The upstream's answer as it came: status, end-to-end headers, body. */
function relay(reply: FastifyReply, upstream: Dispatcher.ResponseData, body: Buffer | Dispatcher.ResponseData['body']): FastifyReply {
  reply.status(upstream.statusCode);
  copyResponseHeaders(reply, upstream.headers);
  return reply.send(body);
}

/** A successful answer's texts: a message's content blocks (a body that is not JSON is one text). */
const bodyFields = (text: string): TextField[] => relayedBodyFields(text, messagesResponseFields);

interface ScanArgs {
  deps: MessagesRouteDeps;
  request: FastifyRequest;
  reply: FastifyReply;
  upstream: Dispatcher.ResponseData;
  input: DetectResult;
}

/**
 * A whole (not streamed) answer — a message, or an error body, which may echo the caller's content —
 * read up to `limit` bytes, decoded (the client's Accept-Encoding was forwarded) and scanned with the
 * output policy. Flagged: 403 permission_error. Otherwise the original bytes, unchanged.
 */
async function relayScanned(a: ScanArgs, limit: number, fieldsOf: (text: string) => TextField[]): Promise<FastifyReply> {
  const raw = await readBounded(a.upstream.body, limit);
  if (raw === null) throw new AppError('internal_error', 'The upstream response is too large to be scanned', { code: 'upstream_too_large', status: 502 });
  const fields = fieldsOf(decodeBody(raw, a.upstream.headers['content-encoding'], limit).toString('utf8'));
  const policy = authOf(a.request).policy.detection;
  const output = await scanStage(a.deps.detection, a.request, { direction: 'output', policy, fields });
  setOutputRiskHeaders(a.reply, a.input, output);
  if (output.blocked) throw denial('output', output);
  return relay(a.reply, a.upstream, raw);
}
