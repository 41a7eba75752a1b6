import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { DetectionAdmission } from '../detection-admission';
import type { DetectionClient, DetectResult } from '../detection-client';
import type { DetectStreamUpdate } from '../detection-stream';
import { isAppError } from '../errors';
import type { Direction } from '../policy';
import { FastCounter, FastHistogram, type FastCounterChild, type FastHistogramChild } from './fast-metrics';
import { cache1, cache2, cache3, cacheByStatus } from './label-cache';

/**
 * The metrics of one process's gateway and sensor (docs/metrics.md), in one prom-client Registry of its
 * own (never the global default: tests run several instances in one process, and `all` runs gateway,
 * sensor and detection together). Other registries (detection's, possibly in its worker thread) join
 * the scrape as sources. No label carries a tenant identifier unless `tenantLabels` is on, and then only
 * on the csg_tenant_* series; routes are labelled by their pattern (`/v1/policies/:id`), never the URL.
 */

export type MetricsService = 'gateway' | 'sensor';
export type FailOpenReason = 'detector_failed' | 'unscannable_content';
/** The sensor's `anthropic`; the gateway's `openai` (OPENAI_BASE_URL), or a PROVIDERS_FILE provider name. */
export type UpstreamProvider = string;

/** The text of another registry appended to this process's scrape. */
export type MetricsSource = () => Promise<string>;

