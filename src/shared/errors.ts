/**
 * One error model for the whole service. Every error that reaches a client is an AppError with a
 * type from the spec's closed set; it is rendered to the spec's envelope `{error:{message,type,code}}`
 * only at the edges (HTTP, gRPC, GraphQL).
 */

/** The spec's error types and the HTTP status each one maps to. */
export const ERROR_STATUS = {
  invalid_request: 400,
  authentication_error: 401,
  permission_denied: 403,
  /** The sensor's policy denial, in the messages-API envelope (spec: Errors, sensor interface). */
  permission_error: 403,
  security_block: 403,
  not_found: 404,
  rate_limit: 429,
  internal_error: 500,
  /** A dependency the request needs (storage) is unreachable: retry after `Retry-After` seconds. */
  service_unavailable: 503,
} as const;

export type ErrorType = keyof typeof ERROR_STATUS;

export interface ErrorEnvelope {
  error: {
    message: string;
    type: ErrorType;
    code: string;
    details?: Record<string, unknown>;
  };
}

export interface AppErrorOptions {
  /** Machine-readable code; defaults to the type. */
  code?: string;
  /** Overrides the type's default HTTP status (e.g. 413 for an oversized body, still invalid_request). */
  status?: number;
  /** Extra structured data rendered as `error.details` (e.g. rate-limit window). */
  details?: Record<string, unknown>;
  cause?: unknown;
  /**
   * The message quotes an upstream provider's answer (which can echo request content): logged without
   * it, by status and code only.
   */
  relayed?: boolean;
}

export class AppError extends Error {
  readonly type: ErrorType;
  readonly code: string;
  readonly status: number;
  readonly details?: Record<string, unknown>;
  readonly relayed: boolean;

  constructor(type: ErrorType, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.type = type;
    this.code = options.code ?? type;
    this.status = options.status ?? ERROR_STATUS[type];
    this.details = options.details;
    this.relayed = options.relayed === true;
  }

  toEnvelope(): ErrorEnvelope {
    const body: ErrorEnvelope = { error: { message: this.message, type: this.type, code: this.code } };
    if (this.details) body.error.details = this.details;
    return body;
  }
}

export const invalidRequest = (message: string, code = 'invalid_request', details?: Record<string, unknown>) =>
  new AppError('invalid_request', message, { code, details });

export const unauthenticated = (message: string, code = 'invalid_api_key') =>
  new AppError('authentication_error', message, { code });

export const notFound = (message: string, code = 'not_found') => new AppError('not_found', message, { code });

/** The masked error every unexpected failure becomes: no internal detail reaches the client. */
export const internalError = (requestId?: string) =>
  new AppError(
    'internal_error',
    requestId ? `Internal server error (request id ${requestId})` : 'Internal server error',
    { code: 'internal_error' },
  );

/** Seconds a client is told to wait (Retry-After) when storage is unreachable. */
export const STORAGE_RETRY_AFTER_SECONDS = 5;

/** The request needs the database and the database is unreachable or stalled: 503 with Retry-After. */
export const storageUnavailable = (cause?: unknown) =>
  new AppError('service_unavailable', 'Storage is temporarily unavailable: retry later', {
    code: 'storage_unavailable',
    details: { retry_after: STORAGE_RETRY_AFTER_SECONDS },
    cause,
  });

/** Seconds a client is told to wait (Retry-After) when it reached an instance that is shutting down. */
export const SHUTDOWN_RETRY_AFTER_SECONDS = 1;

/** The request reached an instance that is closing (draining in-flight requests): retry, on another instance. */
export const shuttingDown = () =>
  new AppError('service_unavailable', 'The server is shutting down: retry the request', {
    code: 'shutting_down',
    details: { retry_after: SHUTDOWN_RETRY_AFTER_SECONDS },
  });

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}
