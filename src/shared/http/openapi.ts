import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { z, type ZodType } from 'zod';
import { ERROR_STATUS } from '../errors';
import { VERSION } from '../version';

/**
 * The OpenAPI document (GET /openapi.json) and its HTML reference (GET /docs) of an HTTP app, generated
 * from the zod schemas the routes validate with, so the document cannot drift from validation.
 *
 * A route is documented by one option, `...documented({...})`, next to its handler: the schemas are
 * kept in the route's `config.openapi` (never in fastify's `schema`, so fastify/ajv validates nothing
 * and the handlers' zod validation and its error envelope stay exactly as they are). @fastify/swagger
 * collects every route and turns `config.openapi` into the operation; a route without it still appears,
 * bare, and the e2e test (test/e2e/openapi.test.ts) fails on it.
 */

/** One response: a description and, unless it has no body, the zod schema of its JSON body and/or bodies of other media types. */
export interface ResponseDoc {
  description: string;
  /** The application/json body. */
  schema?: ZodType;
  /** Bodies of other media types (e.g. text/event-stream). */
  content?: Record<string, ZodType>;
}

export interface RouteDoc {
  tags: string[];
  summary: string;
  description?: string;
  /** Names of security schemes (keys of the app's `securitySchemes`) any one of which is accepted; [] for none. */
  security: string[];
  body?: ZodType;
  query?: ZodType;
  params?: ZodType;
  headers?: ZodType;
  /** Success responses by status. */
  responses: Record<number, ResponseDoc>;
  /** Statuses answered with the error envelope (the app's `Error` component). */
  errors: number[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** This route's entry in the OpenAPI document (shared/http/openapi.ts). */
    openapi?: RouteDoc;
  }
}

/** Route options documenting a route: `app.post('/v1/x', { ...documented({...}), ...hooks }, handler)`. */
export function documented(doc: RouteDoc): { config: { openapi: RouteDoc } } {
  return { config: { openapi: doc } };
}

/** A proxy route's answers: the upstream's own body relayed unchanged, JSON or (`stream: true`) SSE; and its errors. */
export function relayedAnswer(what: string): Record<number, ResponseDoc> {
  const description = `The upstream's answer, unchanged: ${what}, or with \`stream: true\` the upstream's SSE stream`;
  return { 200: { description, schema: z.looseObject({}), content: { 'text/event-stream': z.string() } } };
}
export const PROXY_ERRORS = [400, 401, 403, 413, 429, 500, 502, 503, 504];
/** The `stream` field of a proxied request. */
export const streamFlag = z.boolean().optional().meta({ description: 'true: the answer is an SSE stream, scanned as it passes' });

/** The standard envelope `{error:{message,type,code}}` (error-handler.ts renders it). */
export const errorBodySchema = z.strictObject({
  message: z.string(),
  type: z.enum(Object.keys(ERROR_STATUS) as [keyof typeof ERROR_STATUS, ...Array<keyof typeof ERROR_STATUS>]),
  code: z.string().meta({ description: 'Machine-readable code, e.g. invalid_request, invalid_api_key, input_blocked' }),
  details: z.record(z.string(), z.unknown()).optional().meta({ description: 'Extra data, e.g. fields[] of a validation error or retry_after' }),
});
export const errorEnvelopeSchema = z.strictObject({ error: errorBodySchema });

export interface OpenApiOptions {
  title: string;
  description: string;
  /** components.securitySchemes of the document. */
  securitySchemes: Record<string, Record<string, unknown>>;
  tags: Array<{ name: string; description: string }>;
  /** The body every error response carries (registered as the `Error` component). */
  errorEnvelope: ZodType;
  /** Route prefixes that repeat another prefix's routes (e.g. /api/v1 → /v1): left out of the document, said in its description. */
  aliases?: Record<string, string>;
}

/** Paths of the document and of the HTML reference. */
export const OPENAPI_PATH = '/openapi.json';
export const DOCS_PREFIX = '/docs';

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request (validation error, malformed JSON, ...)',
  401: 'Missing or invalid API key',
  403: 'Denied (by the security policy, or not permitted)',
  404: 'Not found',
  409: 'Conflict',
  413: 'Request body too large',
  429: 'Rate limit, quota or budget exceeded (Retry-After)',
  500: 'Internal error (no internal detail is returned)',
  502: 'The upstream provider failed or sent an invalid answer',
  503: 'A dependency (storage, detection) is unavailable or the service is shutting down (Retry-After)',
  504: 'The upstream provider did not answer in time',
};

/** A route as fastify declared it (its onRoute hook): method, URL, and whether it is in the document. */
export interface DeclaredRoute {
  method: string;
  url: string;
  documented: boolean;
  /** Left out of the document on purpose (the document and the HTML reference themselves). */
  hidden: boolean;
}
const declaredRoutes = new WeakMap<FastifyInstance, DeclaredRoute[]>();

/** Every route declared on an app after installOpenApi (HEAD routes included): what the e2e test compares the document with. */
export function declaredRoutesOf(app: FastifyInstance): readonly DeclaredRoute[] {
  return declaredRoutes.get(app) ?? [];
}

const jsonSchemaCache = new WeakMap<ZodType, Record<string, Map<string, unknown>>>();

/** JSON Schema (2020-12, as OpenAPI 3.1 uses) of a zod schema: what a client sends (`input`) or receives (`output`). */
export function jsonSchemaOf(schema: ZodType, io: 'input' | 'output'): Record<string, unknown> {
  let byIo = jsonSchemaCache.get(schema);
  if (!byIo) jsonSchemaCache.set(schema, (byIo = {}));
  const cached = byIo[io] as Record<string, unknown> | undefined;
  if (cached) return structuredClone(cached);
  // Refinements (RE2 patterns, duplicates, ...) have no JSON Schema form: the document states the shape, the server the rest.
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  delete json.$schema;
  dropSafeIntegerBounds(json);
  (byIo as Record<string, unknown>)[io] = json;
  return structuredClone(json);
}

