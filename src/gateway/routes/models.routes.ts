import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { auditHooks, type AuditSinks } from '../../management/events/audit.hook';
import type { ProjectAuthService } from '../../management/projects/project-auth.service';
import { requireBearerKey } from '../../management/projects/request-auth';
import { documented } from '../../shared/http/openapi';
import { abortOnClientClose, copyResponseHeaders } from '../../shared/http/upstream';
import { bearerCredential, requestOnlyLimitHooks } from '../limits/limit-hooks';
import type { LimitsService } from '../limits/limits.service';
import { callUpstream, plainUpstreamError, type UpstreamCallDeps } from './chat-completions.routes';

export interface ModelsRouteDeps extends UpstreamCallDeps {
  auth: ProjectAuthService;
  audit: AuditSinks;
  limits?: LimitsService;
}

/** One model as the OpenAI API describes it (providers may add fields; they are relayed). */
export const modelDocSchema = z.looseObject({
  id: z.string(),
  object: z.literal('model'),
  created: z.number().int(),
  owned_by: z.string(),
});
const modelListDocSchema = z.looseObject({ object: z.literal('list'), data: z.array(modelDocSchema) });
const MODELS_ERRORS = [400, 401, 403, 404, 429, 500, 502, 503, 504];
const PASSTHROUGH =
  'Relayed from the upstream provider (OPENAI_BASE_URL, with the gateway\'s own upstream credential); the answer carries no prompt or completion, so nothing is scanned. ' +
  'Counted as one request for rate limits (no tokens, no cost) and audited. An upstream error keeps its status, message and code in the gateway\'s envelope.';

const listDoc = documented({
  tags: ['proxy'],
  summary: 'List the upstream provider\'s models (OpenAI-compatible)',
  description: PASSTHROUGH,
  security: ['bearer'],
  responses: { 200: { description: 'The upstream\'s list, unchanged: {object:"list", data:[model objects]}', schema: modelListDocSchema } },
  errors: MODELS_ERRORS,
});

const retrieveDoc = documented({
  tags: ['proxy'],
  summary: 'One model of the upstream provider (OpenAI-compatible)',
  description: PASSTHROUGH,
  security: ['bearer'],
  params: z.strictObject({ id: z.string().meta({ description: 'The model id, URL-encoded (an id holding "/" is sent as %2F)' }) }),
  responses: { 200: { description: 'The upstream\'s model object, unchanged', schema: modelDocSchema } },
  errors: MODELS_ERRORS,
});

/**
 * GET /v1/models and GET /v1/models/{id}: passthrough to the OpenAI-compatible upstream, so clients
 * (the openai SDK's models.list() / models.retrieve()) work against the gateway. Authenticated with
 * the project key (full or traffic scope), counted as a request, audited like every traffic request.
 */
export function registerModelsRoutes(app: FastifyInstance, deps: ModelsRouteDeps): void {
  const hooks = { ...requestOnlyLimitHooks(deps.limits, { authenticate: requireBearerKey(deps.auth), credential: bearerCredential }), ...auditHooks(deps.audit) };
  app.get('/v1/models', { ...listDoc, ...hooks }, async (request, reply) => {
    request.audit = { findings: [], blocked: false };
    return relayModels(deps, request, reply, '/models');
  });
  app.get('/v1/models/:id', { ...retrieveDoc, ...hooks }, async (request, reply) => {
    const { id } = request.params as { id: string };
    request.audit = { model: id, findings: [], blocked: false };
    return relayModels(deps, request, reply, `/models/${encodeURIComponent(id)}`);
  });
}

async function relayModels(deps: ModelsRouteDeps, request: FastifyRequest, reply: FastifyReply, path: string): Promise<FastifyReply> {
  const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
  const abort = abortOnClientClose(request, reply);
  const upstream = await callUpstream(deps, request, abort.signal, { method: 'GET', path: `${path}${query}` });
  // As chat completions: the upstream's status, message and code in our envelope (no caller content to scan here).
  if (upstream.statusCode >= 400) throw await plainUpstreamError(upstream);
  reply.status(upstream.statusCode);
  copyResponseHeaders(reply, upstream.headers);
  return reply.send(upstream.body);
}
