import type { FastifyInstance } from 'fastify';
import type { AuditSinks } from '../management/events/audit.hook';
import type { ProjectAuthService } from '../management/projects/project-auth.service';
import type { DetectionClient } from '../shared/detection-client';
import { createHttpApp } from '../shared/http/create-app';
import { registerHealthRoute, type HealthOptions, type HealthProbe } from '../shared/http/health';
import { errorBodySchema, installOpenApi } from '../shared/http/openapi';
import { z } from 'zod';
import type { Logger } from '../shared/logger';
import type { HttpMetrics } from '../shared/metrics/process-metrics';
import { registerMetricsRoute, type MetricsEndpoint } from '../shared/metrics/metrics-endpoint';
import type { LimitsService } from '../gateway/limits/limits.service';
import { registerMessagesRoutes } from './messages.routes';

export interface SensorDeps {
  logger: Logger;
  bodyLimitBytes: number;
  /** Deepest JSON body nesting accepted (default 64; JSON_MAX_DEPTH). */
  jsonMaxDepth?: number;
  auth: ProjectAuthService;
  detection: DetectionClient;
  anthropicBaseUrl: string;
  /** Characters of context the stream scanner keeps (STREAM_WINDOW_CHARS). */
  streamWindowChars: number;
  /** UPSTREAM_TIMEOUT_MS, for /v1/messages too. */
  upstreamTimeoutMs?: number;
  audit: AuditSinks;
  probes: Record<string, HealthProbe>;
  /** Degradable probes and extra fields of /health; readiness (drain state, cache, budget) of /health/ready. */
  health?: Pick<HealthOptions, 'degradable' | 'info' | 'readiness'>;
  /** Rate limits (docs/limits.md); none when absent. */
  limits?: LimitsService;
  /** Request, detection and upstream metrics of this service (docs/metrics.md). */
  metrics?: HttpMetrics;
  /** Serves GET /metrics on this app (the process's scrape) when given. */
  metricsEndpoint?: MetricsEndpoint;
}

/**
 * The sensor's own OpenAPI document (GET /openapi.json and /docs on the sensor port): it is a
 * different server, with its own authentication (X-Svc-Key) and error envelope, so the gateway's
 * document does not list /v1/messages (docs/api.md).
 */
export const SENSOR_OPENAPI = {
  title: 'LLM content-security sensor',
  description:
    'The sensor: a messages-API passthrough for coding assistants (point ANTHROPIC_BASE_URL at it). Authenticate with a project API key in `X-Svc-Key`. ' +
    'Every error is `{"type":"error","error":{"message","type","code"}}` (the Error component). The management API is on the gateway.',
  securitySchemes: { svcKey: { type: 'apiKey', in: 'header', name: 'X-Svc-Key', description: 'A project API key' } },
  tags: [
    { name: 'proxy', description: 'Messages API passthrough, scanned in both directions' },
    { name: 'health', description: 'Service health (no authentication)' },
  ],
  errorEnvelope: z.strictObject({ type: z.literal('error'), error: errorBodySchema }),
};

/** The sensor ({sensor_url}): the messages passthrough for coding assistants, and /health. Unstarted. */
export function buildSensorApp(deps: SensorDeps): FastifyInstance {
  const app = createHttpApp({ logger: deps.logger, bodyLimitBytes: deps.bodyLimitBytes, jsonMaxDepth: deps.jsonMaxDepth, metrics: deps.metrics, envelope: 'messages' });
  installOpenApi(app, SENSOR_OPENAPI);
  registerHealthRoute(app, { service: 'sensor', probes: deps.probes, ...deps.health });
  if (deps.metricsEndpoint) registerMetricsRoute(app, deps.metricsEndpoint);
  registerMessagesRoutes(app, {
    auth: deps.auth,
    detection: deps.detection,
    audit: deps.audit,
    upstreamBaseUrl: deps.anthropicBaseUrl,
    streamWindowChars: deps.streamWindowChars,
    upstreamTimeoutMs: deps.upstreamTimeoutMs,
    limits: deps.limits,
    metrics: deps.metrics,
  });
  return app;
}
