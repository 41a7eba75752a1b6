import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { request as upstreamRequest } from 'undici';
import { auditHooks, failReasonOfResult, noteFailClosed, type AuditSinks } from '../management/events/audit.hook';
import type { ProjectAuthService } from '../management/projects/project-auth.service';
import type { DetectionClient } from '../shared/detection-client';
import { authOf } from '../management/projects/request-auth';
import { AppError } from '../shared/errors';
import { setRiskHeaders, unscannedOf } from '../shared/http/risk-headers';
import { abortOnClientClose, copyResponseHeaders, HOP_BY_HOP } from '../shared/http/upstream';
import { readMessagesRequest } from './messages-spec';
import { joinFields } from '../shared/explain/field-layout';
import { explainVerdict } from '../shared/explain/verdict-matches';
import { svcKeyCredential, trafficLimitHooks } from '../gateway/limits/limit-hooks';
import type { LimitsService } from '../gateway/limits/limits.service';

/** Never forwarded upstream: hop-by-hop headers and ours. */
const STRIPPED_REQUEST = new Set([...HOP_BY_HOP, 'x-svc-key', 'x-request-id']);

export interface MessagesRouteDeps {
  auth: ProjectAuthService;
  detection: DetectionClient;
  audit: AuditSinks;
  upstreamBaseUrl: string;
  limits?: LimitsService;
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
 * X-Svc-Key) and pipe the upstream response or stream back with X-Risk-* headers, or 5 deny with 403
 * permission_error and forward nothing.
 */
export function registerMessagesRoutes(app: FastifyInstance, deps: MessagesRouteDeps): void {
  const limited = trafficLimitHooks(deps.limits, { wire: 'messages', authenticate: authenticateSensor(deps), credential: svcKeyCredential });
  const hooks = { ...limited, ...auditHooks(deps.audit) };
  app.post('/v1/messages', hooks, async (request, reply) => {
    const ctx = authOf(request);
    const summary = readMessagesRequest(request.body);
    request.audit = { model: summary.model, countTexts: summary.texts };
    const { text, layout } = joinFields(summary.fields);
    const verdict = await deps.detection.detect({ text, direction: 'input', policy: ctx.policy.detection });
    request.audit.findings = explainVerdict(verdict, (start, end) => layout.locate(start, end));
    request.audit.blocked = verdict.blocked;
    noteFailClosed(request, failReasonOfResult(verdict));
    const unscanned = unscannedOf(verdict);
    setRiskHeaders(reply, { blocked: verdict.blocked, categories: verdict.categories, unscanned });
    if (verdict.blocked) {
      const types = verdict.categories.filter((c) => c.action === 'block').map((c) => c.type);
      const reason = types.length > 0 ? `detected ${types.join(', ')}` : verdict.blockReason || 'policy';
      throw new AppError('permission_error', `Request blocked by the security policy: ${reason}`, { code: 'content_blocked' });
    }
    return forward(deps, request, reply);
  });
}

async function forward(deps: MessagesRouteDeps, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
  const abort = abortOnClientClose(request, reply);
  let upstream;
  try {
    upstream = await upstreamRequest(`${deps.upstreamBaseUrl}/v1/messages${query}`, {
      method: 'POST',
      headers: upstreamHeaders(request.headers),
      body: request.rawBody ?? Buffer.alloc(0),
      signal: abort.signal,
      headersTimeout: 600_000,
      bodyTimeout: 600_000,
    });
  } catch (err) {
    request.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'upstream unreachable');
    throw new AppError('internal_error', 'The upstream provider could not be reached', { code: 'upstream_unavailable', status: 502 });
  }
  reply.status(upstream.statusCode);
  copyResponseHeaders(reply, upstream.headers);
  return reply.send(upstream.body);
}
