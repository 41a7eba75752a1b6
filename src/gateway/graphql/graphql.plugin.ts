import { ApolloServer, type ApolloServerOptions } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { fastifyApolloHandler } from '@as-integrations/fastify';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { documented } from '../../shared/http/openapi';
import { requireManagementKey } from '../../management/projects/request-auth';
import type { Logger } from '../../shared/logger';
import { bearerCredential, limitedAuth } from '../limits/limit-hooks';
import type { LimitsService } from '../limits/limits.service';
import { eventResolvers } from './event.resolvers';
import { managementEventResolvers } from './management-event.resolvers';
import { buildContext, type GraphqlContext, type GraphqlServices } from './graphql-context';
import { errorLoggingPlugin, formatGraphqlError } from './graphql-errors';
import { playgroundResolvers } from './playground.resolvers';
import { policyResolvers } from './policy.resolvers';
import { projectResolvers } from './project.resolvers';
import { loadTypeDefs } from './schema-loader';

/** Abuse limits of the GraphQL endpoint (graphql-armor), checked before anything executes. */
export interface GraphqlLimits {
  /** Nesting depth of selections (fragment spreads and inline fragments count as a level). */
  maxDepth: number;
  /** Aliased fields per operation. */
  maxAliases: number;
  /** Static cost (objects 2, scalars 1, ×1.5 per level). */
  maxCost: number;
  /** Lexer tokens of the query document (graphql-js stops parsing past it). */
  maxTokens: number;
  /** Directives per operation. */
  maxDirectives: number;
}

export const DEFAULT_GRAPHQL_LIMITS: GraphqlLimits = { maxDepth: 8, maxAliases: 15, maxCost: 5000, maxTokens: 2000, maxDirectives: 20 };

export interface GraphqlDeps extends GraphqlServices {
  logger?: Logger;
  limits?: Partial<GraphqlLimits>;
  /** Rate limits (the management platform limit per key, failed authentications per address). */
  rateLimits?: LimitsService;
}

export const GRAPHQL_PATH = '/graphql';

/** The endpoint in the OpenAPI document (the GraphQL schema itself is schema/*.graphql). */
const graphqlDoc = documented({
  tags: ['management'],
  summary: 'The management API in GraphQL (POST; GET for queries, with query/variables in the query string)',
  security: ['bearer'],
  body: z.strictObject({
    query: z.string(),
    variables: z.record(z.string(), z.unknown()).nullable().optional(),
    operationName: z.string().nullable().optional(),
    extensions: z.record(z.string(), z.unknown()).optional(),
  }),
  responses: {
    200: {
      description: 'A GraphQL result: data and/or errors (GraphQL errors carry extensions.code and extensions.type)',
      schema: z.looseObject({ data: z.unknown().optional(), errors: z.array(z.looseObject({ message: z.string() })).optional() }),
    },
  },
  errors: [400, 401, 403, 429, 500, 503],
});

function buildApollo(deps: GraphqlDeps): ApolloServer<GraphqlContext> {
  const limits = { ...DEFAULT_GRAPHQL_LIMITS, ...deps.limits };
  const armor = new ApolloArmor({
    maxDepth: { n: limits.maxDepth },
    maxAliases: { n: limits.maxAliases },
    costLimit: { maxCost: limits.maxCost },
    // graphql-js enforces the token limit while parsing (a clean 400 parse error); armor's version of
    // it throws from a plugin hook, which Apollo answers with a 500.
    maxTokens: { enabled: false },
    maxDirectives: { n: limits.maxDirectives },
    blockFieldSuggestion: { enabled: true },
  }).protect();
  // Resolvers are typed on their own arguments; graphql-tools' map type is looser by design.
  const resolvers = [policyResolvers, projectResolvers, eventResolvers, managementEventResolvers, playgroundResolvers] as unknown as ApolloServerOptions<GraphqlContext>['resolvers'];
  return new ApolloServer<GraphqlContext>({
    typeDefs: loadTypeDefs(),
    resolvers,
    introspection: true,
    plugins: [...armor.plugins, errorLoggingPlugin(), ApolloServerPluginLandingPageDisabled()],
    validationRules: armor.validationRules,
    parseOptions: { maxTokens: limits.maxTokens },
    allowBatchedHttpRequests: false,
    includeStacktraceInErrorResponses: false,
    formatError: formatGraphqlError,
    // Automatic persisted queries would let any client fill a server-side cache: off.
    persistedQueries: false,
    // main.ts owns the signals; Apollo is stopped when fastify closes.
    stopOnTerminationSignals: false,
    ...(deps.logger ? { logger: deps.logger.child({ component: 'graphql' }) } : {}),
  });
}

/**
 * Mounts the management GraphQL API at /graphql (POST; GET for queries). Same bearer key as REST,
 * checked in a route hook before Apollo runs, so a missing or bad key answers 401 with the spec's
 * error envelope (a throw from Apollo's context function would become a GraphQL-shaped 500).
 * Apollo is stopped in onClose, which fastify runs after the HTTP server has stopped and in-flight
 * requests have finished (fastify drains; @as-integrations' drain plugin would call fastify.close()
 * again from inside close and deadlock).
 */
export async function registerGraphql(app: FastifyInstance, deps: GraphqlDeps): Promise<void> {
  const apollo = buildApollo(deps);
  await apollo.start();
  app.addHook('onClose', async () => {
    await apollo.stop();
  });
  const services: GraphqlServices = { auth: deps.auth, policies: deps.policies, projects: deps.projects, events: deps.events, trail: deps.trail, detection: deps.detection };
  app.route({
    method: ['GET', 'POST'],
    url: GRAPHQL_PATH,
    ...graphqlDoc,
    // As the REST management routes: the key is checked before the body is even parsed.
    onRequest: limitedAuth(deps.rateLimits, { routeClass: 'management', authenticate: requireManagementKey(deps.auth), credential: bearerCredential }),
    // HTTP/1.0 allows a request without Host; the Apollo integration builds a URL from it (only to read
    // the query string) and throws on an empty host. The host plays no other part: a placeholder will do.
    preHandler: async (request) => {
      if (request.host === '') request.raw.headers.host = 'localhost';
    },
    handler: fastifyApolloHandler<GraphqlContext>(apollo, { context: async (request) => buildContext(request, services) }),
  });
}

/** registerGraphql as a fastify plugin: `void app.register(graphqlPlugin, deps)` keeps app building synchronous. */
export const graphqlPlugin: FastifyPluginAsync<GraphqlDeps> = async (app, deps) => registerGraphql(app, deps);
