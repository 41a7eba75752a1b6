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
import { setRiskHeaders, unscannedOf } from '../shared/http/risk-headers';
import { noteUnscannedContent } from '../shared/http/unscanned-content';
import { abortOnClientClose, copyResponseHeaders, HOP_BY_HOP, upstreamTransportError } from '../shared/http/upstream';
import { readMessagesRequest } from './messages.schema';
import { messagesResponseFields, messagesStreamTexts } from './messages-response';
import { meterStream, svcKeyCredential, trafficLimitHooks } from '../gateway/limits/limit-hooks';
import type { LimitsService } from '../gateway/limits/limits.service';
import { relayGuardedStream } from '../gateway/proxy/guarded-stream';
import { decodeBody, errorBodyFields, MAX_ERROR_BODY, relayedBodyFields, MAX_UPSTREAM_BODY, readBounded, scansOutput, scanStage, setOutputRiskHeaders } from '../gateway/proxy/output-scan';
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

export function registerMessagesRoutes(app: FastifyInstance, deps: MessagesRouteDeps): void {
  const limited = trafficLimitHooks(deps.limits, { wire: 'messages', authenticate: authenticateSensor(deps), credential: svcKeyCredential });
  const hooks = { ...limited, ...auditHooks(deps.audit) };
  app.post('/v1/messages', { ...messagesDoc, ...hooks }, async (request, reply) => {
    const ctx = authOf(request);
    const summary = readMessagesRequest(request.body);
    request.audit = { model: summary.model, countTexts: summary.texts, findings: [], blocked: false };
    // The request's first detection call: refused (503 detection_overloaded) when detection is at capacity.
    const abort = abortOnClientClose(request, reply);
    const input = await scanStage(deps.detection, request, { direction: 'input', policy: ctx.policy.detection, fields: summary.fields, signal: abort.signal });
    setRiskHeaders(reply, { blocked: input.blocked, categories: input.categories, unscanned: unscannedOf(input) });
    const unscannable = noteUnscannedContent(request, reply, summary.unscanned, ctx.policy, 'permission_error');
    if (input.blocked) throw denial('input', input);
    if (unscannable) throw unscannable;
    return forward({ deps, request, reply, input, abort });
  });
}

/** The sensor's policy denial: 403 permission_error (content_blocked for the request, output_blocked for the answer). */
function denial(stage: 'input' | 'output', verdict: { categories: readonly DetectCategory[]; blockReason: string }): AppError {
  const types = verdict.categories.filter((c) => c.action === 'block').map((c) => c.type);
  const reason = types.length > 0 ? `detected ${types.join(', ')}` : verdict.blockReason || 'policy';
  return stage === 'input'
    ? new AppError('permission_error', `Request blocked by the security policy: ${reason}`, { code: 'content_blocked' })
    : new AppError('permission_error', `Response blocked by the security policy: ${reason}`, { code: 'output_blocked' });
}

async function forward(f: { deps: MessagesRouteDeps; request: FastifyRequest; reply: FastifyReply; input: DetectResult; abort: AbortController }): Promise<FastifyReply> {
  const { deps, request, reply, input, abort } = f;
  const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
  let upstream;
  const upstreamStarted = performance.now();
  try {
    upstream = await upstreamRequest(`${deps.upstreamBaseUrl}/v1/messages${query}`, {
      method: 'POST',
      headers: upstreamHeaders(request.headers),
      body: request.rawBody ?? Buffer.alloc(0),
      signal: abort.signal,
      headersTimeout: deps.upstreamTimeoutMs ?? 600_000,
      bodyTimeout: deps.upstreamTimeoutMs ?? 600_000,
    });
  } catch (err) {
    request.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'upstream unreachable');
    throw upstreamTransportError(err);
  }
  deps.metrics?.upstreamAnswered(upstreamStarted, upstream.statusCode);
  const policy = authOf(request).policy.detection;
  if (!scansOutput(policy)) return relay(reply, upstream, upstream.body);
  const scan = { deps, request, reply, upstream, input };
  if (upstream.statusCode >= 400) return relayScanned(scan, MAX_ERROR_BODY, errorBodyFields);
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
