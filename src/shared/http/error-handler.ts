import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isStorageUnavailable } from '../../storage/storage-errors';
import { AppError, internalError, isAppError, storageUnavailable } from '../errors';
import type { JsonStructureProblem } from './json-structure-guard';

/**
 * `standard`: the spec's envelope `{error:{message,type,code}}`.
 * `messages`: the messages-API shape `{type:"error", error:{type,message,code}}` used by the sensor,
 * which still carries error.message/type/code, so both kinds of client read it.
 */
export type EnvelopeStyle = 'standard' | 'messages';

export function renderError(err: AppError, style: EnvelopeStyle): Record<string, unknown> {
  const body = err.toEnvelope();
  return style === 'messages' ? { type: 'error', ...body } : { ...body };
}

/** Maps framework errors (bad JSON, wrong content type, oversized body, ...) onto our closed set. */
export function toAppError(err: FastifyError | Error, requestId: string): AppError {
  if (isAppError(err)) return err;
  const fe = err as FastifyError;
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('invalid_request', 'Unsupported Content-Type: send a JSON body with Content-Type: application/json', {
        code: 'unsupported_media_type',
      });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('invalid_request', 'Request body is too large', { code: 'payload_too_large', status: 413 });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_request', 'Request body is empty but Content-Type is application/json', {
        code: 'invalid_json',
      });
    case 'FST_ERR_BAD_URL':
      return new AppError('invalid_request', 'The URL is not valid: a path segment has a malformed percent-encoding', { code: 'invalid_url' });
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AppError('invalid_request', 'A path parameter of the URL is too long', { code: 'invalid_url', status: 414 });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('invalid_request', 'Content-Length does not match the body', { code: 'invalid_request' });
    default:
      break;
  }
  if (err instanceof SyntaxError || fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new AppError('invalid_request', 'Request body is not valid JSON', { code: 'invalid_json' });
  }
  if (status >= 400 && status < 500) {
    // Other client errors raised by the framework: keep them 400, with a generic but clear message.
    return new AppError('invalid_request', fe.message ? `Invalid request: ${fe.message}` : 'Invalid request', {
      code: 'invalid_request',
    });
  }
  // The database is unreachable, stalled (connect/statement timeout) or shedding load: 503, not 500.
  if (isStorageUnavailable(err)) return storageUnavailable(err);
  return internalError(requestId);
}

/** A JSON body JSON.parse accepted but we refuse: 400 duplicate_json_key / json_too_deep. */
export function jsonStructureError(problem: JsonStructureProblem): AppError {
  return problem.kind === 'duplicate_key'
    ? new AppError('invalid_request', `Request body repeats the JSON key "${problem.key}" (at ${problem.path}); each key may appear once per object`, {
        code: 'duplicate_json_key',
      })
    : new AppError('invalid_request', `Request body nests JSON deeper than ${problem.depth} levels (at ${problem.path})`, {
        code: 'json_too_deep',
      });
}

/** What Node's HTTP parser rejects before any route runs, as our error (status, code, message). */
export function clientErrorOf(err: Error & { code?: string }): AppError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new AppError('invalid_request', 'Request headers are too large', { code: 'headers_too_large', status: 431 });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError('invalid_request', 'The request was not received in time', { code: 'request_timeout', status: 408 });
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
    case 'HPE_CONTENT_LENGTH_OVERFLOW':
      return new AppError('invalid_request', 'Request body is too large', { code: 'payload_too_large', status: 413 });
    default:
      return new AppError('invalid_request', 'Malformed HTTP request', { code: 'malformed_request' });
  }
}

/**
 * fastify's clientErrorHandler: Node's HTTP parser failed (bad request line, header overflow, missing
 * Host on HTTP/1.1, ...). No request object exists; the answer is written on the socket, which is closed.
 */
export function writeClientError(err: Error & { code?: string }, socket: Duplex, style: EnvelopeStyle): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const appErr = clientErrorOf(err);
  const body = JSON.stringify(renderError(appErr, style));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${appErr.status} ${STATUS_CODES[appErr.status] ?? 'Bad Request'}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

/** Renders any error as our envelope (the error handler, and fastify's frameworkErrors: bad URL, ...). */
export function sendError(err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply, style: EnvelopeStyle): FastifyReply {
  const appErr = toAppError(err, String(request.id));
  // request.log carries the request id already (requestId); errors answered before the onRequest hook
  // (fastify's frameworkErrors: a malformed URL) get the X-Request-Id header here.
  if (!reply.hasHeader('x-request-id')) void reply.header('x-request-id', String(request.id));
  if (appErr.type === 'service_unavailable') {
    request.log.warn({ err, errorCode: appErr.code }, 'request failed: dependency unavailable');
  } else if (appErr.relayed) {
    // An upstream provider's own error: not ours, and its message can quote the request.
    request.log.warn({ status: appErr.status, errorCode: appErr.code }, 'request failed: upstream error relayed');
  } else if (appErr.status >= 500) {
    request.log.error({ err }, 'request failed');
  } else {
    request.log.info({ errorType: appErr.type, errorCode: appErr.code }, 'request rejected');
  }
  if (appErr.details && typeof appErr.details.retry_after === 'number') {
    void reply.header('retry-after', String(appErr.details.retry_after));
  }
  return reply.status(appErr.status).type('application/json; charset=utf-8').send(renderError(appErr, style));
}

export function installErrorHandling(app: FastifyInstance, style: EnvelopeStyle): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => sendError(err, request, reply, style));

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0];
    const err = new AppError('not_found', `No route for ${request.method} ${path}`, { code: 'route_not_found' });
    return reply.status(404).type('application/json; charset=utf-8').send(renderError(err, style));
  });
}
