import { Writable } from 'node:stream';
import { generateApiKey } from '../../src/shared/api-key';
import { loadConfig } from '../../src/shared/config';
import { createLogger } from '../../src/shared/logger';
import { ALL_SERVICES, startServices, type RunningServices, type ServiceName } from '../../src/services';
import type { StorageTarget } from './databases';

/** Collects every log line a service writes, so tests can assert what is (not) logged. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    cb();
  }
  get text(): string {
    return this.lines.join('\n');
  }
}

export interface TestServices {
  running: RunningServices;
  gatewayUrl: string;
  sensorUrl: string;
  /** The first project's key (BOOTSTRAP_API_KEY). */
  apiKey: string;
  logs: LogCapture;
  /** The database this instance uses (PostgreSQL targets), for starting further instances on it. */
  databaseUrl?: string;
  /** The embedded database directory (PGlite targets). */
  dataDir: string;
  dispose(): Promise<void>;
}

/**
 * Platform and failed-authentication limits out of the way for suites that are not about them (one key
 * makes hundreds of management calls a minute there); test/e2e/limits*.test.ts set their own.
 */
/**
 * Limits no suite runs into by accident, and a detection budget (DETECTION_TIMEOUT_MS, 2 s by default) that a loaded
 * 2-core CI machine cannot overrun: once, one of 40 concurrent calls made right after start-up in audit-events.test.ts
 * did not answer 200 (its status was not recorded; the test now names odd answers), the budget under load being the
 * likely cause. Suites about the budget set their own (detection-faults, stream-admission, ...).
 */
const RELAXED_LIMITS = { PLATFORM_TRAFFIC_RPM: '1000000', PLATFORM_MANAGEMENT_RPM: '1000000', AUTH_FAILURES_PER_MINUTE: '1000000', DETECTION_TIMEOUT_MS: '15000' };

/**
 * Alerts configured (the alert action is refused without them) for suites that store `alert` policies
 * but send no traffic that fires one: the webhook points at a closed local port and is never called.
 */
export const ALERTS_CONFIGURED_ENV = { ALERT_WEBHOOK_URL: 'http://127.0.0.1:9/alerts', ALERT_WEBHOOK_SECRET: 'test-alert-secret-0123456789' };

/** Starts another instance of the given services on an existing database (no new database, no cleanup of it). */
export async function startAnotherInstance(
  first: TestServices,
  options: { services: readonly ServiceName[]; env?: Record<string, string>; clock?: () => number },
): Promise<{ running: RunningServices; gatewayUrl: string; logs: LogCapture }> {
  if (!first.databaseUrl) throw new Error('another instance needs a PostgreSQL target');
  const config = loadConfig({
    PORT: '0',
    SENSOR_PORT: '0',
    DETECTION_ADDRESS: first.running.detectionAddress ?? '127.0.0.1:0',
    DATABASE_URL: first.databaseUrl,
    LOG_LEVEL: 'info',
    SHUTDOWN_TIMEOUT_MS: '5000',
    ...RELAXED_LIMITS,
    ...options.env,
  });
  const logs = new LogCapture();
  const running = await startServices({ config, services: options.services, logger: createLogger({ level: 'info', destination: logs }), clock: options.clock, env: options.env });
  return { running, gatewayUrl: running.gatewayUrl ?? '', logs };
}

/** Starts the real services on port 0 (detection over real gRPC) on a fresh database of `target`. */
export async function startTestServices(
  target: StorageTarget,
  options: { services?: readonly ServiceName[]; env?: Record<string, string>; clock?: () => number } = {},
): Promise<TestServices> {
  const db = await target.create();
  const apiKey = generateApiKey();
  const config = loadConfig({
    PORT: '0',
    SENSOR_PORT: '0',
    DETECTION_ADDRESS: '127.0.0.1:0',
    // Detection alone serves its metrics on a port of its own (9464 by default): any free one in tests.
    DETECTION_METRICS_PORT: '0',
    DATA_DIR: db.dataDir,
    DATABASE_URL: db.databaseUrl,
    BOOTSTRAP_API_KEY: apiKey,
    LOG_LEVEL: 'info',
    SHUTDOWN_TIMEOUT_MS: '5000',
    ...RELAXED_LIMITS,
    ...options.env,
  });
  const logs = new LogCapture();
  const logger = createLogger({ level: config.LOG_LEVEL, destination: logs });
  let running: RunningServices;
  try {
    running = await startServices({ config, services: options.services ?? ALL_SERVICES, logger, clock: options.clock, env: options.env });
  } catch (err) {
    await db.cleanup();
    throw err;
  }
  return {
    running,
    gatewayUrl: running.gatewayUrl ?? '',
    sensorUrl: running.sensorUrl ?? '',
    apiKey,
    logs,
    databaseUrl: db.databaseUrl,
    dataDir: db.dataDir,
    async dispose() {
      await running.close();
      await db.cleanup();
    },
  };
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json: json as Record<string, any> };
}

/** Sets fields of the first project's default policy through the management API (as the project's key). */
export async function patchDefaultPolicy(svc: Pick<TestServices, 'gatewayUrl' | 'apiKey'>, patch: Record<string, unknown>): Promise<void> {
  const headers = { authorization: `Bearer ${svc.apiKey}`, 'content-type': 'application/json' };
  const list = (await (await fetch(`${svc.gatewayUrl}/v1/policies/?is_default=true`, { headers })).json()) as { results: Array<{ id: string }> };
  const res = await fetch(`${svc.gatewayUrl}/v1/policies/${list.results[0]!.id}/`, { method: 'PATCH', headers, body: JSON.stringify(patch) });
  if (!res.ok) throw new Error(`PATCH default policy answered ${res.status}: ${await res.text()}`);
}
