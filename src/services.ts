import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type Redis from 'ioredis';
import { Registry } from 'prom-client';
import { startDetectionWorker } from './detection/detection-worker';
import { buildGatewayApp } from './gateway/app';
import type { LimitStore } from './gateway/limits/limit-store';
import { LimitsService } from './gateway/limits/limits.service';
import { MemoryLimitStore } from './gateway/limits/memory-store';
import { closeRedis, connectRedis } from './gateway/limits/redis-client';
import { ResilientLimitStore } from './gateway/limits/redis-store';
import { loadPriceTable } from './gateway/limits/prices';
import { loadProvidersFile } from './gateway/proxy/providers-file';
import { ResponseOwnership } from './gateway/proxy/response-ownership';
import { ChangeBus, CHANGE_CHANNEL } from './management/change-bus';
import { ManagementTrail } from './management/audit-trail/management-trail';
import { AlertNotifier } from './management/events/alert-notifier';
import { AuditRetention } from './management/events/audit-retention';
import { openAuditSpool } from './management/events/audit-spool.factory';
import { AuditWriter } from './management/events/audit-writer';
import { AuditTokenCounter } from './shared/token-counter';
import type { AuditSinks } from './management/events/audit.hook';
import { EventService } from './management/events/event.service';
import { PolicyService } from './management/policies/policy.service';
import { OrganizationService } from './management/organizations/organization.service';
import { ProjectAuthService } from './management/projects/project-auth.service';
import { ProjectService } from './management/projects/project.service';
import { buildSensorApp } from './sensor/app';
import { MAX_SOCKET_PATH_BYTES, type Config } from './shared/config';
import { DetectionAdmission } from './shared/detection-admission';
import { createDetectionClient, type DetectionClient } from './shared/detection-client';
import { DrainState, type HealthProbe } from './shared/http/health';
import type { Logger } from './shared/logger';
import { startMetricsServer, type MetricsEndpoint } from './shared/metrics/metrics-endpoint';
import { ProcessMetrics } from './shared/metrics/process-metrics';
import { listenForChanges } from './storage/change-listener';
import { openStorage, storageOptions, type Storage } from './storage/data-source';
import { processAlive } from './storage/data-dir-lock';
import { prepareStorage, type BootstrapOutcome } from './storage/startup';

export type ServiceName = 'detection' | 'gateway' | 'sensor';
export const ALL_SERVICES: readonly ServiceName[] = ['detection', 'gateway', 'sensor'];

export interface RunningServices {
  /** `http://host:port` of the gateway ({base_url}), when started. */
  gatewayUrl?: string;
  /** `http://host:port` of the sensor ({sensor_url}), when started. */
  sensorUrl?: string;
  /** The HTTP apps, when started (their routes, for tests and tooling). */
  gatewayApp?: FastifyInstance;
  sensorApp?: FastifyInstance;
  /** `host:port` the detection service listens on, when started here. */
  detectionAddress?: string;
  /** The Unix domain socket the detection service started here listens on too (see detectionSocketPath). */
  detectionSocket?: string;
  /** Where this process's gateway and sensor dial detection: `unix:<detectionSocket>` when there is one. */
  detectionTarget?: string;
  /** `http://host:port/metrics`: the process's scrape (gateway, sensor and co-located detection), when served. */
  metricsUrl?: string;
  /** `http://host:port/metrics` of detection running alone (DETECTION_METRICS_PORT), when served. */
  detectionMetricsUrl?: string;
  bootstrap?: BootstrapOutcome;
  storage?: Storage;
  audit?: AuditWriter;
  /** The audit retention job (tests call runOnce). */
  retention?: AuditRetention;
  /**
   * Graceful stop: GET /health/ready answers 503 at once; after SHUTDOWN_DRAIN_DELAY_MS (still serving)
   * stop accepting, finish in-flight requests (bounded), flush pending writes, close connections.
   */
  close(): Promise<void>;
}