/** zod states `.int()` as ±Number.MAX_SAFE_INTEGER bounds: noise in a reference, left out. */
function dropSafeIntegerBounds(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(dropSafeIntegerBounds);
  if (typeof node !== 'object' || node === null) return;
  const o = node as Record<string, unknown>;
  if (o.minimum === Number.MIN_SAFE_INTEGER) delete o.minimum;
  if (o.maximum === Number.MAX_SAFE_INTEGER) delete o.maximum;
  Object.values(o).forEach(dropSafeIntegerBounds);
}

/** A route serving GET and POST (GraphQL) shares one entry: its GET operation takes no body. */
function dropGetBodies(document: { paths?: Record<string, Record<string, Record<string, unknown>>> }): void {
  for (const path of Object.values(document.paths ?? {})) {
    if (path.get) delete path.get.requestBody;
  }
}

function responseOf(doc: ResponseDoc): Record<string, unknown> {
  const media = { ...(doc.schema ? { 'application/json': doc.schema } : {}), ...doc.content };
  if (Object.keys(media).length === 0) return { description: doc.description, type: 'null' };
  const content = Object.fromEntries(Object.entries(media).map(([type, schema]) => [type, { schema: jsonSchemaOf(schema, 'output') }]));
  return { description: doc.description, content };
}

/** The @fastify/swagger route schema of a documented route. */
function operationOf(doc: RouteDoc): Record<string, unknown> {
  const response: Record<string, unknown> = {};
  for (const [status, r] of Object.entries(doc.responses)) response[status] = responseOf(r);
  for (const status of doc.errors) {
    response[String(status)] = { description: ERROR_DESCRIPTIONS[status] ?? 'Error', $ref: 'Error#' };
  }
  return {
    tags: doc.tags,
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    security: doc.security.map((name) => ({ [name]: [] })),
    ...(doc.body ? { body: jsonSchemaOf(doc.body, 'input') } : {}),
    ...(doc.query ? { querystring: jsonSchemaOf(doc.query, 'input') } : {}),
    ...(doc.params ? { params: jsonSchemaOf(doc.params, 'input') } : {}),
    ...(doc.headers ? { headers: jsonSchemaOf(doc.headers, 'input') } : {}),
    response,
  };
}

/**
 * Serves GET /openapi.json and the HTML reference under /docs (Swagger UI, its assets served from
 * node_modules: no CDN, works offline). Call right after createHttpApp, before any route is added:
 * @fastify/swagger learns routes from an onRoute hook, which must exist when they are declared. The
 * document is built once, on its first request.
 */
export function installOpenApi(app: FastifyInstance, options: OpenApiOptions): void {
  const aliases = Object.entries(options.aliases ?? {});
  const declared: DeclaredRoute[] = [];
  declaredRoutes.set(app, declared);
  app.addHook('onRoute', (route) => {
    const hidden = (route.schema as { hide?: boolean } | undefined)?.hide === true;
    for (const method of [route.method].flat()) declared.push({ method, url: route.url, documented: route.config?.openapi !== undefined, hidden });
  });
  // The error component, referenced as `Error#` by every error response.
  app.addSchema({ $id: 'Error', title: 'Error', ...jsonSchemaOf(options.errorEnvelope, 'output') });
  const aliasNote = aliases.map(([from, to]) => `Every route under \`${to}\` is also served under \`${from}\`.`).join(' ');
  const swaggerOptions = {
    openapi: {
      openapi: '3.1.0',
      info: { title: options.title, version: VERSION, description: [options.description, aliasNote].filter(Boolean).join('\n\n') },
      tags: options.tags,
      components: { securitySchemes: options.securitySchemes },
    },
    refResolver: { buildLocalReference: (json: { $id?: unknown }, _base: unknown, _fragment: unknown, i: number) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transformObject: ({ openapiObject }: { openapiObject: Record<string, unknown> }) => {
      dropGetBodies(openapiObject);
      return openapiObject;
    },
    transform: ({ schema, url, route }: { schema: unknown; url: string; route: RouteOptions }) => {
      const doc = route.config?.openapi;
      if (aliases.some(([from]) => url === from || url.startsWith(`${from}/`))) return { schema: { hide: true }, url };
      return { schema: doc ? operationOf(doc) : schema, url };
    },
  };
  // The plugin function itself, not app.register(): registration would load it after this app's routes
  // are declared (fastify loads plugins at ready), and its onRoute hook would miss them. It is synchronous.
  fastifySwagger(app, swaggerOptions as never, (err?: Error) => {
    if (err) throw err;
  });
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async (_request, reply) => reply.type('application/json; charset=utf-8').send(app.swagger()));
  // Swagger UI, its assets from the package (@fastify/static); Swagger's online validator off. Inside a
  // plugin of ours: the UI plugin declares @fastify/swagger as a dependency, which was not app.register()ed.
  // (Typed as a callback plugin; the implementation is async and takes no callback.)
  const swaggerUi = fastifySwaggerUi as unknown as (scope: FastifyInstance, opts: unknown) => Promise<void>;
  void app.register(async (scope) => {
    await swaggerUi(scope, {
      routePrefix: DOCS_PREFIX,
      validatorUrl: null,
      uiConfig: { deepLinking: true },
      theme: { title: `${options.title}: API reference` },
    });
  });
}
