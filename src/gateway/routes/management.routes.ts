import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z, type ZodType } from 'zod';
import type { ManagementTrail } from '../../management/audit-trail/management-trail';
import { listManagementEventsQuerySchema } from '../../management/audit-trail/management-trail.schemas';
import { listEventsQuerySchema, listSessionsQuerySchema } from '../../management/events/event.schemas';
import type { EventService } from '../../management/events/event.service';
import { createPolicySchema, listPoliciesQuerySchema, updatePolicySchema } from '../../management/policies/policy.schemas';
import type { PolicyService } from '../../management/policies/policy.service';
import type { ProjectAuthService } from '../../management/projects/project-auth.service';
import { createProjectSchema, listProjectsQuerySchema, updateProjectSchema } from '../../management/projects/project.schemas';
import type { ProjectService } from '../../management/projects/project.service';
import { actorOf, authOf, requireManagementKey } from '../../management/projects/request-auth';
import { parseBody, parseQuery } from '../../shared/http/validation';
import { documented, type ResponseDoc, type RouteDoc } from '../../shared/http/openapi';
import {
  createdProjectViewSchema,
  detectorTypesSchema,
  eventViewSchema,
  managementEventViewSchema,
  pageSchema,
  policyViewSchema,
  projectViewSchema,
  sessionSummaryViewSchema,
  thresholdLevelsSchema,
} from '../../management/views.schemas';
import { bearerCredential, limitedAuth } from '../limits/limit-hooks';
import type { LimitsService } from '../limits/limits.service';

export interface ManagementRouteDeps {
  auth: ProjectAuthService;
  policies: PolicyService;
  projects: ProjectService;
  events: EventService;
  trail: ManagementTrail;
  limits?: LimitsService;
}

/** The spec's management routes, served under /v1 and /api/v1, with and without the trailing slash. */
export const MANAGEMENT_PREFIXES = ['/v1', '/api/v1'] as const;

type IdParams = { Params: { id: string } };

const body = <S extends ZodType>(schema: S, request: FastifyRequest): z.infer<S> => parseBody(schema, request.body);
const org = (request: FastifyRequest) => authOf(request).organizationId;
/** Who makes a change (recorded in the management audit trail). */
const actor = (request: FastifyRequest) => actorOf(request, 'rest');

/**
 * OpenAPI entry of a management route (shared/http/openapi.ts): tag, bearer key, the errors every
 * management route can answer (404 too for a route with :id); the request and answer schemas as given.
 */
function doc(summary: string, ok: Record<number, ResponseDoc>, more: Partial<RouteDoc> = {}) {
  const errors = [400, 401, 403, ...(more.params ? [404] : []), 429, 500, 503];
  return documented({ tags: ['management'], summary, security: ['bearer'], responses: ok, errors, ...more });
}
const idParam = { params: z.strictObject({ id: z.string().meta({ description: 'The id (a UUID)' }) }) };
const ok = (schema: ZodType, description = 'OK') => ({ 200: { description, schema } });
const created = (schema: ZodType) => ({ 201: { description: 'Created', schema } });
const deleted = { 204: { description: 'Deleted' } };

