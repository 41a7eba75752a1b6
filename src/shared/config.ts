import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { z } from 'zod';
import { DEFAULT_WORKER_NICE, defaultPoolSize } from './worker-pool';
import { DEFAULT_DETECTION_MAX_ACTIVE, DEFAULT_DETECTION_MAX_QUEUED } from './detection-admission';

/**
 * The whole runtime configuration, parsed once from the environment by main.ts. Nothing else in the
 * code base reads process.env: every module receives the parsed Config (or the part it needs).
 */

const port = (name: string, fallback: number) =>
  z.coerce
    .number({ error: `${name} must be a number` })
    .int(`${name} must be an integer`)
    .min(0, `${name} must be between 0 and 65535`)
    .max(65535, `${name} must be between 0 and 65535`)
    .default(fallback);

const positiveInt = (name: string, fallback: number, max: number) =>
  z.coerce
    .number({ error: `${name} must be a number` })
    .int(`${name} must be an integer`)
    .min(1, `${name} must be at least 1`)
    .max(max, `${name} must be at most ${max}`)
    .default(fallback);

const nonNegativeInt = (name: string, fallback: number, max: number) =>
  z.coerce
    .number({ error: `${name} must be a number` })
    .int(`${name} must be an integer`)
    .min(0, `${name} must be between 0 and ${max}`)
    .max(max, `${name} must be between 0 and ${max}`)
    .default(fallback);

const httpUrl = (name: string) =>
  z
    .string()
    .url(`${name} must be an absolute http(s) URL`)
    .refine((v) => /^https?:\/\//i.test(v), `${name} must start with http:// or https://`)
    .transform((v) => v.replace(/\/+$/, ''));

const empty = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);

/** A metrics listener's port: a number (0 = any free port), `off`, or (when allowed) empty for "no own port". */
const metricsPort = (name: string, fallback: '' | '9464') =>
  z
    .string()
    .trim()
    .toLowerCase()
    .refine((v) => v === '' || v === 'off' || (/^\d{1,5}$/.test(v) && Number(v) <= 65535), `${name} must be a port number (0 to 65535), off, or empty`)
    .default(fallback)
    .transform((v): number | 'off' | undefined => (v === '' ? undefined : v === 'off' ? 'off' : Number(v)));

const flag = (name: string, fallback: boolean) =>
  z
    .preprocess(
      (v) => (typeof v === 'string' ? v.trim().toLowerCase() : v),
      z.enum(['', 'true', '1', 'false', '0'], { error: `${name} must be true or false` }).default(fallback ? 'true' : 'false'),
    )
    .transform((v) => (v === '' ? fallback : v === 'true' || v === '1'));

/** Longest Unix domain socket path (sun_path is 108 bytes on Linux, with its terminating NUL). */
export const MAX_SOCKET_PATH_BYTES = 107;

/** `svc_sk_` followed by at least 32 base62 characters: the format every key of ours has. */
export const API_KEY_PATTERN = /^svc_sk_[A-Za-z0-9]{32,128}$/;

