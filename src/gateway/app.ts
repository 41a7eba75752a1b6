import type { FastifyInstance } from 'fastify';
import type { AuditSinks } from '../management/events/audit.hook';
import type { ManagementTrail } from '../management/audit-trail/management-trail';
import type { EventService } from '../management/events/event.service';
import type { OrganizationService } from '../management/organizations/organization.service';
import type { PolicyService } from '../management/policies/policy.service';
import type { ProjectAuthService } from '../management/projects/project-auth.service';
import type { ProjectService } from '../management/projects/project.service';
import type { DetectionClient } from '../shared/detection-client';
import { createHttpApp } from '../shared/http/create-app';
import { registerHealthRoute, type HealthOptions, type HealthProbe } from '../shared/http/health';
import { errorEnvelopeSchema, installOpenApi } from '../shared/http/openapi';
import type { Logger } from '../shared/logger';
import type { HttpMetrics } from '../shared/metrics/process-metrics';
import { registerMetricsRoute, type MetricsEndpoint } from '../shared/metrics/metrics-endpoint';
import { graphqlPlugin } from './graphql/graphql.plugin';
import type { LimitsService } from './limits/limits.service';
import type { ProvidersConfig } from './proxy/providers-file';
import { registerChatCompletionsRoutes, type UpstreamCallDeps } from './routes/chat-completions.routes';
import { registerConsoleRoutes } from './routes/console.routes';
import { registerDetectRoutes } from './routes/detect.routes';
import { registerModelsRoutes } from './routes/models.routes';
import { registerEmbeddingsRoutes } from './routes/embeddings.routes';
import { registerResponsesRoutes } from './routes/responses.routes';
import type { ResponseOwnership } from './proxy/response-ownership';
import { registerManagementRoutes } from './routes/management.routes';
import { registerOrganizationRoutes } from './routes/organizations.routes';

export interface GatewayDeps {
  logger: Logger;
  bodyLimitBytes: number;
  /** Deepest JSON body nesting accepted (default 64; JSON_MAX_DEPTH). */
  jsonMaxDepth?: number;
  auth: ProjectAuthService;
  detection: DetectionClient;
  policies: PolicyService;
  projects: ProjectService;
  events: EventService;
  organizations: OrganizationService;
  /** ADMIN_API_KEY: the operator credential of POST /v1/organizations (disabled when absent). */
  adminApiKey?: string;
  /** The management audit trail (read by GET /v1/management_events/ and the GraphQL query). */
  trail: ManagementTrail;
  audit: AuditSinks;
  /** Which organization created each stored response (POST /v1/responses): the only one that may read it back. */
  responseOwners: ResponseOwnership;
  /** `providers`: PROVIDERS_FILE (docs/providers.md); the single baseUrl / apiKey upstream when absent. */
  upstream: { baseUrl: string; apiKey?: string; timeoutMs: number; streamWindowChars: number; providers?: ProvidersConfig };
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

/** The gateway's OpenAPI document: GET /openapi.json, GET /docs (docs/api.md). */
export const GATEWAY_OPENAPI = {
  title: 'LLM content-security gateway',
  description:
    'The gateway: the OpenAI-compatible proxy, detection and the management API. Authenticate with a project API key: `Authorization: Bearer <key>`. ' +
    'Every error is `{"error":{"message","type","code"}}` (the Error component). The sensor (coding-assistant passthrough, POST /v1/messages) listens on its own port and serves its own document there.',
  securitySchemes: {
    bearer: { type: 'http', scheme: 'bearer', description: 'A project API key' },
    operator: { type: 'http', scheme: 'bearer', description: 'The operator credential (the ADMIN_API_KEY setting), distinct from every project key' },
  },
  tags: [
    { name: 'proxy', description: 'OpenAI-compatible proxy, scanned in both directions' },
    { name: 'detection', description: 'Scan a text without forwarding it' },
    { name: 'management', description: 'Policies, projects and security events (REST and GraphQL)' },
    { name: 'health', description: 'Service health (no authentication)' },
    { name: 'console', description: 'The web console for security teams (docs/console.md): a page and its static assets' },
  ],
  errorEnvelope: errorEnvelopeSchema,
  aliases: { '/api/v1': '/v1' },
};

/** The gateway ({base_url}): traffic and management routes. Returned unstarted; the caller listens. */
export function buildGatewayApp(deps: GatewayDeps): FastifyInstance {
  const app = createHttpApp({ logger: deps.logger, bodyLimitBytes: deps.bodyLimitBytes, jsonMaxDepth: deps.jsonMaxDepth, metrics: deps.metrics, envelope: 'standard' });
  // First: the document learns the routes declared after it (each documents itself: shared/http/openapi.ts).
  installOpenApi(app, GATEWAY_OPENAPI);
  registerHealthRoute(app, { service: 'gateway', probes: deps.probes, ...deps.health });
  if (deps.metricsEndpoint) registerMetricsRoute(app, deps.metricsEndpoint);
  registerDetectRoutes(app, { auth: deps.auth, detection: deps.detection, audit: deps.audit, limits: deps.limits });
  // The OpenAI-compatible upstream, as every proxy route calls it (chat-completions.routes.ts callUpstream).
  const upstream: UpstreamCallDeps = {
    upstreamBaseUrl: deps.upstream.baseUrl,
    upstreamApiKey: deps.upstream.apiKey,
    upstreamTimeoutMs: deps.upstream.timeoutMs,
    providers: deps.upstream.providers,
    metrics: deps.metrics,
  };
  const traffic = { auth: deps.auth, audit: deps.audit, limits: deps.limits, ...upstream };
  registerChatCompletionsRoutes(app, { ...traffic, detection: deps.detection, streamWindowChars: deps.upstream.streamWindowChars });
  registerResponsesRoutes(app, { ...traffic, detection: deps.detection, streamWindowChars: deps.upstream.streamWindowChars, ownership: deps.responseOwners });
  registerModelsRoutes(app, traffic);
  registerEmbeddingsRoutes(app, { ...traffic, detection: deps.detection });
  registerManagementRoutes(app, { auth: deps.auth, policies: deps.policies, projects: deps.projects, events: deps.events, trail: deps.trail, limits: deps.limits });
  registerOrganizationRoutes(app, { adminApiKey: deps.adminApiKey, auth: deps.auth, organizations: deps.organizations, limits: deps.limits });
  registerConsoleRoutes(app);
  void app.register(graphqlPlugin, { auth: deps.auth, policies: deps.policies, projects: deps.projects, events: deps.events, trail: deps.trail, detection: deps.detection, logger: deps.logger, rateLimits: deps.limits });
  return app;
}
