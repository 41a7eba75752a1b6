/**
 * Why an external classifier backend did not produce scores. Every failure is a throw (the engine turns
 * it into an `error` outcome and applies the fail mode); never a silent "nothing found".
 *
 * Messages name the backend and the reason only: they never quote the scanned text or the model's answer
 * (which may echo it), so they are safe to surface in outcomes, logs and audit records.
 */
export type BackendErrorKind =
  /** The per-call timeout expired (or the caller's deadline passed while the call was in flight). */
  | 'timeout'
  /** The caller gave up before the call was sent. */
  | 'aborted'
  /** All concurrency slots busy and the wait queue full. */
  | 'overloaded'
  /** The circuit breaker is open: failing fast without calling the backend. */
  | 'circuit_open'
  /** Connection refused/reset, DNS failure, TLS error… */
  | 'transport'
  /** The backend answered with a non-2xx status. */
  | 'http_status'
  /** The backend answered 2xx, but not with what its wire format promises. */
  | 'malformed'
  /** Every backend configured for a type failed (composite). */
  | 'all_failed';

export class BackendError extends Error {
  constructor(
    readonly kind: BackendErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'BackendError';
  }
}

export function isBackendError(err: unknown): err is BackendError {
  return err instanceof BackendError;
}

/** A short, content-free description of any thrown value. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}