export const configSchema = z.object({
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: port('PORT', 8080),
  SENSOR_PORT: port('SENSOR_PORT', 8081),
  DETECTION_ADDRESS: z
    .string()
    .regex(
      /^((\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}|unix:\/.+)$/,
      'DETECTION_ADDRESS must be host:port, e.g. 127.0.0.1:50051, or unix:/absolute/path of a Unix domain socket',
    )
    .refine((v) => !v.startsWith('unix:') || Buffer.byteLength(v.slice(5)) <= MAX_SOCKET_PATH_BYTES, `DETECTION_ADDRESS: a socket path is at most ${MAX_SOCKET_PATH_BYTES} bytes`)
    .default('127.0.0.1:50051'),
  /**
   * The Unix domain socket detection also listens on, for co-located callers: empty = a fresh one in the
   * temp directory in `all` mode (none otherwise), `off` = none, else an absolute path.
   */
  DETECTION_SOCKET: z
    .string()
    .trim()
    .refine((v) => v === '' || v === 'off' || v.startsWith('/'), 'DETECTION_SOCKET must be an absolute path, off, or empty')
    .refine((v) => Buffer.byteLength(v) <= MAX_SOCKET_PATH_BYTES, `DETECTION_SOCKET must be at most ${MAX_SOCKET_PATH_BYTES} bytes (the Unix socket path limit)`)
    .default(''),
  // Metrics (docs/metrics.md). METRICS_PORT: empty = GET /metrics on the gateway port (the sensor's when
  // the sensor runs alone), a port number = its own listener on HOST (0 = any free port), off = none.
  METRICS_PORT: metricsPort('METRICS_PORT', ''),
  /** When set, every metrics endpoint requires `Authorization: Bearer <METRICS_TOKEN>` (401 otherwise). */
  METRICS_TOKEN: z.preprocess(empty, z.string().min(16, 'METRICS_TOKEN must be at least 16 characters').optional()),
  /** Adds per-tenant series (organization and project ids) to the scrape; off by default. */
  METRICS_TENANT_LABELS: flag('METRICS_TENANT_LABELS', false),
  /** `detection` alone: the port of its own /metrics listener (on HOST); off = none. */
  DETECTION_METRICS_PORT: z.preprocess(empty, metricsPort('DETECTION_METRICS_PORT', '9464')),
  /** Compiled detector configurations the detection service keeps (by a hash of their bytes); 0 = none. */
  DETECTION_CONFIG_CACHE_ENTRIES: nonNegativeInt('DETECTION_CONFIG_CACHE_ENTRIES', 256, 100_000),
  DATABASE_URL: z.preprocess(
    empty,
    z
      .string()
      .regex(/^postgres(ql)?:\/\/.+/, 'DATABASE_URL must be a postgres:// or postgresql:// connection string')
      .optional(),
  ),
  /** PostgreSQL only: bound on opening a connection (and on waiting for a free pooled one). */
  DATABASE_CONNECT_TIMEOUT_MS: positiveInt('DATABASE_CONNECT_TIMEOUT_MS', 3000, 60_000),
  /** PostgreSQL only: bound on one statement (server-side statement_timeout and the client's read timeout). */
  DATABASE_STATEMENT_TIMEOUT_MS: positiveInt('DATABASE_STATEMENT_TIMEOUT_MS', 5000, 600_000),
  DATA_DIR: z.string().min(1).default('./data'),
  /** Audit spool (events waiting while the database is unreachable); default DATA_DIR/audit-spool, none for memory://. */
  AUDIT_SPOOL_DIR: z.preprocess(empty, z.string().min(1).optional()),
  // Audit input-token counts (token-counter.ts): worker threads (0 = count on the serving thread) and the
  // shortest request text (UTF-16 units) sent to them.
  AUDIT_TOKEN_WORKERS: nonNegativeInt('AUDIT_TOKEN_WORKERS', 1, 16),
  AUDIT_TOKEN_WORKER_MIN_CHARS: nonNegativeInt('AUDIT_TOKEN_WORKER_MIN_CHARS', 1024, 1_000_000_000),
  // A token worker idle this long is stopped (its memory released; the next long text starts one); 0 = kept.
  AUDIT_TOKEN_WORKER_IDLE_MS: nonNegativeInt('AUDIT_TOKEN_WORKER_IDLE_MS', 2000, 3_600_000),
  // Characters of request texts held for the token workers (waiting or being counted) before more are counted inline.
  AUDIT_TOKEN_WORKER_MAX_PENDING_CHARS: positiveInt('AUDIT_TOKEN_WORKER_MAX_PENDING_CHARS', 16_000_000, 1_000_000_000),
  // Linux: the token workers' nice value (worker-pool.ts; 0 = the process's priority, as the serving threads).
  AUDIT_TOKEN_WORKER_NICE: nonNegativeInt('AUDIT_TOKEN_WORKER_NICE', DEFAULT_WORKER_NICE, 19),
  /** Idle interval after which a thread whose heap grew gives it back with one full collection (idle-reclaim.ts); 0 = off. */
  MEMORY_RECLAIM_IDLE_MS: nonNegativeInt('MEMORY_RECLAIM_IDLE_MS', 30_000, 3_600_000),
  AUDIT_SPOOL_MAX_BYTES: positiveInt('AUDIT_SPOOL_MAX_BYTES', 256 * 1024 * 1024, 1024 * 1024 * 1024 * 1024),
  // Audit retention (docs/management-audit-and-retention.md): days security events (and dead-lettered ones)
  // and the management audit trail are kept, 0 = forever (the default: nothing is deleted unless an
  // operator decides); how often the background job runs, and rows per DELETE batch.
  AUDIT_RETENTION_DAYS: nonNegativeInt('AUDIT_RETENTION_DAYS', 0, 36_500),
  MANAGEMENT_AUDIT_RETENTION_DAYS: nonNegativeInt('MANAGEMENT_AUDIT_RETENTION_DAYS', 0, 36_500),
  AUDIT_RETENTION_INTERVAL_MS: positiveInt('AUDIT_RETENTION_INTERVAL_MS', 3_600_000, 86_400_000),
  AUDIT_RETENTION_BATCH_SIZE: positiveInt('AUDIT_RETENTION_BATCH_SIZE', 5000, 100_000),
  REDIS_URL: z.preprocess(
    empty,
    z.string().regex(/^rediss?:\/\/.+/, 'REDIS_URL must be a redis:// or rediss:// URL').optional(),
  ),
  OPENAI_BASE_URL: httpUrl('OPENAI_BASE_URL').default('https://api.openai.com/v1'),
  OPENAI_API_KEY: z.preprocess(empty, z.string().optional()),
  ANTHROPIC_BASE_URL: httpUrl('ANTHROPIC_BASE_URL').default('https://api.anthropic.com'),
  BOOTSTRAP_API_KEY: z.preprocess(
    empty,
    z
      .string()
      .regex(
        API_KEY_PATTERN,
        'BOOTSTRAP_API_KEY must start with svc_sk_ followed by 32 to 128 letters or digits (A-Z, a-z, 0-9)',
      )
      .optional(),
  ),
  /**
   * The operator credential of `POST /v1/organizations` (creating an organization while the server runs).
   * Unset: the route answers 403 admin_api_disabled. Never a project key: it may not start with svc_sk_.
   */
  ADMIN_API_KEY: z.preprocess(
    empty,
    z
      .string()
      .min(32, 'ADMIN_API_KEY must be at least 32 characters (e.g. openssl rand -hex 32)')
      .max(256, 'ADMIN_API_KEY must be at most 256 characters')
      .regex(/^[\x21-\x7e]+$/, 'ADMIN_API_KEY must be printable ASCII without spaces')
      .refine((v) => !v.startsWith('svc_sk_'), 'ADMIN_API_KEY must not start with svc_sk_ (that is the form of project keys)')
      .optional(),
  ),
  STREAM_SCAN_WINDOW_CHARS: z.coerce
    .number({ error: 'STREAM_SCAN_WINDOW_CHARS must be a number' })
    .int('STREAM_SCAN_WINDOW_CHARS must be an integer')
    .min(256, 'STREAM_SCAN_WINDOW_CHARS must be between 256 and 16384')
    .max(16384, 'STREAM_SCAN_WINDOW_CHARS must be between 256 and 16384')
    .default(256),
  UPSTREAM_TIMEOUT_MS: positiveInt('UPSTREAM_TIMEOUT_MS', 600_000, 3_600_000),
  ALERT_WEBHOOK_URL: z.preprocess(empty, httpUrl('ALERT_WEBHOOK_URL').optional()),
  ALERT_WEBHOOK_SECRET: z.preprocess(empty, z.string().min(16, 'ALERT_WEBHOOK_SECRET must be at least 16 characters').optional()),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `all` only: run the detection service in a worker thread (its own event loop and core). */
  DETECTION_THREAD: z
    .preprocess(
      (v) => (typeof v === 'string' ? v.trim().toLowerCase() : v),
      z.enum(['', 'true', '1', 'false', '0'], { error: 'DETECTION_THREAD must be true or false' }).default('true'),
    )
    .transform((v) => v !== 'false' && v !== '0'),
  /** Deadline of one detection call (or stream step), counted from when it is admitted. */
  DETECTION_TIMEOUT_MS: positiveInt('DETECTION_TIMEOUT_MS', 2000, 60000),
  /** Detection work in flight at once per process (unary calls and stream steps); see detection-admission.ts. */
  DETECTION_MAX_ACTIVE: positiveInt('DETECTION_MAX_ACTIVE', DEFAULT_DETECTION_MAX_ACTIVE, 4096),
  /** Detection work that may wait for a slot; a new request past it gets 503 detection_overloaded. */
  DETECTION_MAX_QUEUED: nonNegativeInt('DETECTION_MAX_QUEUED', DEFAULT_DETECTION_MAX_QUEUED, 1_000_000),
  AUTH_CACHE_TTL_MS: z.coerce
    .number({ error: 'AUTH_CACHE_TTL_MS must be a number' })
    .int('AUTH_CACHE_TTL_MS must be an integer')
    .min(0, 'AUTH_CACHE_TTL_MS must be between 0 and 300000')
    .max(300_000, 'AUTH_CACHE_TTL_MS must be between 0 and 300000')
    .default(5000),
  SHUTDOWN_TIMEOUT_MS: positiveInt('SHUTDOWN_TIMEOUT_MS', 10000, 300000),
  /**
   * On SIGTERM: how long the servers keep serving with GET /health/ready answering 503 before they stop
   * accepting and drain (time for a load balancer to take the instance out). 0: drain at once.
   */
  SHUTDOWN_DRAIN_DELAY_MS: nonNegativeInt('SHUTDOWN_DRAIN_DELAY_MS', 0, 300000),
  /** How long GET /health/ready reuses its last dependency check (0: every call checks). */
  HEALTH_READY_CACHE_MS: nonNegativeInt('HEALTH_READY_CACHE_MS', 1000, 60000),
  /** Budget of each dependency check of GET /health/ready (database, detection). */
  HEALTH_READY_TIMEOUT_MS: positiveInt('HEALTH_READY_TIMEOUT_MS', 1000, 30000),
  BODY_LIMIT_BYTES: positiveInt('BODY_LIMIT_BYTES', 10 * 1024 * 1024, 100 * 1024 * 1024),
  /** Deepest nesting (objects + arrays) of a JSON request body; deeper → 400 json_too_deep. */
  JSON_MAX_DEPTH: z.coerce
    .number({ error: 'JSON_MAX_DEPTH must be a number' })
    .int('JSON_MAX_DEPTH must be an integer')
    .min(8, 'JSON_MAX_DEPTH must be between 8 and 1000')
    .max(1000, 'JSON_MAX_DEPTH must be between 8 and 1000')
    .default(64),
  // Rate limits (docs/limits.md): platform limits per key, failed authentications per client address.
  PLATFORM_TRAFFIC_RPM: positiveInt('PLATFORM_TRAFFIC_RPM', 1000, 10_000_000),
  PLATFORM_MANAGEMENT_RPM: positiveInt('PLATFORM_MANAGEMENT_RPM', 100, 10_000_000),
  AUTH_FAILURES_PER_MINUTE: positiveInt('AUTH_FAILURES_PER_MINUTE', 20, 1_000_000),
  LIMITS_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_.{}-]{1,64}$/, 'LIMITS_KEY_PREFIX must be 1 to 64 letters, digits or : _ . - { }')
    .default('svc:limits:'),
  /**
   * JSON file of the gateway's upstream providers, model routes, retries and fallback (docs/providers.md);
   * unset: the single OPENAI_BASE_URL / OPENAI_API_KEY upstream, no retries.
   */
  PROVIDERS_FILE: z.preprocess(empty, z.string().optional()),
  /** JSON file of model prices on top of the shipped table (src/gateway/limits/prices.json); docs/configuration.md, "Prices". */
  PRICES_FILE: z.preprocess(empty, z.string().optional()),
  // Classifier model backends (docs/classifier-backends.md). Raw fields only: the mappings are parsed and
  // cross-checked by src/detection/classifiers/backends/classifier-config.ts when detection starts.
  CLASSIFIER_BACKENDS: z.preprocess(empty, z.string().optional()),
  OPENAI_MODERATION_URL: httpUrl('OPENAI_MODERATION_URL').default('https://api.openai.com/v1'),
  OPENAI_MODERATION_API_KEY: z.preprocess(empty, z.string().optional()),
  OPENAI_MODERATION_MODEL: z.string().min(1).default('omni-moderation-latest'),
  HTTP_CLASSIFIER_URL: z.preprocess(empty, httpUrl('HTTP_CLASSIFIER_URL').optional()),
  HTTP_CLASSIFIER_PATH: z
    .string()
    .regex(/^\/[A-Za-z0-9/_.-]*$/, 'HTTP_CLASSIFIER_PATH must be a path such as /predict or /classify')
    .default('/predict'),
  HTTP_CLASSIFIER_API_KEY: z.preprocess(empty, z.string().optional()),
  HTTP_CLASSIFIER_LABELS: z.string().min(1).default('MALICIOUS=prompt_attack,INJECTION=prompt_attack,JAILBREAK=jailbreak'),
  HTTP_CLASSIFIER_MAX_CHARS: positiveInt('HTTP_CLASSIFIER_MAX_CHARS', 1200, 1_000_000),
  LLM_JUDGE_URL: z.preprocess(empty, httpUrl('LLM_JUDGE_URL').optional()),
  LLM_JUDGE_API_KEY: z.preprocess(empty, z.string().optional()),
  LLM_JUDGE_MODEL: z.preprocess(empty, z.string().optional()),
  LLM_JUDGE_FORMAT: z
    .enum(['json_object', 'json', 'llama_guard'], { error: 'LLM_JUDGE_FORMAT must be json_object, json or llama_guard' })
    .default('json_object'),
  // In-process ONNX classifier (backend `onnx`): the model directory and its runtime settings.
  ONNX_MODEL_DIR: z.preprocess(empty, z.string().optional()),
  ONNX_THREADS: positiveInt('ONNX_THREADS', 1, 64),
  ONNX_MAX_CONCURRENCY: positiveInt('ONNX_MAX_CONCURRENCY', 2, 64),
  ONNX_TIMEOUT_MS: positiveInt('ONNX_TIMEOUT_MS', 1000, 600_000),
  CLASSIFIER_TIMEOUT_MS: positiveInt('CLASSIFIER_TIMEOUT_MS', 800, 60000),
  CLASSIFIER_MAX_CONCURRENCY: positiveInt('CLASSIFIER_MAX_CONCURRENCY', 16, 1024),
  CLASSIFIER_MAX_QUEUE: nonNegativeInt('CLASSIFIER_MAX_QUEUE', 64, 100_000),
  CLASSIFIER_CACHE_SIZE: nonNegativeInt('CLASSIFIER_CACHE_SIZE', 5000, 1_000_000),
  CLASSIFIER_CACHE_TTL_MS: positiveInt('CLASSIFIER_CACHE_TTL_MS', 600_000, 86_400_000),
  CLASSIFIER_BREAKER_FAILURES: positiveInt('CLASSIFIER_BREAKER_FAILURES', 5, 1000),
  CLASSIFIER_BREAKER_COOLDOWN_MS: positiveInt('CLASSIFIER_BREAKER_COOLDOWN_MS', 30_000, 3_600_000),
  // Builtin classifier worker pool in detection (builtin-pool.ts): threads (0 = score inline), the
  // smallest batch of new windows sent to it, and the most chunks waiting for a worker.
  CLASSIFIER_WORKERS: nonNegativeInt('CLASSIFIER_WORKERS', defaultPoolSize(availableParallelism()), 64),
  CLASSIFIER_WORKER_MIN_WINDOWS: positiveInt('CLASSIFIER_WORKER_MIN_WINDOWS', 8, 100_000),
  CLASSIFIER_WORKER_MAX_QUEUE: nonNegativeInt('CLASSIFIER_WORKER_MAX_QUEUE', 256, 100_000),
  // A classifier worker idle this long is stopped (its memory released; the next large text starts one); 0 = kept.
  CLASSIFIER_WORKER_IDLE_MS: nonNegativeInt('CLASSIFIER_WORKER_IDLE_MS', 2000, 3_600_000),
  // Linux: the classifier workers' nice value (worker-pool.ts; 0 = the process's priority, as the serving threads).
  CLASSIFIER_WORKER_NICE: nonNegativeInt('CLASSIFIER_WORKER_NICE', DEFAULT_WORKER_NICE, 19),
  // Windows the detection thread scores itself per event-loop turn while windows wait for a worker (0 = none).
  CLASSIFIER_INLINE_SLICE: nonNegativeInt('CLASSIFIER_INLINE_SLICE', 4, 1_000),
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses an environment-like record. Throws ConfigError naming every bad variable and why. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const known = Object.fromEntries(Object.keys(configSchema.shape).map((k) => [k, env[k]]));
  const parsed = configSchema
    .refine((c) => !c.ALERT_WEBHOOK_URL || c.ALERT_WEBHOOK_SECRET, {
      path: ['ALERT_WEBHOOK_SECRET'],
      message: 'ALERT_WEBHOOK_SECRET is required when ALERT_WEBHOOK_URL is set (alerts are signed)',
    })
    .safeParse(known);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const name = String(issue.path[0] ?? 'config');
        const value = env[name];
        const shown = name.includes('KEY') || name.includes('URL') ? '' : value === undefined ? '' : ` (got "${value}")`;
        return `${name}: ${issue.message}${shown}`;
      }),
    );
  }
  return parsed.data;
}

/**
 * The JSON of a file a setting names (PRICES_FILE, PROVIDERS_FILE): a file that cannot be read or is not
 * JSON is a ConfigError naming the setting and the file, so the process refuses to start.
 */
export function readJsonSettingFile(setting: string, file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError([`${setting}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`]);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new ConfigError([`${setting}: ${file} is not valid JSON (${err instanceof Error ? err.message : String(err)})`]);
  }
}
