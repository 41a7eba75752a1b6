/**
 * Classifies a failed database call: transient (retry later: the database is unreachable, overloaded,
 * restarting, or the statement lost a race) or permanent (this data is rejected; retrying the same
 * rows fails forever). Works for node-postgres, TypeORM's QueryFailedError and PGlite errors alike,
 * which all carry the SQLSTATE in `code` (TypeORM on `driverError`).
 */

/** SQLSTATE classes that are about the connection or the server's resources, never the rows. */
const TRANSIENT_CLASSES = new Set(['08', '53', '57', '58']);
/** Single SQLSTATEs outside those classes that succeed when retried. */
const TRANSIENT_CODES = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available
  '55006', // object_in_use
]);
/** Node/socket error codes of a connection that failed or broke. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH',
  'ENETDOWN', 'ECONNABORTED', 'ESOCKETTIMEDOUT',
]);
const SQLSTATE = /^[0-9A-Z]{5}$/;

interface ErrorLike {
  code?: unknown;
  driverError?: unknown;
  cause?: unknown;
  errors?: unknown;
  constraint?: unknown;
  message?: unknown;
  /** graphql-js wraps a thrown value it does not recognise as an Error (e.g. of another realm) in NonErrorThrown. */
  thrownValue?: unknown;
}

/** The errors to look at: the error itself, TypeORM's driverError, a cause, an AggregateError's parts. */
function chain(err: unknown, depth = 0): ErrorLike[] {
  if (err === null || typeof err !== 'object' || depth > 4) return [];
  const e = err as ErrorLike;
  const out: ErrorLike[] = [e];
  out.push(...chain(e.driverError, depth + 1), ...chain(e.cause, depth + 1), ...chain(e.thrownValue, depth + 1));
  if (Array.isArray(e.errors)) for (const inner of e.errors) out.push(...chain(inner, depth + 1));
  return out;
}

/** The SQLSTATE PostgreSQL answered with, if any. */
export function sqlStateOf(err: unknown): string | undefined {
  for (const e of chain(err)) if (typeof e.code === 'string' && SQLSTATE.test(e.code)) return e.code;
  return undefined;
}

/** The violated constraint's name (no row data), if the database named one. */
export function constraintOf(err: unknown): string | undefined {
  for (const e of chain(err)) if (typeof e.constraint === 'string' && e.constraint !== '') return e.constraint.slice(0, 128);
  return undefined;
}

/** A short, content-free code for logs and the dead-letter table: the SQLSTATE, else the Node error code. */
export function errorCodeOf(err: unknown): string {
  const state = sqlStateOf(err);
  if (state) return state;
  for (const e of chain(err)) if (typeof e.code === 'string' && e.code !== '') return e.code.slice(0, 32);
  return 'unknown';
}

export type StorageErrorClass = 'transient' | 'permanent' | 'unknown';

/**
 * `transient` when retrying later can succeed (connection, resources, server restarting, a lost race),
 * `permanent` when PostgreSQL rejected the data (any other SQLSTATE), `unknown` when the failure carries
 * neither a SQLSTATE nor a socket error code (a pool timeout, a dead embedded-database thread, a bug):
 * the caller decides by checking whether the database answers at all.
 */
export function classifyStorageError(err: unknown): StorageErrorClass {
  const state = sqlStateOf(err);
  if (state) return TRANSIENT_CLASSES.has(state.slice(0, 2)) || TRANSIENT_CODES.has(state) ? 'transient' : 'permanent';
  for (const e of chain(err)) if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return 'transient';
  const message = err instanceof Error ? err.message : '';
  return /connection|connect|terminat|timeout|timed out/i.test(message) ? 'transient' : 'unknown';
}

/**
 * What node-postgres, pg-pool and TypeORM say when the connection failed, broke or stalled; these carry
 * no code. Exact phrases only: an arbitrary message that merely mentions "connection" is not one of them.
 */
const DRIVER_UNAVAILABLE = [
  /^Query read timeout$/, // pg: query_timeout (a stalled server or network)
  /^Connection terminated/, // pg: "... unexpectedly", "... due to connection timeout"
  /^timeout exceeded when trying to connect$/, // pg-pool: connectionTimeoutMillis waiting for a client
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
  /^Cannot use a pool after calling end on the pool$/,
];

/**
 * The database cannot serve the request right now (unreachable, restarting, out of resources, a
 * statement cancelled by its timeout, a stalled connection): answered 503 storage_unavailable at the
 * edges. Stricter than `classifyStorageError`'s `transient`: a message is only trusted when it is one
 * of the driver's own, so an unrelated failure never turns into a 503.
 */
export function isStorageUnavailable(err: unknown): boolean {
  const state = sqlStateOf(err);
  if (state) return classifyStorageError(err) === 'transient';
  for (const e of chain(err)) {
    if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return true;
    const message = typeof e.message === 'string' ? e.message : '';
    if (DRIVER_UNAVAILABLE.some((re) => re.test(message))) return true;
  }
  return false;
}
