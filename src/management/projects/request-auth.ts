import type { FastifyRequest } from 'fastify';
import type { ManagementVia } from '../../storage/entities/management-event.entity';
import type { Actor } from '../audit-trail/management-trail';
import type { AuthContext, ProjectAuthService } from './project-auth.service';
import { AppError, unauthenticated } from '../../shared/errors';

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
  }
}

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** Extracts the key of `Authorization: Bearer <key>`; a header in any other form is malformed (401). */
export function bearerKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (Array.isArray(header)) throw unauthenticated('Send exactly one Authorization header', 'malformed_api_key');
  const match = BEARER.exec(header);
  if (!match) throw unauthenticated('Authorization header must be "Bearer <API key>"', 'malformed_api_key');
  return match[1];
}

/** preHandler: authenticates the bearer key and attaches the caller's project and policy to the request. */
export function requireBearerKey(auth: ProjectAuthService) {
  return async (request: FastifyRequest): Promise<void> => {
    request.auth = await auth.authenticate(bearerKey(request.headers.authorization));
  };
}

/**
 * Management routes (REST and GraphQL) need a `full` key: a `traffic` key (proxy, detect and sensor
 * only) gets 403 permission_denied. Called after authentication, on the cached context, so a scope
 * change applies as soon as the auth cache is invalidated (at once, on every instance).
 */
export function assertManagementScope(ctx: AuthContext): void {
  if (ctx.keyScope === 'full') return;
  throw new AppError(
    'permission_denied',
    'This API key has the traffic scope (proxy, detect and sensor only): management needs the key of a project with key_scope "full"',
    { code: 'insufficient_key_scope' },
  );
}

/** preHandler of the management routes: requireBearerKey, then the key must have the `full` scope. */
export function requireManagementKey(auth: ProjectAuthService) {
  const authenticate = requireBearerKey(auth);
  return async (request: FastifyRequest): Promise<void> => {
    await authenticate(request);
    assertManagementScope(authOf(request));
  };
}

/** The authenticated context of a request that passed requireBearerKey (or the sensor's key hook). */
export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth) throw unauthenticated('Missing API key', 'missing_api_key');
  return request.auth;
}

/** The caller of a management change, for the audit trail: organization, project, key prefix, request id. */
export function actorOf(request: FastifyRequest, via: ManagementVia): Actor {
  const auth = authOf(request);
  return { organizationId: auth.organizationId, projectId: auth.projectId, keyPrefix: auth.keyPrefix, requestId: String(request.id), via };
}