/** What the audit writer reports (AuditWriter.getStats). */
export interface AuditStatsSource {
  getStats(): { buffered: number; spooled: number; written: number; dropped: number; deadLettered: number; lost: number; outage: boolean };
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const DETECTION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** The route label of a request no route matched (its URL is never a label). */
export const UNMATCHED_ROUTE = 'unmatched';

export interface ProcessMetricsOptions {
  /** METRICS_TENANT_LABELS: per-tenant series (organization and project ids). */
  tenantLabels?: boolean;
  /** Node's process metrics (CPU, memory, event loop, GC); default true. */
  defaultMetrics?: boolean;
}

export class ProcessMetrics {
  readonly registry = new Registry();
  readonly tenantLabels: boolean;
  private readonly counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new FastCounter({ name, help, labelNames, registers: [this.registry] });
  private readonly histogram = <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]) =>
    new FastHistogram({ name, help, labelNames, buckets, registers: [this.registry] });
  private readonly sources: MetricsSource[] = [];

  readonly requests = this.counter(
    'csg_http_requests_total',
    'HTTP requests answered, by service, method, route pattern and status code',
    ['service', 'method', 'route', 'status'],
  );
  readonly requestDuration = this.histogram(
    'csg_http_request_duration_seconds',
    'Time from receiving a request to its response being sent (the whole request, streams included)',
    ['service', 'method', 'route'],
    LATENCY_BUCKETS,
  );
  readonly detectionDuration = this.histogram(
    'csg_detection_duration_seconds',
    'Time of one Detect call as the gateway or sensor sees it (admission wait and the gRPC hop included)',
    ['service', 'direction'],
    DETECTION_BUCKETS,
  );
  readonly detectionErrors = this.counter(
    'csg_detection_errors_total',
    'Detect calls that failed (no verdict), by error code',
    ['service', 'direction', 'code'],
  );
  readonly detections = this.counter(
    'csg_detections_total',
    'Categories detected, by detector type, policy action and direction (one per category per scan)',
    ['service', 'type', 'action', 'direction'],
  );
  readonly failOpen = this.counter(
    'csg_detection_fail_open_total',
    'Content let through unscanned: a detector failed or timed out under fail mode open (detector_failed), or the policy allows content no detector can read (unscannable_content)',
    ['service', 'reason'],
  );
  readonly failClosed = this.counter(
    'csg_detection_fail_closed_total',
    'Requests refused because detection was unavailable or timed out (fail mode closed)',
    ['service', 'reason'],
  );
  readonly overloaded = this.counter(
    'csg_detection_overloaded_total',
    'Requests refused with 503 detection_overloaded (the detection admission queue was full)',
    ['service'],
  );
  readonly limitRejections = this.counter(
    'csg_limit_rejections_total',
    'Requests refused with 429 by a rate limit, by the limit that answered',
    ['service', 'scope'],
  );
  readonly upstreamDuration = this.histogram(
    'csg_upstream_duration_seconds',
    'Time from sending a request to the upstream provider to receiving its response headers',
    ['service', 'provider'],
    LATENCY_BUCKETS,
  );
  readonly upstreamErrors = this.counter(
    'csg_upstream_errors_total',
    'Upstream provider failures: transport (timeout, unavailable), unusable answers (invalid, too_large) and error statuses (http_4xx, http_5xx)',
    ['service', 'provider', 'kind'],
  );
  readonly upstreamAttempts = this.counter(
    'csg_upstream_attempts_total',
    'Attempts at an upstream provider, by outcome: the answer\'s status class (2xx, 3xx, 4xx, 429, 5xx) or a transport failure (connect_error, connect_timeout, connection_reset, timeout, transport_error, aborted)',
    ['service', 'provider', 'outcome'],
  );
  readonly upstreamRetries = this.counter(
    'csg_upstream_retries_total',
    'Retries of the same upstream provider after a 429, 5xx or connection failure (PROVIDERS_FILE)',
    ['service', 'provider'],
  );
  readonly upstreamFallbacks = this.counter(
    'csg_upstream_fallbacks_total',
    'Requests passed on to the next target of their route after a provider failed retryably (PROVIDERS_FILE)',
    ['service', 'from_provider', 'to_provider'],
  );
  private tenantRequests?: Counter<'service' | 'organization_id' | 'project_id' | 'status'>;
  private tenantBlocked?: Counter<'service' | 'organization_id' | 'project_id'>;

  constructor(options: ProcessMetricsOptions = {}) {
    this.tenantLabels = options.tenantLabels === true;
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry });
    if (this.tenantLabels) {
      this.tenantRequests = new Counter({
        name: 'csg_tenant_requests_total',
        help: 'Authenticated requests by organization and project (METRICS_TENANT_LABELS=true only)',
        labelNames: ['service', 'organization_id', 'project_id', 'status'] as const,
        registers: [this.registry],
      });
      this.tenantBlocked = new Counter({
        name: 'csg_tenant_blocked_requests_total',
        help: 'Authenticated requests blocked by the security policy, by organization and project (METRICS_TENANT_LABELS=true only)',
        labelNames: ['service', 'organization_id', 'project_id'] as const,
        registers: [this.registry],
      });
    }
  }

  /** Appends another registry's text (detection's) to every scrape. */
  addSource(source: MetricsSource): void {
    this.sources.push(source);
  }

  /** The whole scrape: this registry, then every source (a source that fails is left out of this scrape). */
  async scrape(): Promise<string> {
    const parts = await Promise.all([this.registry.metrics(), ...this.sources.map((s) => s().catch(() => ''))]);
    return parts
      .filter((p) => p.length > 0)
      .map((p) => (p.endsWith('\n') ? p : `${p}\n`))
      .join('');
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The audit writer's queue, dead letters and drops, read at scrape time. */
  watchAudit(audit: AuditStatsSource): void {
    const registers = [this.registry];
    new Gauge({
      name: 'csg_audit_queue_depth',
      help: 'Audit events waiting to be written: in memory, and in the spool (database unreachable)',
      labelNames: ['stage'] as const,
      registers,
      collect() {
        const s = audit.getStats();
        this.set({ stage: 'memory' }, s.buffered);
        this.set({ stage: 'spool' }, s.spooled);
      },
    });
    new Gauge({
      name: 'csg_audit_outage',
      help: '1 while the audit writer considers the database unreachable (events go to the spool)',
      registers,
      collect() {
        this.set(audit.getStats().outage ? 1 : 0);
      },
    });
    const counter = (name: string, help: string, read: (s: ReturnType<AuditStatsSource['getStats']>) => number) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read(audit.getStats()));
        },
      });
    counter('csg_audit_written_total', 'Audit events written to the database', (s) => s.written);
    counter('csg_audit_dead_lettered_total', 'Audit events the database rejected, stored in audit_dead_letters', (s) => s.deadLettered);
    counter('csg_audit_dropped_total', 'Audit events dropped (memory buffer or spool size cap reached)', (s) => s.dropped);
    counter('csg_audit_lost_total', 'Audit events rejected by the dead-letter table as well (never expected)', (s) => s.lost);
  }

  /** Detection work in flight and waiting for a slot (DETECTION_MAX_ACTIVE / DETECTION_MAX_QUEUED). */
  watchAdmission(admission: Pick<DetectionAdmission, 'stats'>): void {
    new Gauge({
      name: 'csg_detection_admission',
      help: 'Detection work of this process: active (in flight), queued (waiting), and the two limits',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const s = admission.stats();
        this.set({ state: 'active' }, s.active);
        this.set({ state: 'queued' }, s.queued);
        this.set({ state: 'max_active' }, s.maxActive);
        this.set({ state: 'max_queued' }, s.maxQueued);
      },
    });
  }

  /** The bindings of one HTTP service (its label value, pre-bound children). */
  forService(service: MetricsService): HttpMetrics {
    return new HttpMetrics(this, service);
  }

  /** @internal per-tenant series of one response (only with tenantLabels). */
  countTenant(service: MetricsService, organizationId: string, projectId: string, status: number, blocked: boolean): void {
    this.tenantRequests?.labels(service, organizationId, projectId, String(status)).inc();
    if (blocked) this.tenantBlocked?.labels(service, organizationId, projectId).inc();
  }
}

