import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

/**
 * Credentials and content never reach the logs. Request serialisation logs method, path, ids and
 * sizes only (never headers or bodies); the redaction list is a second line of defence for any object
 * that carries headers by mistake.
 */
export const REDACTED = '[REDACTED]';

const SECRET_HEADERS = ['authorization', 'x-svc-key', 'x-api-key', 'proxy-authorization', 'cookie', 'set-cookie'];

export const REDACT_PATHS = [
  ...SECRET_HEADERS.flatMap((h) => [`req.headers["${h}"]`, `headers["${h}"]`, `request.headers["${h}"]`]),
  'body',
  'req.body',
  'request.body',
  'rawKey',
  'raw_key',
  'apiKey',
  '*.rawKey',
  '*.raw_key',
  '*.apiKey',
];

export interface LoggerSettings {
  level: string;
  /** Where JSON lines go; stdout by default. Tests pass a capturing stream. */
  destination?: DestinationStream;
  base?: Record<string, unknown>;
}

export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level: settings.level,
    base: settings.base ?? { service: 'llm-content-security-gateway' },
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  // One destination for the logger and its unredacted sibling (requestLogger), so their lines interleave.
  const destination = settings.destination ?? pino.destination(1);
  const logger = pino(options, destination);
  Object.defineProperty(logger, UNREDACTED, { value: pino({ ...options, redact: undefined }, destination) });
  return logger;
}

const UNREDACTED: unique symbol = Symbol('logger.unredacted');

/**
 * A logger for the per-request completion line: same destination, level and bindings as `logger`, but
 * without the redaction pass (10–20 µs of fast-redact per line, mostly its wildcard paths, ~5% of a
 * request's CPU). Only for lines whose every field is built by serializeRequest / serializeReply (never
 * an object handed in by a caller: those go through `logger` and its redaction). A logger not made by
 * createLogger is returned as it is.
 */
export function requestLogger(logger: Logger): Logger {
  const plain = (logger as Logger & { [UNREDACTED]?: Logger })[UNREDACTED];
  if (!plain) return logger;
  // Only the bindings the plain logger does not already carry (its base `service`): a key written twice
  // makes a line with a duplicate JSON key.
  const own = plain.bindings();
  const extra = Object.fromEntries(Object.entries(logger.bindings()).filter(([k, v]) => !(k in own && own[k] === v)));
  const child = plain.child(extra);
  child.level = logger.level;
  return child;
}

/** What we log of an HTTP request: no headers, no body, no query string (it may carry secrets). */
export function serializeRequest(req: { method?: string; url?: string; id?: unknown; ip?: string }): Record<string, unknown> {
  const path = (req.url ?? '').split('?')[0];
  return { method: req.method, path, id: req.id, remote: req.ip };
}

export function serializeReply(reply: { statusCode?: number }): Record<string, unknown> {
  return { statusCode: reply.statusCode };
}