export interface StartOptions {
  config: Config;
  services: readonly ServiceName[];
  logger: Logger;
  /** Time source of the rate limits (tests move it across minutes and UTC days); Date.now by default. */
  clock?: () => number;
  /** The environment PROVIDERS_FILE's `api_key_env` variables are read from (main.ts passes process.env); none when absent. */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Run the detection service in a worker thread of this process (its own event loop and core; the
   * gateway and sensor still reach it over gRPC). Only from the compiled JavaScript; default false.
   */
  detectionThread?: boolean;
}

type Closer = { name: string; close: () => Promise<unknown> };

interface StartedDetection {
  server: { port: number; drain(): void; close(graceMs?: number): Promise<void> };
  /** In-process detection's classifier backends, closed after its server drained (the worker closes its own). */
  classifiers?: { close(): Promise<void> };
  /** Detection's metrics text (from its worker thread, or its registry here). */
  metrics(): Promise<string>;
}

/**
 * `alone`: detection is the only service of the process, so its metrics include the process's own
 * (CPU, memory); co-located, those come from the gateway's registry.
 */
async function startDetection(config: Config, logger: Logger, thread: boolean, socketPath: string | undefined, alone: boolean): Promise<StartedDetection> {
  if (thread && __filename.endsWith('.js')) {
    // The worker installs its own classifier backends and closes them after its server drained.
    const server = await startDetectionWorker({ config, logger, socketPath });
    return { server, metrics: () => server.metrics() };
  }
  // Loaded here, not at the top: with detection in its worker (or not started) the main thread never loads the engine.
  const { installClassifierBackends } = await import('./detection/classifiers/install');
  const { detectionServerOptions, startDetectionServer } = await import('./detection/server');
  const { DetectionMetrics } = await import('./detection/metrics');
  const classifiers = await installClassifierBackends(config);
  const metrics = new DetectionMetrics({ defaultMetrics: alone });
  metrics.watchClassifierPool(() => classifiers.poolStats());
  try {
    return { server: await startDetectionServer({ ...detectionServerOptions(config, socketPath), logger, metrics }), classifiers, metrics: () => metrics.text() };
  } catch (err) {
    await classifiers.close();
    throw err;
  }
}

/**
 * Builds and starts the requested services. With all three in one process the gateway and sensor
 * still reach detection over real gRPC (the same hop as a scaled-out deployment).
 */
