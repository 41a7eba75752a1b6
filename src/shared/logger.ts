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
  return settings.destination ? pino(options, settings.destination) : pino(options);
}

/** What we log of an HTTP request: no headers, no body, no query string (it may carry secrets). */
export function serializeRequest(req: { method?: string; url?: string; id?: unknown; ip?: string }): Record<string, unknown> {
  const path = (req.url ?? '').split('?')[0];
  return { method: req.method, path, id: req.id, remote: req.ip };
}

export function serializeReply(reply: { statusCode?: number }): Record<string, unknown> {
  return { statusCode: reply.statusCode };
}
