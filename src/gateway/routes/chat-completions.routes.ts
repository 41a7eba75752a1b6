import { StringDecoder } from 'node:string_decoder';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { request as upstreamRequest, type Dispatcher } from 'undici';
import { auditHooks, failReasonOfError, failReasonOfResult, noteFailClosed, type AuditSinks } from '../../management/events/audit.hook';
import type { AuthContext, ProjectAuthService } from '../../management/projects/project-auth.service';
import { authOf, requireBearerKey } from '../../management/projects/request-auth';
import type { DetectCategory, DetectionClient, DetectResult } from '../../shared/detection-client';
import { AppError } from '../../shared/errors';
import { setRiskHeaders, unscannedOf } from '../../shared/http/risk-headers';
import { bearerCredential, meterStream, trafficLimitHooks } from '../limits/limit-hooks';
import type { LimitsService } from '../limits/limits.service';
import { blockedStreamTail, identityOf, readChatRequest, responseFields, type StreamIdentity } from '../proxy/openai-chat.spec';
import { joinFields } from '../../shared/explain/field-layout';
import { CategoryMatches, explainVerdict, type ExplainedCategory } from '../../shared/explain/verdict-matches';
import { SseFormatError, SseParser, type SseEvent } from '../proxy/sse';
import { StreamGuard } from '../proxy/stream-guard';
import { abortOnClientClose, copyResponseHeaders, upstreamErrorToAppError, upstreamTransportError } from '../../shared/http/upstream';

export interface ChatRouteDeps {
  auth: ProjectAuthService;
  detection: DetectionClient;
  audit: AuditSinks;
  upstreamBaseUrl: string;
  upstreamApiKey?: string;
  /** Characters of context the stream scanner keeps: text is released this far behind the upstream. */
  streamWindowChars: number;
  upstreamTimeoutMs?: number;
  limits?: LimitsService;
}

/** Request headers passed to the upstream (the caller's Authorization — our key — never is). */
const FORWARDED = /^(accept|accept-language|user-agent|openai-organization|openai-project|openai-beta|x-stainless-[a-z-]+|idempotency-key)$/;
const MAX_UPSTREAM_BODY = 64 * 1024 * 1024;

const outputScanned = (ctx: AuthContext) => ctx.policy.detection.policyMode !== 'I';
const blockedTypes = (cats: readonly DetectCategory[]) => cats.filter((c) => c.action === 'block').map((c) => c.type);

function securityBlock(stage: 'input' | 'output', verdict: { categories: readonly DetectCategory[]; blockReason: string }): AppError {
  const types = blockedTypes(verdict.categories);
  const what = types.length > 0 ? `detected ${types.join(', ')}` : verdict.blockReason || 'policy';
  return new AppError('security_block', `The ${stage === 'input' ? 'request' : 'response'} was blocked by the security policy: ${what}`, {
    code: stage === 'input' ? 'input_blocked' : 'output_blocked',
  });
}

function upstreamHeaders(request: FastifyRequest, apiKey: string | undefined): Record<string, string> {
  const out: Record<string, string> = { 'content-type': 'application/json' };
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === 'string' && FORWARDED.test(name)) out[name] = value;
  }
  if (apiKey) out.authorization = `Bearer ${apiKey}`;
  return out;
}

/**
 * POST /v1/chat/completions: OpenAI-compatible proxy. The request body goes upstream byte for byte
 * (every field, not only model/messages/temperature) after input scanning; the response is scanned
 * before anything of it is returned — whole for JSON, incrementally for SSE streams.
 */