interface RouteBinding {
  duration: FastHistogramChild;
  byStatus: (status: number) => FastCounterChild;
}

/** One service's view of the process metrics: hooks for its fastify app and a wrapper for its detection client. */
export class HttpMetrics {
  private readonly route: (method: string, route: string) => RouteBinding;
  private readonly detections: (type: string, action: string, direction: string) => { inc(): void };
  private readonly detectSeconds: (direction: string) => { observe(v: number): void };
  private readonly detectErrors: (direction: string, code: string) => { inc(): void };
  private readonly failOpen: (reason: FailOpenReason) => { inc(): void };
  private readonly failClosed: (reason: string) => { inc(): void };
  private readonly limits: (scope: string) => { inc(): void };
  private readonly upstreamSeconds: (provider: string) => { observe(v: number): void };
  private readonly upstreamErrors: (provider: string, kind: string) => { inc(): void };
  private readonly overloaded: { inc(): void };
  private readonly attempts: (provider: string, outcome: string) => { inc(): void };
  private readonly retries: (provider: string) => { inc(): void };
  private readonly fallbacks: (from: string, to: string) => { inc(): void };

  constructor(
    private readonly m: ProcessMetrics,
    readonly service: MetricsService,
  ) {
    this.route = cache2((method, route) => ({
      duration: m.requestDuration.child(service, method, route),
      byStatus: cacheByStatus((status) => m.requests.child(service, method, route, status)),
    }));
    this.detections = cache3((type, action, direction) => m.detections.child(service, type, action, direction));
    this.detectSeconds = cache1((direction) => m.detectionDuration.child(service, direction));
    this.detectErrors = cache2((direction, code) => m.detectionErrors.child(service, direction, code));
    this.failOpen = cache1((reason) => m.failOpen.child(service, reason));
    this.failClosed = cache1((reason) => m.failClosed.child(service, reason));
    this.limits = cache1((scope) => m.limitRejections.child(service, scope));
    this.upstreamSeconds = cache1((provider) => m.upstreamDuration.child(service, provider));
    this.upstreamErrors = cache2((provider, kind) => m.upstreamErrors.child(service, provider, kind));
    this.overloaded = m.overloaded.child(service);
    this.attempts = cache2((provider, outcome) => m.upstreamAttempts.child(service, provider, outcome));
    this.retries = cache1((provider) => m.upstreamRetries.child(service, provider));
    this.fallbacks = cache2((from, to) => m.upstreamFallbacks.child(service, from, to));
  }

  /** The provider the service relays to (the gateway: openai; the sensor: anthropic). */
  get provider(): UpstreamProvider {
    return this.service === 'sensor' ? 'anthropic' : 'openai';
  }