export async function startServices(options: StartOptions): Promise<RunningServices> {
  const { config } = options;
  const wanted = new Set(options.services);
  // Read first: a bad PRICES_FILE stops the start before anything is opened.
  const prices = wanted.has('gateway') || wanted.has('sensor') ? loadPriceTable(config.PRICES_FILE) : undefined;
  // Likewise a bad PROVIDERS_FILE (or a key variable it names that is not set).
  const providers = wanted.has('gateway') ? loadProvidersFile(config.PROVIDERS_FILE, options.env ?? {}) : undefined;
  // Every line carries the name of the service it is about (see processLogName); the root logger has none.
  const named = (name: string) => options.logger.child({ name });
  const logger = named(processLogName(options.services));
  const closers: Closer[] = []; // closed in reverse order of start
  const drain = new DrainState();
  // Told when the drain begins: detection's grpc.health.v1 answers NOT_SERVING (its readiness) meanwhile.
  const drainers: Array<() => void> = [];
  const running: RunningServices = {
    close: async () => {
      if (!drain.draining) for (const d of drainers) d();
      drain.begin();
      if (config.SHUTDOWN_DRAIN_DELAY_MS > 0 && closers.length > 0) {
        logger.info({ delayMs: config.SHUTDOWN_DRAIN_DELAY_MS }, 'draining: /health/ready answers 503; still serving until the delay ends');
        await sleep(config.SHUTDOWN_DRAIN_DELAY_MS, false);
      }
      await closeAll(closers, config.SHUTDOWN_TIMEOUT_MS, logger);
    },
  };
  try {
    let detectionTarget = config.DETECTION_ADDRESS;
    const needsStorage = wanted.has('gateway') || wanted.has('sensor');
    const socketPath = wanted.has('detection') ? detectionSocketPath(config, needsStorage) : undefined;
    // Detection (its thread loads the engine) and the database (the embedded one starts WebAssembly on a
    // thread of its own) start at the same time: start-up waits for the slower, not for both in a row.
    const [detection, opened] = await Promise.allSettled([
      wanted.has('detection') ? startDetection(config, named('detection'), options.detectionThread === true, socketPath, !needsStorage) : undefined,
      needsStorage ? openStorage(storageOptions(config)) : undefined,
    ]);
    if (detection.status === 'fulfilled' && detection.value) {
      const d = detection.value;
      if (d.classifiers) closers.push({ name: 'classifier-backends', close: () => d.classifiers!.close() });
      const address = config.DETECTION_ADDRESS.startsWith('unix:') ? config.DETECTION_ADDRESS : replacePort(config.DETECTION_ADDRESS, d.server.port);
      running.detectionAddress = address;
      // Co-located callers take the socket: no TCP stack, no Nagle, no loopback checksum work per call.
      detectionTarget = socketPath === undefined ? address : `unix:${socketPath}`;
      if (socketPath !== undefined) running.detectionSocket = socketPath;
      closers.push({ name: 'detection', close: () => d.server.close(config.SHUTDOWN_TIMEOUT_MS) });
      drainers.push(() => d.server.drain());
      logger.info({ address, socket: socketPath, thread: options.detectionThread === true }, 'detection service (gRPC) listening');
    }
    running.detectionTarget = detectionTarget;
    if (opened.status === 'fulfilled' && opened.value) {
      const s = opened.value;
      closers.push({ name: 'storage', close: () => s.close() });
    }
    if (detection.status === 'rejected') throw detection.reason;
    if (opened.status === 'rejected') throw opened.reason;
    const detectionMetrics = detection.value?.metrics;
    if (!opened.value) {
      // Detection alone: its metrics on a listener of their own.
      if (detectionMetrics && config.DETECTION_METRICS_PORT !== 'off') {
        const endpoint: MetricsEndpoint = { scrape: detectionMetrics, contentType: Registry.PROMETHEUS_CONTENT_TYPE, token: config.METRICS_TOKEN };
        const server = await startMetricsServer(endpoint, config.HOST, config.DETECTION_METRICS_PORT ?? 9464);
        closers.push({ name: 'detection-metrics', close: () => server.close() });
        running.detectionMetricsUrl = server.url;
        logger.info({ url: server.url }, 'detection metrics listening');
      }
      return running;
    }

    const storage = opened.value;
    running.storage = storage;
    running.bootstrap = await prepareStorage(storage, { bootstrapApiKey: config.BOOTSTRAP_API_KEY });
    logger.info({ storage: storage.kind }, 'storage ready (migrations applied)');

    // One admission queue for the process: the gateway's and the sensor's detection work share it.
    const admission = new DetectionAdmission({ maxActive: config.DETECTION_MAX_ACTIVE, maxQueued: config.DETECTION_MAX_QUEUED });
    // One registry for the process (docs/metrics.md); none at all with METRICS_PORT=off.
    const metrics = config.METRICS_PORT === 'off' ? undefined : new ProcessMetrics({ tenantLabels: config.METRICS_TENANT_LABELS });
    if (metrics && detectionMetrics) metrics.addSource(detectionMetrics);
    metrics?.watchAdmission(admission);
    const detectionClient = createDetectionClient({ address: detectionTarget, timeoutMs: config.DETECTION_TIMEOUT_MS, admission });
    closers.push({ name: 'detection-client', close: async () => detectionClient.close() });
    const auth = new ProjectAuthService(storage, { ttlMs: config.AUTH_CACHE_TTL_MS });
    closers.push({ name: 'auth', close: () => auth.close() });
    const bus = new ChangeBus();
    bus.subscribe((event) => auth.invalidateOrganization(event.organizationId));
    if (config.DATABASE_URL) {
      // Other instances' changes arrive by LISTEN/NOTIFY (PGlite is single-process: local delivery suffices).
      const listener = listenForChanges({
        databaseUrl: config.DATABASE_URL,
        channel: CHANGE_CHANNEL,
        onPayload: (payload) => bus.emitRemote(payload),
        onReconnect: () => auth.invalidateAll(),
        logger,
      });
      closers.push({ name: 'change-listener', close: () => listener.close() });
      const waited = await Promise.race([listener.ready.then(() => true), sleep(10_000).then(() => false)]);
      if (!waited) logger.warn('change listener not connected yet: other instances\' changes arrive once it is (cache TTL bounds staleness)');
    }
    const trail = new ManagementTrail(storage);
    const policies = new PolicyService(storage, bus, { alertsConfigured: Boolean(config.ALERT_WEBHOOK_URL && config.ALERT_WEBHOOK_SECRET) }, trail);
    const projects = new ProjectService(storage, bus, trail);
    const events = new EventService(storage);
    // Deletes audit records past AUDIT_RETENTION_DAYS / MANAGEMENT_AUDIT_RETENTION_DAYS (none by default).
    const retention = new AuditRetention(storage, {
      auditDays: config.AUDIT_RETENTION_DAYS,
      managementDays: config.MANAGEMENT_AUDIT_RETENTION_DAYS,
      intervalMs: config.AUDIT_RETENTION_INTERVAL_MS,
      batchSize: config.AUDIT_RETENTION_BATCH_SIZE,
      logger: logger.child({ component: 'audit-retention' }),
    });
    retention.start();
    closers.push({ name: 'audit-retention', close: () => retention.close() });
    running.retention = retention;
    // Closed after the HTTP servers (closers run in reverse): every in-flight request's event is written.
    const auditLogger = logger.child({ component: 'audit' });
    const spool = openAuditSpool(config, auditLogger);
    const audit = new AuditWriter(storage, auditLogger, { spool: spool.spool });
    closers.push({ name: 'audit', close: () => audit.close().finally(() => spool.release()) });
    running.audit = audit;
    metrics?.watchAudit(audit);
    // Closed before the writer, after the HTTP servers: counts in progress finish and their events are written.
    const tokens = new AuditTokenCounter({
      workers: config.AUDIT_TOKEN_WORKERS,
      minChars: config.AUDIT_TOKEN_WORKER_MIN_CHARS,
      idleMs: config.AUDIT_TOKEN_WORKER_IDLE_MS > 0 ? config.AUDIT_TOKEN_WORKER_IDLE_MS : undefined,
      nice: config.AUDIT_TOKEN_WORKER_NICE,
      maxPendingChars: config.AUDIT_TOKEN_WORKER_MAX_PENDING_CHARS,
    });
    closers.push({ name: 'audit-tokens', close: () => tokens.close() });
    const sinks: AuditSinks = { writer: audit, tokens };
    if (config.ALERT_WEBHOOK_URL && config.ALERT_WEBHOOK_SECRET) {
      const alerts = new AlertNotifier({ url: config.ALERT_WEBHOOK_URL, secret: config.ALERT_WEBHOOK_SECRET, logger: logger.child({ component: 'alerts' }) });
      closers.push({ name: 'alerts', close: () => alerts.close() });
      sinks.alerts = alerts;
    }
    const redis = config.REDIS_URL ? await connectRedis(config.REDIS_URL, logger.child({ component: 'redis' })) : undefined;
    if (redis) closers.push({ name: 'redis', close: () => closeRedis(redis) });
    const limitStore: LimitStore = redis
      ? new ResilientLimitStore({ redis, prefix: config.LIMITS_KEY_PREFIX, logger: logger.child({ component: 'limits' }) })
      : new MemoryLimitStore();
    closers.push({ name: 'limits', close: () => limitStore.close() });
    const limits = new LimitsService({
      store: limitStore,
      settings: {
        platformTrafficRpm: config.PLATFORM_TRAFFIC_RPM,
        platformManagementRpm: config.PLATFORM_MANAGEMENT_RPM,
        authFailuresPerMinute: config.AUTH_FAILURES_PER_MINUTE,
      },
      now: options.clock,
      prices,
    });
    // Closed before the store (closers run in reverse): pending output charges are written first.
    closers.push({ name: 'limits-charges', close: () => limits.close() });
    const probes = buildProbes({ storage, detection: detectionClient, redis });
    // Redis only holds rate-limit counters, which fall back to memory: its loss degrades, never fails, health.
    // detection_admission: detection work in flight and waiting (DETECTION_MAX_ACTIVE / DETECTION_MAX_QUEUED).
    const health = {
      degradable: ['redis'],
      info: () => ({ limits: limits.status(), detection_admission: admissionStatus(admission) }),
      readiness: { drain, cacheMs: config.HEALTH_READY_CACHE_MS, timeoutMs: config.HEALTH_READY_TIMEOUT_MS },
    };
    // GET /metrics: on its own port (METRICS_PORT), else on the gateway's (the sensor's when it runs alone).
    const metricsEndpoint: MetricsEndpoint | undefined = metrics && { scrape: () => metrics.scrape(), contentType: metrics.contentType, token: config.METRICS_TOKEN };
    const metricsOn = !metricsEndpoint ? undefined : typeof config.METRICS_PORT === 'number' ? 'own' : wanted.has('gateway') ? 'gateway' : 'sensor';

    if (wanted.has('gateway')) {
      const serviceMetrics = metrics?.forService('gateway');
      const app = buildGatewayApp({
        logger: named('gateway'),
        bodyLimitBytes: config.BODY_LIMIT_BYTES,
        jsonMaxDepth: config.JSON_MAX_DEPTH,
        auth,
        detection: serviceMetrics ? serviceMetrics.instrument(detectionClient) : detectionClient,
        policies,
        projects,
        events,
        organizations: new OrganizationService(storage, projects),
        adminApiKey: config.ADMIN_API_KEY,
        trail,
        audit: sinks,
        responseOwners: new ResponseOwnership(storage),
        upstream: {
          baseUrl: config.OPENAI_BASE_URL,
          apiKey: config.OPENAI_API_KEY,
          timeoutMs: config.UPSTREAM_TIMEOUT_MS,
          streamWindowChars: config.STREAM_SCAN_WINDOW_CHARS,
          providers,
        },
        probes,
        health,
        limits,
        metrics: serviceMetrics,
        ...(metricsOn === 'gateway' && { metricsEndpoint }),
      });
      running.gatewayUrl = await listen(app, config.HOST, config.PORT);
      running.gatewayApp = app;
      if (metricsOn === 'gateway') running.metricsUrl = `${running.gatewayUrl}/metrics`;
      closers.push({ name: 'gateway', close: () => app.close() });
      logger.info({ url: running.gatewayUrl }, 'gateway listening');
    }
    if (wanted.has('sensor')) {
      const serviceMetrics = metrics?.forService('sensor');
      const app = buildSensorApp({
        logger: named('sensor'),
        bodyLimitBytes: config.BODY_LIMIT_BYTES,
        jsonMaxDepth: config.JSON_MAX_DEPTH,
        auth,
        detection: serviceMetrics ? serviceMetrics.instrument(detectionClient) : detectionClient,
        anthropicBaseUrl: config.ANTHROPIC_BASE_URL,
        streamWindowChars: config.STREAM_SCAN_WINDOW_CHARS,
        upstreamTimeoutMs: config.UPSTREAM_TIMEOUT_MS,
        audit: sinks,
        probes,
        health,
        limits,
        metrics: serviceMetrics,
        ...(metricsOn === 'sensor' && { metricsEndpoint }),
      });
      running.sensorUrl = await listen(app, config.HOST, config.SENSOR_PORT);
      running.sensorApp = app;
      if (metricsOn === 'sensor') running.metricsUrl = `${running.sensorUrl}/metrics`;
      closers.push({ name: 'sensor', close: () => app.close() });
      logger.info({ url: running.sensorUrl }, 'sensor listening');
    }
    if (metricsOn === 'own' && metricsEndpoint) {
      const server = await startMetricsServer(metricsEndpoint, config.HOST, config.METRICS_PORT as number);
      closers.push({ name: 'metrics', close: () => server.close() });
      running.metricsUrl = server.url;
      logger.info({ url: server.url }, 'metrics listening');
    }
    return running;
  } catch (err) {
    await closeAll(closers, config.SHUTDOWN_TIMEOUT_MS, logger);
    throw err;
  }
}

