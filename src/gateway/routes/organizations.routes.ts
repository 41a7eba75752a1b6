import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createOrganizationSchema, type OrganizationService } from '../../management/organizations/organization.service';
import type { ProjectAuthService } from '../../management/projects/project-auth.service';
import { bearerKey } from '../../management/projects/request-auth';
import { apiKeyMatches, hashApiKey, isWellFormedApiKey } from '../../shared/api-key';
import { AppError, unauthenticated } from '../../shared/errors';
import { documented } from '../../shared/http/openapi';
import { parseBody } from '../../shared/http/validation';
import { createdOrganizationViewSchema } from '../../management/views.schemas';
import { limitedAuth } from '../limits/limit-hooks';
import type { LimitsService } from '../limits/limits.service';
import { MANAGEMENT_PREFIXES } from './management.routes';

export interface OrganizationRouteDeps {
  /** ADMIN_API_KEY: the operator credential; undefined = the route is disabled. */
  adminApiKey: string | undefined;
  auth: ProjectAuthService;
  organizations: OrganizationService;
  limits?: LimitsService;
}

/**
 * onRequest of the operator routes. Disabled (no ADMIN_API_KEY): 403 admin_api_disabled. Else the bearer
 * must be the operator credential, compared in constant time (SHA-256 of both, timingSafeEqual); a valid
 * project key gets 403 operator_credential_required, anything else 401.
 */
export function requireOperator(adminApiKey: string | undefined, auth: ProjectAuthService) {
  const expected = adminApiKey === undefined ? undefined : hashApiKey(adminApiKey);
  return async (request: FastifyRequest): Promise<void> => {
    if (expected === undefined) {
      throw new AppError('permission_denied', 'Creating organizations over the API is disabled on this server: set ADMIN_API_KEY (the operator credential) to enable it', {
        code: 'admin_api_disabled',
      });
    }
    const presented = bearerKey(request.headers.authorization);
    if (!presented) throw unauthenticated('Missing operator credential: send Authorization: Bearer <ADMIN_API_KEY>', 'missing_api_key');
    if (apiKeyMatches(presented, expected)) return;
    if (isWellFormedApiKey(presented)) {
      // A project key: an unknown one is a failed authentication (401, counted), a valid one is refused.
      await auth.authenticate(presented);
      throw new AppError('permission_denied', 'Project API keys cannot create organizations: use the operator credential (ADMIN_API_KEY)', {
        code: 'operator_credential_required',
      });
    }
    throw unauthenticated('Invalid operator credential', 'invalid_admin_key');
  };
}

/** POST /v1/organizations (and /api/v1/organizations): a new organization, its default policy and first project. */
export function registerOrganizationRoutes(app: FastifyInstance, deps: OrganizationRouteDeps): void {
  // Failed attempts count against the client address (AUTH_FAILURES_PER_MINUTE), as for project keys.
  const onRequest = limitedAuth(deps.limits, { routeClass: 'management', authenticate: requireOperator(deps.adminApiKey, deps.auth), credential: () => undefined });
  const doc = documented({
    tags: ['management'],
    summary: 'Create an organization with its default policy and first project (operator credential ADMIN_API_KEY only)',
    security: ['operator'],
    body: createOrganizationSchema,
    responses: { 201: { description: 'Created; the first project\'s raw key is in this response only', schema: createdOrganizationViewSchema } },
    errors: [400, 401, 403, 429, 500, 503],
  });
  for (const prefix of MANAGEMENT_PREFIXES) {
    app.post(`${prefix}/organizations`, { onRequest, ...doc }, async (request, reply) =>
      reply.status(201).send(await deps.organizations.create(parseBody(createOrganizationSchema, request.body))),
    );
  }
}