  /**
   * App-wide hooks: every response counted by route pattern and status, its duration observed; fail-closed
   * refusals, limit rejections, detection overload and upstream transport failures counted from the error.
   * Installed before any route (createHttpApp), so every route has them.
   */
  install(app: FastifyInstance): void {
    app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      this.onResponse(request, reply);
      done();
    });
    app.addHook('onError', (request: FastifyRequest, _reply: FastifyReply, error: unknown, done: () => void) => {
      this.onError(error, request.audit?.provider);
      done();
    });
  }

  private onResponse(request: FastifyRequest, reply: FastifyReply): void {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    const binding = this.route(request.method, route);
    binding.byStatus(reply.statusCode).inc();
    binding.duration.observe(reply.elapsedTime / 1000);
    const audit = request.audit;
    if (audit !== undefined) {
      if (audit.failReason) this.failClosed(audit.failReason).inc();
      // Content no detector could read, forwarded (policy unscannable: allow) and answered.
      if (audit.unscannedContent && !audit.blocked && reply.statusCode < 400) this.failOpen('unscannable_content').inc();
    }
    if (this.m.tenantLabels && request.auth) {
      this.m.countTenant(this.service, request.auth.organizationId, request.auth.projectId, reply.statusCode, request.audit?.blocked === true);
    }
  }

  /** `provider`: the one the request's audit draft names (callUpstream notes it), else this service's. */
  private onError(error: unknown, provider: string | undefined): void {
    if (!isAppError(error) || error.relayed) return;
    if (error.type === 'rate_limit') {
      const scope = error.details?.scope;
      this.limits(typeof scope === 'string' ? scope : 'other').inc();
    } else if (error.code === 'detection_overloaded') {
      this.overloaded.inc();
    } else if (error.code.startsWith('upstream_')) {
      // upstream_timeout / upstream_unavailable / upstream_invalid / upstream_too_large (ours, not relayed).
      this.upstreamErrors(provider ?? this.provider, error.code.slice('upstream_'.length)).inc();
    }
  }

  /** An upstream answer's headers arrived: its latency (from `startedAt`, performance.now()), the attempt and an error status. */
  upstreamAnswered(startedAt: number, status: number, provider: string = this.provider): void {
    this.upstreamSeconds(provider).observe((performance.now() - startedAt) / 1000);
    this.attempts(provider, status === 429 ? '429' : `${Math.floor(status / 100)}xx`).inc();
    if (status >= 500) this.upstreamErrors(provider, 'http_5xx').inc();
    else if (status >= 400) this.upstreamErrors(provider, 'http_4xx').inc();
  }

  /** An attempt that got no answer (`kind`: connect_error, timeout, ...); the request's final failure is counted by onError. */
  upstreamAttemptFailed(provider: string, kind: string): void {
    this.attempts(provider, kind).inc();
  }

  upstreamRetry(provider: string): void {
    this.retries(provider).inc();
  }

  upstreamFallback(from: string, to: string): void {
    this.fallbacks(from, to).inc();
  }

  /** The detection client of this service, counting verdicts (categories, fail-open) and timing Detect calls. */
  instrument(client: DetectionClient): DetectionClient {
    return {
      detect: async (req) => {
        const startedAt = performance.now();
        let result: DetectResult;
        try {
          result = await client.detect(req);
        } catch (err) {
          this.detectErrors(req.direction, isAppError(err) ? err.code : 'internal').inc();
          throw err;
        }
        this.detectSeconds(req.direction).observe((performance.now() - startedAt) / 1000);
        this.verdict(req.direction, result);
        return result;
      },
      detectStream: (options) => {
        const onUpdate = options.onUpdate;
        // Only when the caller takes updates by callback (as the stream guard does): without one, updates
        // are queued for iteration, and adding a callback would change that.
        if (!onUpdate) return client.detectStream(options);
        return client.detectStream({
          ...options,
          onUpdate: (update: DetectStreamUpdate) => {
            this.streamUpdate(options.direction, update);
            onUpdate(update);
          },
        });
      },
      listDetectorTypes: () => client.listDetectorTypes(),
      checkHealth: () => client.checkHealth(),
      close: () => client.close(),
    };
  }

  private verdict(direction: Direction, result: DetectResult): void {
    for (const c of result.categories) this.detections(c.type, c.action, direction).inc();
    for (const o of result.outcomes) {
      if ((o.status === 'error' || o.status === 'timeout') && o.failMode === 'open') {
        this.failOpen('detector_failed').inc();
        break;
      }
    }
  }

  /** A stream's categories are counted as they first fire (an escalated action counts again). */
  private streamUpdate(direction: Direction, update: DetectStreamUpdate): void {
    for (const c of update.newCategories) this.detections(c.type, c.action, direction).inc();
  }
}