function buildProbes(o: { storage: Storage; detection: DetectionClient; redis?: Redis }): Record<string, HealthProbe> {
  const probes: Record<string, HealthProbe> = {
    database: async () => {
      await o.storage.query('SELECT 1');
    },
    detection: async () => {
      if (!(await o.detection.checkHealth())) throw new Error('detection service is not serving');
    },
  };
  const redis = o.redis;
  if (redis) {
    probes.redis = async () => {
      await redis.ping();
    };
  }
  return probes;
}

async function listen(app: FastifyInstance, host: string, port: number): Promise<string> {
  await app.listen({ host, port });
  const address = app.server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return `http://${shownHost}:${actualPort}`;
}

const sleep = (ms: number, unref = true) =>
  new Promise<void>((r) => {
    const timer = setTimeout(r, ms);
    if (unref) timer.unref();
  });

/**
 * The `name` of the lines that are about the process rather than one service (start-up, storage, the
 * audit writer, Redis, shutdown): the service's name when one runs alone, `main` when several share the
 * process (`all`). Each service's own lines (and its requests') carry `gateway`, `sensor` or `detection`.
 */
export function processLogName(services: readonly ServiceName[]): string {
  return services.length === 1 ? services[0]! : 'main';
}

/**
 * The Unix domain socket detection listens on besides DETECTION_ADDRESS: DETECTION_SOCKET when it is a path;
 * none when it is `off` or DETECTION_ADDRESS is itself a socket; otherwise (empty) a fresh one in the temp
 * directory when the gateway or sensor runs in this process (`all`), none when detection runs alone.
 */
