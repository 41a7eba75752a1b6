import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors as undiciErrors } from 'undici';
import { AppError, type ErrorType } from '../errors';

/** Hop-by-hop headers (RFC 9110 §7.6.1) and framing headers: never copied between the two hops. */
export const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade',
  'proxy-authorization', 'proxy-authenticate', 'host', 'content-length',
]);

/** Copies an upstream response's end-to-end headers onto our reply. */
export function copyResponseHeaders(reply: FastifyReply, headers: Record<string, string | string[] | undefined>, skip: ReadonlySet<string> = new Set()): void {
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name) && !skip.has(name)) void reply.header(name, value);
  }
}

/** An AbortController aborted when the client goes away before the reply is complete. */
export function abortOnClientClose(request: FastifyRequest, reply: FastifyReply): AbortController {
  const abort = new AbortController();
  request.raw.once('close', () => {
    if (!reply.raw.writableEnded) abort.abort(new Error('client disconnected'));
  });
  reply.raw.once('close', () => {
    if (!reply.raw.writableEnded) abort.abort(new Error('client disconnected'));
  });
  return abort;
}

const TYPE_BY_STATUS: Record<number, ErrorType> = { 401: 'authentication_error', 403: 'permission_denied', 404: 'not_found', 429: 'rate_limit' };

/** An upstream error answer → the same status with our envelope; the upstream's message and code are kept. */
export function upstreamErrorToAppError(status: number, body: string): AppError {
  let message = `The upstream provider answered ${status}`;
  let code = `upstream_${status}`;
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown; code?: unknown; type?: unknown } };
    if (typeof parsed.error?.message === 'string') message = `Upstream provider: ${parsed.error.message.slice(0, 1000)}`;
    if (typeof parsed.error?.code === 'string') code = parsed.error.code.slice(0, 100);
  } catch {
    /* not JSON: keep the generic message */
  }
  const type: ErrorType = TYPE_BY_STATUS[status] ?? (status >= 500 ? 'internal_error' : 'invalid_request');
  return new AppError(type, message, { code, status, relayed: true });
}

/** A transport failure talking to the upstream → 504 (timeout) or 502 (unreachable / reset). */
export function upstreamTransportError(err: unknown): AppError {
  const timeout =
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError ||
    err instanceof undiciErrors.ConnectTimeoutError;
  return timeout
    ? new AppError('internal_error', 'The upstream provider did not answer in time', { code: 'upstream_timeout', status: 504 })
    : new AppError('internal_error', 'The upstream provider could not be reached', { code: 'upstream_unavailable', status: 502 });
}

/**
 * Stops reading an upstream body we will not relay. Destroying an undici body that is still streaming
 * emits `error` (RequestAbortedError); with no listener that is an uncaught exception that ends the
 * process (found by the fuzzer: a compressed stream still arriving brought the gateway down).
 */
export function discardBody(body: Readable): void {
  if (body.destroyed) return;
  body.on('error', () => undefined);
  body.destroy();
}

/**
 * An upstream answer whose JSON repeats a key in one object: the scan of the parsed value sees the
 * last copy while a client's parser may keep the first, so it cannot be scanned reliably (fail closed).
 */
export function upstreamRepeatsKeyError(): AppError {
  return new AppError('internal_error', 'The upstream provider sent a response that repeats a JSON key, which cannot be scanned reliably', {
    code: 'upstream_invalid',
    status: 502,
  });
}
