import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { AppError, shuttingDown } from '../errors';
import type { Logger } from '../logger';
import type { HttpMetrics } from '../metrics/process-metrics';
import { requestLogger, serializeReply, serializeRequest } from '../logger';
import { installErrorHandling, jsonStructureError, sendError, writeClientError, type EnvelopeStyle } from './error-handler';
import { findJsonStructureProblem } from './json-structure-guard';
import { validRequestId } from '../request-id';

export interface HttpAppOptions {
  logger: Logger;
  bodyLimitBytes: number;
  envelope: EnvelopeStyle;
  /** Deepest nesting of a JSON body (objects and arrays); deeper → 400 json_too_deep. */
  jsonMaxDepth?: number;
  /** Request metrics of the service (docs/metrics.md): its hooks are installed before any route. */
  metrics?: HttpMetrics;
}

export const DEFAULT_JSON_MAX_DEPTH = 64;

declare module 'fastify' {
  interface FastifyRequest {
    /** The exact bytes of a JSON body (forwarded unchanged by the sensor). */
    rawBody?: Buffer;
  }
}

/** One log line per request, when it completes (fastify's default is two: incoming and completed). */
class OneLineRequestLog extends LogController {
  constructor(private readonly completed: Logger) {
    super({ requestIdLogLabel: 'requestId' });
  }
  override incomingRequest(): void {}
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else if (this.completed.isLevelEnabled('info')) {
      // Built field by field from the serializers: no caller object, so no redaction pass is needed.
      this.completed.info({ requestId: request.id, req: serializeRequest(request), res: serializeReply(reply), responseTime: reply.elapsedTime }, 'request completed');
    }
  }
}

/**
 * A fastify instance with what every HTTP service of ours shares: request ids (a sane incoming
 * `x-request-id` is kept, else a UUID; echoed back), pino logging without headers or bodies (one line
 * per request, when it completes: method, path, id, remote address, status, response time), JSON-only
 * bodies, and the spec's error envelope for every failure. Not listening: the caller decides.
 */
export function createHttpApp(options: HttpAppOptions): FastifyInstance {
  const app = Fastify({
    // pino's own Logger type is wider than fastify's view of it; the instance is the same object.
    loggerInstance: options.logger.child({}, {
      serializers: { req: serializeRequest, res: serializeReply },
    }) as unknown as FastifyBaseLogger,
    bodyLimit: options.bodyLimitBytes,
    genReqId: (req) => validRequestId(req.headers['x-request-id']) ?? randomUUID(),
    logController: new OneLineRequestLog(requestLogger(options.logger)),
    // While closing, fastify's own 503 body is not the spec's envelope: answered by the hook below instead.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // Node answers an HTTP/1.1 request without Host itself, with an empty 400: checked below instead.
    http: { requireHostHeader: false },
    // Errors of the HTTP parser itself (malformed request, header overflow, ...): the spec's envelope too.
    clientErrorHandler: (err, socket) => writeClientError(err, socket, options.envelope),
    // Errors fastify answers before routing (a malformed percent-encoding in the path, ...): same envelope.
    frameworkErrors: (err, request, reply) => sendError(err, request, reply, options.envelope),
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 200 },
  });
  // Bodies are JSON only: text/plain would otherwise be accepted as a string. An empty JSON body is no
  // body (DELETE and action calls are often sent with the header and nothing else); otherwise fastify's
  // own parser, which rejects __proto__ / constructor.prototype keys, then one linear pass that rejects
  // duplicate keys (the scan would see the last copy, the raw bytes forward both) and nesting deeper than
  // jsonMaxDepth. Bytes that are not valid UTF-8 are refused first (400 invalid_utf8): decoded leniently
  // they would be scanned as U+FFFD while the raw bytes, forwarded as they are, say something else. The
  // raw bytes are kept. Every JSON route of every app goes through here.
  app.removeContentTypeParser(['text/plain', 'application/json']);
  const parseJson = app.getDefaultJsonParser('error', 'error');
  const maxDepth = options.jsonMaxDepth ?? DEFAULT_JSON_MAX_DEPTH;
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const raw = body as Buffer;
    request.rawBody = raw;
    if (raw.length === 0) return done(null, undefined);
    if (!isUtf8(raw)) return done(new AppError('invalid_request', 'Request body is not valid UTF-8', { code: 'invalid_utf8' }), undefined);
    const text = raw.toString('utf8');
    parseJson(request, text, (err, parsed) => {
      if (err) return done(err, undefined);
      const problem = findJsonStructureProblem(text, maxDepth);
      return problem ? done(jsonStructureError(problem), undefined) : done(null, parsed);
    });
  });
  // Set when close() starts (preClose runs before the server stops listening): a request that still
  // arrives (pipelined, or on a busy keep-alive connection) is answered 503 shutting_down, connection closed.
  options.metrics?.install(app);
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', String(request.id));
    if (closing) {
      void reply.header('connection', 'close');
      throw shuttingDown();
    }
    // HTTP/1.1 requires Host (RFC 9112 §3.2); HTTP/1.0 does not, and is served without one.
    if (request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor >= 1 && request.host === '') {
      throw new AppError('invalid_request', 'An HTTP/1.1 request must carry a Host header', { code: 'missing_host' });
    }
  });
  releaseConnectionsOnClose(app);
  installErrorHandling(app, options.envelope);
  return app;
}

/** How often, while closing, connections that have become idle are closed. */
const IDLE_RELEASE_INTERVAL_MS = 100;

/**
 * close() waits for every open connection, and fastify closes only those idle when it starts: a keep-alive
 * connection that was busy then (an answer held by the upstream, a stream) stayed open after its answer for
 * keepAliveTimeout (72 s), holding the shutdown past SHUTDOWN_TIMEOUT_MS (and a pod past its grace period).
 * While closing, an answer says `Connection: close` (the client opens its next request elsewhere) unless a
 * request pipelined behind it waits for its 503 (which says it); connections that became idle are closed.
 */
function releaseConnectionsOnClose(app: FastifyInstance): void {
  let closing = false;
  /** Connections on which a request arrived while closing (pipelined behind a busy one, or on an idle one). */
  const arrivedWhileClosing = new WeakSet<Socket>();
  app.server.on('request', (req: IncomingMessage) => {
    if (closing) arrivedWhileClosing.add(req.socket);
  });
  app.addHook('preClose', (done) => {
    closing = true;
    // Answers whose headers went out before close() (streams) cannot say it: their connections are closed once idle.
    const timer = setInterval(() => app.server.closeIdleConnections(), IDLE_RELEASE_INTERVAL_MS).unref();
    app.server.once('close', () => clearInterval(timer));
    done();
  });
  app.addHook('onSend', async (request, reply, payload) => {
    if (closing && !arrivedWhileClosing.has(request.raw.socket)) void reply.header('connection', 'close');
    return payload;
  });
}