export function detectionSocketPath(config: Config, coLocated: boolean): string | undefined {
  const setting = config.DETECTION_SOCKET;
  if (setting === 'off' || config.DETECTION_ADDRESS.startsWith('unix:')) return undefined;
  if (setting !== '') return setting;
  if (!coLocated) return undefined;
  removeOrphanedSockets(os.tmpdir());
  const candidate = path.join(os.tmpdir(), `${SOCKET_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}.sock`);
  // A temp directory with a very long path: TCP then (a socket path is at most MAX_SOCKET_PATH_BYTES).
  return Buffer.byteLength(candidate) <= MAX_SOCKET_PATH_BYTES ? candidate : undefined;
}

const SOCKET_PREFIX = 'csg-detection-';

/** Sockets of ours left in `dir` by processes that no longer exist (killed before they could remove them). */
function removeOrphanedSockets(dir: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.startsWith(SOCKET_PREFIX) && n.endsWith('.sock'));
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^csg-detection-(\d+)-/.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || processAlive(pid)) continue;
    fs.rmSync(path.join(dir, name), { force: true });
  }
}

function replacePort(address: string, port: number): string {
  return `${address.slice(0, address.lastIndexOf(':'))}:${port}`;
}

/** Closes in reverse start order; each step bounded so a stuck dependency cannot hold shutdown forever. */
async function closeAll(closers: Closer[], timeoutMs: number, logger: Logger): Promise<void> {
  while (closers.length > 0) {
    const step = closers.pop()!;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        step.close(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`did not close within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (err) {
      logger.error({ err: err instanceof Error ? err.message : String(err), component: step.name }, 'shutdown step failed');
    } finally {
      clearTimeout(timer);
    }
  }
}

function admissionStatus(admission: DetectionAdmission) {
  const { active, queued, maxActive, maxQueued } = admission.stats();
  return { active, queued, max_active: maxActive, max_queued: maxQueued };
}
