import type { FastifyInstance } from 'fastify';
import type { AuditSinks } from '../management/events/audit.hook';
import type { ProjectAuthService } from '../management/projects/project-auth.service';
import type { DetectionClient } from '../shared/detection-client';
import { createHttpApp } from '../shared/http/create-app';
import { registerHealthRoute, type HealthProbe } from '../shared/http/health';
import type { Logger } from '../shared/logger';
import { registerMessagesRoutes } from './messages.routes';

export interface SensorDeps {
  logger: Logger;
  bodyLimitBytes: number;
  auth: ProjectAuthService;
  detection: DetectionClient;
  anthropicBaseUrl: string;
  audit: AuditSinks;
  probes: Record<string, HealthProbe>;
}

/** The sensor ({sensor_url}): the messages passthrough for coding assistants, and /health. Unstarted. */
export function buildSensorApp(deps: SensorDeps): FastifyInstance {
  const app = createHttpApp({ logger: deps.logger, bodyLimitBytes: deps.bodyLimitBytes, envelope: 'messages' });
  registerHealthRoute(app, { service: 'sensor', probes: deps.probes });
  registerMessagesRoutes(app, { auth: deps.auth, detection: deps.detection, audit: deps.audit, upstreamBaseUrl: deps.anthropicBaseUrl });
  return app;
}
