import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { auditHooks, failReasonOfResult, noteFailClosed, type AuditSinks } from '../../management/events/audit.hook';
import type { ProjectAuthService } from '../../management/projects/project-auth.service';
import { authOf, requireBearerKey } from '../../management/projects/request-auth';
import type { DetectionClient } from '../../shared/detection-client';
import { explainVerdict } from '../../shared/explain/verdict-matches';
import { documented } from '../../shared/http/openapi';
import { parseBody } from '../../shared/http/validation';
import { detectResponseSchema } from '../../management/views.schemas';
import { setRiskHeaders, unscannedOf } from '../../shared/http/risk-headers';
import { abortOnClientClose } from '../../shared/http/upstream';
import { directionSchema } from '../../shared/policy';
import { bearerCredential, trafficLimitHooks } from '../limits/limit-hooks';
import type { LimitsService } from '../limits/limits.service';

/** Largest `content` accepted by /v1/detect (characters); the body limit applies first. */
export const MAX_DETECT_CONTENT_CHARS = 1_000_000;

export const detectBodySchema = z.strictObject({
  content: z.string().max(MAX_DETECT_CONTENT_CHARS),
  direction: directionSchema.default('input'),
});

export interface DetectRouteDeps {
  auth: ProjectAuthService;
  detection: DetectionClient;
  audit: AuditSinks;
  limits?: LimitsService;
}

/**
 * POST /v1/detect: scans `content` in `direction` with the caller's project policy and answers
 * `{blocked, categories:[{type, confidence, action, matches:[{path, start, end, signal, score}]}], unscanned}`
 * (verdict-matches.ts). A blocked verdict is a 200 answer
 * here (this call only detects); X-Risk-* headers mirror the body.
 */
export function registerDetectRoutes(app: FastifyInstance, deps: DetectRouteDeps): void {
  const limited = trafficLimitHooks(deps.limits, { wire: 'detect', authenticate: requireBearerKey(deps.auth), credential: bearerCredential });
  const doc = documented({
    tags: ['detection'],
    summary: 'Scan a text with the project policy',
    description: 'A blocked verdict is a 200 answer (this call only detects); X-Risk-Blocked, X-Risk-Categories, X-Risk-Confidence and X-Risk-Unscanned mirror the body.',
    security: ['bearer'],
    body: detectBodySchema,
    responses: { 200: { description: 'The verdict', schema: detectResponseSchema } },
    errors: [400, 401, 413, 429, 500, 503],
  });
  app.post('/v1/detect', { ...doc, ...limited, ...auditHooks(deps.audit) }, async (request, reply) => {
    const body = parseBody(detectBodySchema, request.body);
    const ctx = authOf(request);
    request.audit = { countTexts: [body.content] };
    const verdict = await deps.detection.detect({
      text: body.content,
      direction: body.direction,
      policy: ctx.policy.detection,
      signal: abortOnClientClose(request, reply).signal,
      requestId: String(request.id),
    });
    const unscanned = unscannedOf(verdict);
    // One field, `content`: the finding offsets are already offsets into it.
    const categories = explainVerdict(verdict, (start, end) => [{ path: 'content', start, end }]);
    request.audit.findings = categories;
    request.audit.blocked = verdict.blocked;
    noteFailClosed(request, failReasonOfResult(verdict));
    setRiskHeaders(reply, { blocked: verdict.blocked, categories: verdict.categories, unscanned });
    return { blocked: verdict.blocked, categories, unscanned };
  });
}