export function registerChatCompletionsRoutes(app: FastifyInstance, deps: ChatRouteDeps): void {
  const limited = trafficLimitHooks(deps.limits, { wire: 'openai-chat', authenticate: requireBearerKey(deps.auth), credential: bearerCredential });
  const hooks = { ...limited, ...auditHooks(deps.audit) };
  app.post('/v1/chat/completions', hooks, async (request, reply) => {
    const ctx = authOf(request);
    const chat = readChatRequest(request.body);
    request.audit = { model: chat.model, countTexts: chat.texts, findings: [], blocked: false };
    const joined = joinFields(chat.fields);
    const input = await deps.detection.detect({ text: joined.text, direction: 'input', policy: ctx.policy.detection });
    record(request, explainVerdict(input, (start, end) => joined.layout.locate(start, end)), input.blocked);
    noteFailClosed(request, failReasonOfResult(input));
    setRiskHeaders(reply, { blocked: input.blocked, categories: input.categories, unscanned: unscannedOf(input) });
    if (input.blocked) throw securityBlock('input', input);

    const abort = abortOnClientClose(request, reply);
    let upstream: Dispatcher.ResponseData;
    try {
      upstream = await upstreamRequest(`${deps.upstreamBaseUrl}/chat/completions`, {
        method: 'POST',
        headers: upstreamHeaders(request, deps.upstreamApiKey),
        body: request.rawBody,
        signal: abort.signal,
        headersTimeout: deps.upstreamTimeoutMs ?? 600_000,
        bodyTimeout: deps.upstreamTimeoutMs ?? 600_000,
      });
    } catch (err) {
      throw upstreamTransportError(err);
    }
    if (upstream.statusCode >= 400) {
      throw upstreamErrorToAppError(upstream.statusCode, (await upstream.body.text()).slice(0, 65536));
    }
    const isStream = String(upstream.headers['content-type'] ?? '').includes('text/event-stream');
    // Policy limits: counts the streamed output tokens and cuts the stream at max_output_tokens.
    if (isStream) upstream.body = meterStream(request, upstream.body, upstream.headers);
    if (!outputScanned(ctx)) {
      reply.status(upstream.statusCode);
      copyResponseHeaders(reply, upstream.headers);
      return reply.send(upstream.body);
    }
    return isStream
      ? relayStream({ deps, ctx, request, reply, upstream, model: chat.model ?? '', input, abort })
      : relayJson({ deps, ctx, request, reply, upstream, input });
  });
}

/**
 * Folds one stage's categories (input, output) into the audit record: one finding per type, its highest
 * confidence and that stage's action, and the matches of both stages (bounded, highest scores first).
 */
function record(request: FastifyRequest, categories: readonly ExplainedCategory[], blocked: boolean): void {
  const audit = request.audit ?? {};
  const seen = new Map((audit.findings ?? []).map((f) => [f.type, f]));
  for (const c of categories) {
    const prev = seen.get(c.type);
    const matches = new CategoryMatches().addMatches(c.type, prev?.matches ?? []).addMatches(c.type, c.matches).of(c.type);
    const best = !prev || c.confidence > prev.confidence ? { type: c.type, confidence: c.confidence, action: c.action } : prev;
    seen.set(c.type, { type: best.type, confidence: best.confidence, action: best.action, matches });
  }
  audit.findings = [...seen.values()];
  audit.blocked = (audit.blocked ?? false) || blocked;
  request.audit = audit;
}

interface RelayArgs {
  deps: ChatRouteDeps;
  ctx: AuthContext;
  request: FastifyRequest;
  reply: FastifyReply;
  upstream: Dispatcher.ResponseData;
  input: DetectResult;
}

async function relayJson(a: RelayArgs): Promise<FastifyReply> {
  const raw = Buffer.from(await a.upstream.body.arrayBuffer());
  if (raw.length > MAX_UPSTREAM_BODY) throw new AppError('internal_error', 'The upstream response is too large', { code: 'upstream_too_large', status: 502 });
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new AppError('internal_error', 'The upstream provider sent a response that is not JSON', { code: 'upstream_invalid', status: 502 });
  }
  const joined = joinFields(responseFields(parsed));
  const output = await a.deps.detection.detect({ text: joined.text, direction: 'output', policy: a.ctx.policy.detection });
  record(a.request, explainVerdict(output, (start, end) => joined.layout.locate(start, end)), output.blocked);
  noteFailClosed(a.request, failReasonOfResult(output));
  const categories = [...a.input.categories, ...output.categories];
  setRiskHeaders(a.reply, { blocked: output.blocked, categories, unscanned: [...new Set([...unscannedOf(a.input), ...unscannedOf(output)])] });
  if (output.blocked) throw securityBlock('output', output);
  a.reply.status(a.upstream.statusCode);
  copyResponseHeaders(a.reply, a.upstream.headers, new Set(['content-encoding']));
  return a.reply.send(raw);
}