function policyRoutes(app: FastifyInstance, deps: ManagementRouteDeps): void {
  const s = deps.policies;
  app.get('/policies/detector_types', doc('List detector types', ok(detectorTypesSchema)), async () => s.detectorTypes());
  app.get('/policies/threshold_levels', doc('List threshold levels', ok(thresholdLevelsSchema)), async () => s.thresholdLevels());
  app.get('/policies', doc('List policies', ok(pageSchema(policyViewSchema)), { query: listPoliciesQuerySchema }), async (r) => s.list(org(r), parseQuery(listPoliciesQuerySchema, r.query)));
  app.post('/policies', doc('Create a policy', created(policyViewSchema), { body: createPolicySchema }), async (r, reply) => reply.status(201).send(await s.create(actor(r), body(createPolicySchema, r))));
  app.get<IdParams>('/policies/:id', doc('Get a policy', ok(policyViewSchema), idParam), async (r) => s.get(org(r), r.params.id));
  app.patch<IdParams>('/policies/:id', doc('Update a policy', ok(policyViewSchema), { ...idParam, body: updatePolicySchema }), async (r) => s.update(actor(r), r.params.id, body(updatePolicySchema, r)));
  app.delete<IdParams>('/policies/:id', doc('Delete a policy', deleted, idParam), async (r, reply) => {
    await s.delete(actor(r), r.params.id);
    return reply.status(204).send();
  });
  app.post<IdParams>('/policies/:id/set_default', doc('Make a policy the organization default', ok(policyViewSchema), idParam), async (r) => s.setDefault(actor(r), r.params.id));
  app.post<IdParams>('/policies/:id/duplicate', doc('Duplicate a policy', created(policyViewSchema), idParam), async (r, reply) => reply.status(201).send(await s.duplicate(actor(r), r.params.id)));
}

function projectRoutes(app: FastifyInstance, deps: ManagementRouteDeps): void {
  const s = deps.projects;
  app.get('/projects', doc('List projects', ok(pageSchema(projectViewSchema)), { query: listProjectsQuerySchema }), async (r) => s.list(org(r), parseQuery(listProjectsQuerySchema, r.query)));
  app.post('/projects', doc('Create a project (answers its key, once)', created(createdProjectViewSchema), { body: createProjectSchema }), async (r, reply) => reply.status(201).send(await s.create(actor(r), body(createProjectSchema, r))));
  app.get<IdParams>('/projects/:id', doc('Get a project', ok(projectViewSchema), idParam), async (r) => s.get(org(r), r.params.id));
  app.patch<IdParams>('/projects/:id', doc('Update a project', ok(projectViewSchema), { ...idParam, body: updateProjectSchema }), async (r) => s.update(actor(r), r.params.id, body(updateProjectSchema, r)));
  app.delete<IdParams>('/projects/:id', doc('Delete a project', deleted, idParam), async (r, reply) => {
    await s.delete(actor(r), r.params.id);
    return reply.status(204).send();
  });
  app.post<IdParams>('/projects/:id/rotate_key', doc('Rotate a project key (answers the new key, once)', ok(createdProjectViewSchema), idParam), async (r) => s.rotateKey(actor(r), r.params.id));
}

function eventRoutes(app: FastifyInstance, deps: ManagementRouteDeps): void {
  app.get('/events', doc('List security events (the audit trail of traffic)', ok(pageSchema(eventViewSchema)), { query: listEventsQuerySchema }), async (r) => deps.events.list(org(r), parseQuery(listEventsQuerySchema, r.query)));
  app.get('/events/sessions', doc('List sessions (events grouped by session id)', ok(pageSchema(sessionSummaryViewSchema)), { query: listSessionsQuerySchema }), async (r) => deps.events.sessions(org(r), parseQuery(listSessionsQuerySchema, r.query)));
  app.get('/management_events', doc('List management events (who changed which policy or project, before → after)', ok(pageSchema(managementEventViewSchema)), { query: listManagementEventsQuerySchema }), async (r) => deps.trail.list(org(r), parseQuery(listManagementEventsQuerySchema, r.query)));
}

export function registerManagementRoutes(app: FastifyInstance, deps: ManagementRouteDeps): void {
  for (const prefix of MANAGEMENT_PREFIXES) {
    void app.register(
      async (scoped) => {
        scoped.addHook('onRequest', limitedAuth(deps.limits, { routeClass: 'management', authenticate: requireManagementKey(deps.auth), credential: bearerCredential }));
        policyRoutes(scoped, deps);
        projectRoutes(scoped, deps);
        eventRoutes(scoped, deps);
      },
      { prefix },
    );
  }
}
