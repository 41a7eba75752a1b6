import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { auditHooks, type AuditSinks } from '../../management/events/audit.hook';
import type { ProjectAuthService } from '../../management/projects/project-auth.service';
import { requireBearerKey } from '../../management/projects/request-auth';
import { documented } from '../../shared/http/openapi';
import { AppError } from '../../shared/errors';
import { abortOnClientClose, copyResponseHeaders, discardBody } from '../../shared/http/upstream';
import { bearerCredential, requestOnlyLimitHooks } from '../limits/limit-hooks';
import type { LimitsService } from '../limits/limits.service';
import { decodeBody, MAX_UPSTREAM_BODY, readBounded } from '../proxy/output-scan';
import type { ProvidersConfig } from '../proxy/providers-file';
import { callProvider, isGlob, routeFor } from '../proxy/upstream-router';
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
  'Counted as one request for rate limits (no tokens, no cost) and audited. An upstream error keeps its status, message and code in the gateway\'s envelope. ' +
  'With PROVIDERS_FILE (docs/providers.md) the list is the union of the routable models of every provider (a provider that fails is left out and named in X-Gateway-Providers-Failed), ' +
  'and one model is asked of the provider its id routes to (404 model_not_found when no route takes it).';

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
    if (deps.providers) return listRoutableModels({ ...deps, providers: deps.providers }, request, reply);
    return relayModels(deps, request, reply, () => '/models');
  });
  app.get('/v1/models/:id', { ...retrieveDoc, ...hooks }, async (request, reply) => {
    const { id } = request.params as { id: string };
    request.audit = { model: id, findings: [], blocked: false };
    // Routed by the id as a model name; a target naming another model is asked for that one.
    return relayModels(deps, request, reply, (model) => `/models/${encodeURIComponent(model ?? id)}`, id);
  });
}

async function relayModels(deps: ModelsRouteDeps, request: FastifyRequest, reply: FastifyReply, path: (model: string | undefined) => string, model?: string): Promise<FastifyReply> {
  const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
  const abort = abortOnClientClose(request, reply);
  const upstream = await callUpstream(deps, request, abort.signal, { method: 'GET', path: (m) => `${path(m)}${query}`, model });
  // As chat completions: the upstream's status, message and code in our envelope (no caller content to scan here).
  if (upstream.statusCode >= 400) throw await plainUpstreamError(upstream);
  reply.status(upstream.statusCode);
  copyResponseHeaders(reply, upstream.headers);
  return reply.send(upstream.body);
}

type ModelObject = z.infer<typeof modelDocSchema>;

/** The models one provider lists: Azure's deployment mapping (its /models lists base models, not deployments), else its GET /models. */
async function providerModels(deps: ModelsRouteDeps & { providers: ProvidersConfig }, request: FastifyRequest, signal: AbortSignal, name: string): Promise<ModelObject[]> {
  const provider = deps.providers.providers.get(name)!;
  if (provider.kind === 'azure') return Object.keys(provider.deployments).map((id) => ({ id, object: 'model', created: 0, owned_by: name }));
  const upstream = await callProvider(deps, request, signal, name, { method: 'GET', path: '/models' });
  if (upstream.statusCode >= 400) {
    discardBody(upstream.body);
    throw new Error(`status ${upstream.statusCode}`);
  }
  const raw = await readBounded(upstream.body, MAX_UPSTREAM_BODY);
  if (raw === null) throw new Error('too large');
  const parsed = JSON.parse(decodeBody(raw, upstream.headers['content-encoding'], MAX_UPSTREAM_BODY).toString('utf8')) as { data?: unknown };
  if (!Array.isArray(parsed.data)) throw new Error('not a model list');
  return parsed.data.filter((m): m is ModelObject => typeof (m as { id?: unknown } | null)?.id === 'string');
}

/**
 * GET /v1/models with PROVIDERS_FILE: the union of the routable models. Every provider some route
 * reaches is asked for its list (in parallel, with its retries); a model it lists is kept when its id
 * routes to a target of that provider that keeps the caller's model name (no `model` rewrite), so the
 * list holds only what the gateway would send there. Route names that are not globs are added (owned by
 * their first target's provider) when no provider listed them. De-duplicated by id, first seen wins.
 * A provider that fails is left out and named in X-Gateway-Providers-Failed; when every provider asked
 * failed, the answer is a 502 upstream_unavailable.
 */
async function listRoutableModels(deps: ModelsRouteDeps & { providers: ProvidersConfig }, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const config = deps.providers;
  const abort = abortOnClientClose(request, reply);
  const routes = [...config.routes, ...(config.default ? [config.default] : [])];
  const asked = [...new Set(routes.flatMap((r) => r.targets.map((t) => t.provider)))];
  const lists = await Promise.all(
    asked.map((name) =>
      providerModels(deps, request, abort.signal, name).then(
        (models) => ({ name, models }),
        (err: unknown) => {
          request.log.warn({ provider: name, err: err instanceof Error ? err.message : 'unknown' }, 'provider model list failed: left out of GET /v1/models');
          return { name, models: null };
        },
      ),
    ),
  );
  const failed = lists.filter((l) => l.models === null).map((l) => l.name);
  if (asked.length > 0 && failed.length === asked.length) {
    throw new AppError('internal_error', `No provider answered its model list (${failed.join(', ')})`, { code: 'upstream_unavailable', status: 502 });
  }
  const data = new Map<string, ModelObject>();
  for (const { name, models } of lists) {
    for (const m of models ?? []) {
      const routed = routeFor(config, m.id)?.targets.some((t) => t.provider === name && t.model === undefined);
      if (routed && !data.has(m.id)) data.set(m.id, m);
    }
  }
  for (const r of config.routes) {
    if (!isGlob(r.match) && !data.has(r.match)) data.set(r.match, { id: r.match, object: 'model', created: 0, owned_by: r.targets[0]!.provider });
  }
  if (failed.length > 0) void reply.header('x-gateway-providers-failed', failed.join(','));
  return reply.status(200).send({ object: 'list', data: [...data.values()] });
}
