import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { AppError } from '../errors';
import { documented } from '../http/openapi';

/**
 * GET /metrics: the Prometheus text of a scrape, on a service's own fastify app or on a small listener
 * of its own (METRICS_PORT, DETECTION_METRICS_PORT). Unauthenticated unless a token is set
 * (METRICS_TOKEN): then `Authorization: Bearer <token>` is required, 401 with the spec's envelope otherwise.
 */

export interface MetricsEndpoint {
  scrape(): Promise<string>;
  contentType: string;
  /** METRICS_TOKEN; none = no authentication. */
  token?: string;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Whether an Authorization header carries the token (compared in constant time, by digest). */
export function tokenAccepted(header: string | string[] | undefined, token: string | undefined): boolean {
  if (token === undefined) return true;
  if (typeof header !== 'string') return false;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match !== null && timingSafeEqual(digest(match[1]!), digest(token));
}

const metricsTokenRequired = () =>
  new AppError('authentication_error', 'This metrics endpoint requires Authorization: Bearer <METRICS_TOKEN>', { code: 'invalid_metrics_token' });

/** GET /metrics in the app's OpenAPI document; the 401 only when a token is required. */
function metricsDoc(tokenRequired: boolean) {
  return documented({
    tags: ['health'],
    summary: 'Prometheus metrics of the process (docs/metrics.md)',
    description: tokenRequired
      ? 'Prometheus text format 0.0.4. Requires `Authorization: Bearer <METRICS_TOKEN>` (the metrics token, not a project key).'
      : 'Prometheus text format 0.0.4. No authentication (METRICS_TOKEN is not set); no label carries a tenant identifier unless METRICS_TENANT_LABELS is on.',
    security: [],
    responses: { 200: { description: 'The scrape', content: { 'text/plain': z.string() } } },
    errors: tokenRequired ? [401] : [],
  });
}

/** Registers GET /metrics on an app (its error handler renders the 401). */
export function registerMetricsRoute(app: FastifyInstance, endpoint: MetricsEndpoint): void {
  app.get('/metrics', metricsDoc(endpoint.token !== undefined), async (request, reply) => {
    if (!tokenAccepted(request.headers.authorization, endpoint.token)) throw metricsTokenRequired();
    const text = await endpoint.scrape();
    return reply.header('content-type', endpoint.contentType).header('cache-control', 'no-store').send(text);
  });
}

export interface MetricsServer {
  /** `http://host:port/metrics`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** A listener that serves GET /metrics only (every other request: the spec's envelope, 404 / 405). */
export async function startMetricsServer(endpoint: MetricsEndpoint, host: string, port: number): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const send = (status: number, body: string, contentType = 'application/json; charset=utf-8') => {
      res.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    const fail = (err: AppError) => send(err.status, JSON.stringify(err.toEnvelope()));
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') return fail(new AppError('not_found', 'Only GET /metrics is served on this port', { code: 'not_found' }));
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return fail(new AppError('invalid_request', 'Only GET /metrics is served on this port', { code: 'method_not_allowed', status: 405 }));
    }
    if (!tokenAccepted(req.headers.authorization, endpoint.token)) return fail(metricsTokenRequired());
    endpoint.scrape().then(
      (text) => send(200, text, endpoint.contentType),
      () => fail(new AppError('internal_error', 'The metrics could not be collected', { code: 'metrics_unavailable' })),
    );
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${actualPort}/metrics`,
    port: actualPort,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
