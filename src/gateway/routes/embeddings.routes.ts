import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { auditHooks, type AuditSinks } from '../../management/events/audit.hook';
import type { ProjectAuthService } from '../../management/projects/project-auth.service';
import { authOf, requireBearerKey } from '../../management/projects/request-auth';
import type { DetectionClient } from '../../shared/detection-client';
import { AppError } from '../../shared/errors';
import { documented, PROXY_ERRORS } from '../../shared/http/openapi';
import { abortOnClientClose, copyResponseHeaders } from '../../shared/http/upstream';
import type { DetectionPolicy } from '../../shared/policy';
import { bearerCredential, trafficLimitHooks } from '../limits/limit-hooks';
import type { LimitsService } from '../limits/limits.service';
import { embeddingsRequestSchema, readEmbeddingsRequest } from '../proxy/openai-embeddings.schema';
import { scanInputStage } from '../proxy/output-scan';
import { callUpstream, plainUpstreamError, securityBlock, type UpstreamCallDeps } from './chat-completions.routes';

export interface EmbeddingsRouteDeps extends UpstreamCallDeps {
  auth: ProjectAuthService;
  detection: DetectionClient;
  audit: AuditSinks;
  limits?: LimitsService;
}

/** Whether the policy reads the request at all: input scanned (mode I / IO) and some detector, custom detector or deny-list entry. */
export function hasInputDetectors(policy: DetectionPolicy): boolean {
  if (policy.policyMode === 'O') return false;
  return policy.inputDetectors.length > 0 || policy.customDetectors.length > 0 || policy.denyList.entries.length > 0;
}

const embeddingsResponseDocSchema = z.looseObject({
  object: z.literal('list'),
  data: z.array(
    z.looseObject({
      object: z.literal('embedding'),
      index: z.number().int(),
      embedding: z.union([z.array(z.number()), z.string()]).meta({ description: 'The vector (floats), or base64 of little-endian float32 with encoding_format base64' }),
    }),
  ),
  model: z.string(),
  usage: z.looseObject({ prompt_tokens: z.number().int(), total_tokens: z.number().int() }),
});

const embeddingsDoc = documented({
  tags: ['proxy'],
  summary: 'OpenAI-compatible embeddings, input scanned',
  description:
    'Each string of `input` is scanned with the project\'s input policy (paths `input` / `input[i]`), then the body is forwarded byte for byte to the upstream provider; ' +
    'its vectors are returned unchanged (numbers: no output scan). A blocked request is a 403 security_block (code input_blocked) and nothing goes upstream. ' +
    'Token-id input (integers) cannot be scanned: it is refused with 400 unscannable_input when the policy has input detectors, forwarded otherwise. ' +
    'Rate limits, token budgets and the daily cost count the input tokens (embeddings have no output tokens). X-Risk-* headers carry the input verdict.',
  security: ['bearer'],
  body: embeddingsRequestSchema,
  responses: { 200: { description: 'The upstream\'s answer, unchanged: {object:"list", data:[{object:"embedding", index, embedding}], model, usage}', schema: embeddingsResponseDocSchema } },
  errors: PROXY_ERRORS,
});

/**
 * POST /v1/embeddings: OpenAI-compatible proxy (the openai SDK's embeddings.create()). The input is
 * scanned with the project's input policy; the raw body then goes upstream and the answer comes back as is.
 */
export function registerEmbeddingsRoutes(app: FastifyInstance, deps: EmbeddingsRouteDeps): void {
  const limited = trafficLimitHooks(deps.limits, { wire: 'openai-embeddings', authenticate: requireBearerKey(deps.auth), credential: bearerCredential });
  app.post('/v1/embeddings', { ...embeddingsDoc, ...limited, ...auditHooks(deps.audit) }, async (request, reply) => {
    const ctx = authOf(request);
    const embeddings = readEmbeddingsRequest(request.body);
    request.audit = { model: embeddings.model, findings: [], blocked: false };
    if (embeddings.tokenIds === null) request.audit.countTexts = embeddings.texts;
    else request.audit.inputTokens = embeddings.tokenIds;
    const abort = abortOnClientClose(request, reply);
    if (embeddings.tokenIds !== null) {
      if (hasInputDetectors(ctx.policy.detection)) {
        request.audit.unscannedContent = ['input'];
        void reply.header('x-risk-unscanned-content', 'input');
        throw new AppError(
          'invalid_request',
          'input: token ids cannot be scanned, and this project\'s policy scans input; send the text instead',
          { code: 'unscannable_input', details: { field: 'input' } },
        );
      }
    } else {
      await scanInputStage(deps.detection, request, reply, {
        policy: ctx.policy,
        fields: embeddings.fields,
        unscanned: [],
        signal: abort.signal,
        errorType: 'security_block',
        deny: (verdict) => securityBlock('input', verdict),
      });
    }

    const upstream = await callUpstream(deps, request, abort.signal, { method: 'POST', path: '/embeddings', body: request.rawBody ?? Buffer.alloc(0), model: embeddings.model });
    // The upstream's status, message and code in our envelope (it can only echo input that was scanned).
    if (upstream.statusCode >= 400) throw await plainUpstreamError(upstream);
    reply.status(upstream.statusCode);
    copyResponseHeaders(reply, upstream.headers);
    return reply.send(upstream.body);
  });
}
