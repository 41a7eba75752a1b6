import DataLoader from 'dataloader';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Actor, ManagementTrail } from '../../management/audit-trail/management-trail';
import type { EventService } from '../../management/events/event.service';
import type { PolicyService } from '../../management/policies/policy.service';
import type { AuthContext, ProjectAuthService } from '../../management/projects/project-auth.service';
import type { ProjectService } from '../../management/projects/project.service';
import { actorOf, authOf } from '../../management/projects/request-auth';
import type { PolicyView } from '../../management/views';
import type { DetectionClient } from '../../shared/detection-client';
import { notFound } from '../../shared/errors';

export interface GraphqlServices {
  auth: ProjectAuthService;
  policies: PolicyService;
  projects: ProjectService;
  events: EventService;
  trail: ManagementTrail;
  /** The detection client of /v1/detect (the playground's detect query). */
  detection: DetectionClient;
}

/** What every resolver receives: the authenticated caller, the services, and per-request loaders. */
export interface GraphqlContext {
  organizationId: string;
  /** The caller as the author of changes (the management audit trail records it). */
  actor: Actor;
  auth: AuthContext;
  services: GraphqlServices;
  loaders: {
    /** Policies by id, batched per request: a list of N projects asks for their policies in one query. */
    policy: DataLoader<string, PolicyView>;
  };
  log: FastifyBaseLogger;
  requestId: string;
}

/** Builds the context of one request; the bearer key was checked by the route's onRequest hook. */
export function buildContext(request: FastifyRequest, services: GraphqlServices): GraphqlContext {
  const auth = authOf(request);
  const organizationId = auth.organizationId;
  return {
    organizationId,
    actor: actorOf(request, 'graphql'),
    auth,
    services,
    loaders: {
      policy: new DataLoader<string, PolicyView>(async (ids) => {
        const found = await services.policies.getMany(organizationId, ids);
        return ids.map((id) => found.get(id) ?? notFound('Policy not found'));
      }),
    },
    log: request.log,
    requestId: String(request.id),
  };
}
