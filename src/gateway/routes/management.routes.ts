import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodType, z } from 'zod';
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

function policyRoutes(app: FastifyInstance, deps: ManagementRouteDeps): void {
  const s = deps.policies;
  app.get('/policies/detector_types', async () => s.detectorTypes());
  app.get('/policies/threshold_levels', async () => s.thresholdLevels());
  app.get('/policies', async (r) => s.list(org(r), parseQuery(listPoliciesQuerySchema, r.query)));
  app.post('/policies', async (r, reply) => reply.status(201).send(await s.create(actor(r), body(createPolicySchema, r))));
  app.get<IdParams>('/policies/:id', async (r) => s.get(org(r), r.params.id));
  app.patch<IdParams>('/policies/:id', async (r) => s.update(actor(r), r.params.id, body(updatePolicySchema, r)));
  app.delete<IdParams>('/policies/:id', async (r, reply) => {
    await s.delete(actor(r), r.params.id);
    return reply.status(204).send();
  });
  app.post<IdParams>('/policies/:id/set_default', async (r) => s.setDefault(actor(r), r.params.id));
  app.post<IdParams>('/policies/:id/duplicate', async (r, reply) => reply.status(201).send(await s.duplicate(actor(r), r.params.id)));
}

function projectRoutes(app: FastifyInstance, deps: ManagementRouteDeps): void {
  const s = deps.projects;
  app.get('/projects', async (r) => s.list(org(r), parseQuery(listProjectsQuerySchema, r.query)));
  app.post('/projects', async (r, reply) => reply.status(201).send(await s.create(actor(r), body(createProjectSchema, r))));
  app.get<IdParams>('/projects/:id', async (r) => s.get(org(r), r.params.id));
  app.patch<IdParams>('/projects/:id', async (r) => s.update(actor(r), r.params.id, body(updateProjectSchema, r)));
  app.delete<IdParams>('/projects/:id', async (r, reply) => {
    await s.delete(actor(r), r.params.id);
    return reply.status(204).send();
  });
  app.post<IdParams>('/projects/:id/rotate_key', async (r) => s.rotateKey(actor(r), r.params.id));
}

function eventRoutes(app: FastifyInstance, deps: ManagementRouteDeps): void {
  app.get('/events', async (r) => deps.events.list(org(r), parseQuery(listEventsQuerySchema, r.query)));
  app.get('/events/sessions', async (r) => deps.events.sessions(org(r), parseQuery(listSessionsQuerySchema, r.query)));
  app.get('/management_events', async (r) => deps.trail.list(org(r), parseQuery(listManagementEventsQuerySchema, r.query)));
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
