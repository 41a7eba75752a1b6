import type { FastifyInstance } from 'fastify';
import type { PolicyService } from '../management/policies/policy.service';
import type { ProjectAuthService } from '../management/projects/project-auth.service';
import type { ProjectService } from '../management/projects/project.service';
import type { DetectionClient } from '../shared/detection-client';
import { createHttpApp } from '../shared/http/create-app';
import { registerHealthRoute, type HealthProbe } from '../shared/http/health';
import type { Logger } from '../shared/logger';
import { registerDetectRoutes } from './routes/detect.routes';
import { registerManagementRoutes } from './routes/management.routes';

export interface GatewayDeps {
  logger: Logger;
  bodyLimitBytes: number;
  auth: ProjectAuthService;
  detection: DetectionClient;
  policies: PolicyService;
  projects: ProjectService;
  probes: Record<string, HealthProbe>;
}

/** The gateway ({base_url}): traffic and management routes. Returned unstarted; the caller listens. */
export function buildGatewayApp(deps: GatewayDeps): FastifyInstance {
  const app = createHttpApp({ logger: deps.logger, bodyLimitBytes: deps.bodyLimitBytes, envelope: 'standard' });
  registerHealthRoute(app, { service: 'gateway', probes: deps.probes });
  registerDetectRoutes(app, { auth: deps.auth, detection: deps.detection });
  registerManagementRoutes(app, { auth: deps.auth, policies: deps.policies, projects: deps.projects });
  return app;
}