async function relayStream(a: RelayArgs & { model: string; abort: AbortController }): Promise<FastifyReply> {
  const { reply } = a;
  const encoding = String(a.upstream.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (encoding !== '' && encoding !== 'identity') {
    // Never requested (Accept-Encoding is not forwarded), and compressed bytes cannot be scanned as they pass.
    a.upstream.body.destroy();
    throw new AppError('internal_error', 'The upstream provider sent a compressed stream, which cannot be scanned', { code: 'upstream_invalid', status: 502 });
  }
  reply.status(a.upstream.statusCode);
  copyResponseHeaders(reply, a.upstream.headers);
  reply.raw.writeHead(a.upstream.statusCode, reply.getHeaders() as Record<string, string>);
  reply.hijack();
  const guard = new StreamGuard({
    detection: a.deps.detection,
    policy: a.ctx.policy.detection,
    windowChars: a.deps.streamWindowChars,
    release: (raw) => reply.raw.write(raw),
  });
  let identity: StreamIdentity | null = null;
  try {
    identity = await pumpStream(a.upstream, guard, a.model);
  } catch (err) {
    if (a.abort.signal.aborted) {
      // The client went away: the upstream request was aborted with it; nothing more to send.
      guard.cancel();
      reply.raw.end();
      return reply;
    }
    // Detection failed mid-stream, the upstream broke, or its stream could not be parsed: fail closed
    // (nothing unparsed or unscanned is released).
    a.request.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'stream relay stopped');
    noteFailClosed(a.request, failReasonOfError(err));
    guard.blocked = true;
    const reason = err instanceof StreamPumpError ? err.reason : err;
    guard.blockReason ||= reason instanceof SseFormatError ? 'the upstream stream could not be parsed' : 'the output could not be scanned';
    identity = err instanceof StreamPumpError ? err.identity : null;
  } finally {
    guard.cancel();
  }
  record(a.request, guard.explained(), guard.blocked);
  if (guard.blocked) {
    a.upstream.body.destroy();
    const identityOrDefault = identity ?? { id: `chatcmpl-blocked-${Date.now()}`, created: Math.floor(Date.now() / 1000), model: a.model };
    reply.raw.write(blockedStreamTail(identityOrDefault, guard.choiceIndexes(), blockedTypes(guard.fired())));
  }
  reply.raw.end();
  return reply;
}

/** Carries the stream's identity (for the blocked tail) out of a failed pump. */
class StreamPumpError extends Error {
  constructor(readonly reason: unknown, readonly identity: StreamIdentity | null) {
    super(reason instanceof Error ? reason.message : String(reason));
  }
}

/**
 * Parses the upstream stream (HTML-standard event-stream rules, sse.ts) and feeds every event to the
 * guard, which releases each one once scanned. Stops early when the guard blocks. Returns the
 * stream's identity; rethrows a failure as a StreamPumpError carrying it (and the original error).
 */
async function pumpStream(upstream: Dispatcher.ResponseData, guard: StreamGuard, model: string): Promise<StreamIdentity | null> {
  const parser = new SseParser();
  let identity: StreamIdentity | null = null;
  const feed = async (events: SseEvent[]) => {
    for (const event of events) {
      if (guard.blocked) return;
      const parsed = chunkPayload(event);
      identity ??= identityOf(parsed, model);
      await guard.push(event, parsed);
    }
  };
  // Not body.setEncoding: undici's decodes each read on its own, breaking a character split across reads.
  const decoder = new StringDecoder('utf8');
  try {
    for await (const chunk of upstream.body as AsyncIterable<Buffer | string>) {
      await feed(parser.push(typeof chunk === 'string' ? chunk : decoder.write(chunk)));
      if (guard.blocked) return identity;
    }
    await feed([...parser.push(decoder.end()), ...parser.end()]);
    if (!guard.blocked) await guard.finish();
    return identity;
  } catch (err) {
    throw new StreamPumpError(err, identity);
  }
}

/**
 * The JSON chunk an event carries: undefined for events without data and for `[DONE]`. Any other data
 * must be a JSON object; data that is not cannot be scanned, so the stream fails closed.
 */
function chunkPayload(event: SseEvent): unknown {
  if (event.data === null || event.data === '[DONE]') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(event.data);
  } catch {
    throw new SseFormatError('the upstream sent a stream event whose data is not JSON'); // never the text itself
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new SseFormatError('the upstream sent a stream event whose data is not a JSON object');
  return parsed;
}
