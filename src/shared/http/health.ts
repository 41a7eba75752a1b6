import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { VERSION } from '../version';
import { documented } from './openapi';

/** A dependency probe: resolves when healthy, rejects (with a reason) when not. */
export type HealthProbe = () => Promise<void>;

export interface HealthOptions {
  service: string;
  probes: Record<string, HealthProbe>;
  /** Per-probe budget. */
  timeoutMs?: number;
  startedAt?: number;
  /**
   * Probes whose failure degrades the service without making it unhealthy (e.g. Redis, when the rate
   * limits fall back to local memory): still 200 and status "healthy", listed under `degraded`.
   */
  degradable?: readonly string[];
  /** Extra top-level fields of the body (e.g. `limits: {store}`). */
  info?: () => Record<string, unknown>;
  /** GET /health/ready: its shutdown state, result cache and per-probe budget (defaults when absent). */
  readiness?: ReadinessOptions;
}

/**
 * Set once the process starts shutting down (SIGTERM): from then on GET /health/ready answers 503, while
 * the servers still serve what arrives (SHUTDOWN_DRAIN_DELAY_MS), so load balancers stop sending first.
 */
export class DrainState {
  private started = false;
  begin(): void {
    this.started = true;
  }
  get draining(): boolean {
    return this.started;
  }
}

export interface ReadinessOptions {
  drain?: DrainState;
  /** How long a readiness result is reused (HEALTH_READY_CACHE_MS; 0: every call checks). Default 1000. */
  cacheMs?: number;
  /** Budget of each dependency check of /health/ready (HEALTH_READY_TIMEOUT_MS). Default 1000. */
  timeoutMs?: number;
}

interface ProbeResult {
  status: 'up' | 'down';
  latency_ms: number;
  error?: string;
}

async function runProbe(probe: HealthProbe, timeoutMs: number): Promise<ProbeResult> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { status: 'up', latency_ms: round(performance.now() - started) };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return { status: 'down', latency_ms: round(performance.now() - started), error: message.slice(0, 200) };
  } finally {
    clearTimeout(timer);
  }
}

const round = (ms: number) => Math.round(ms * 100) / 100;

const probeResultSchema = z.strictObject({
  status: z.enum(['up', 'down']),
  latency_ms: z.number(),
  error: z.string().optional(),
});

/** The /health body (documentation; extra top-level fields come from `info`). */
export const healthBodySchema = z.looseObject({
  status: z.enum(['healthy', 'unhealthy']),
  reason: z.string().optional(),
  degraded: z.array(z.string()).optional(),
  service: z.string(),
  version: z.string(),
  uptime_s: z.number().int(),
  checks: z.record(z.string(), probeResultSchema),
});

const healthDoc = documented({
  tags: ['health'],
  summary: 'Health of the service and its dependencies',
  security: [],
  responses: {
    200: { description: 'Healthy (a degradable dependency may be down: listed in `degraded`)', schema: healthBodySchema },
    503: { description: 'Unhealthy: a dependency is down (named in `reason`)', schema: healthBodySchema },
  },
  errors: [],
});

async function runProbes(probes: Record<string, HealthProbe>, names: readonly string[], timeoutMs: number): Promise<Record<string, ProbeResult>> {
  const results = await Promise.all(names.map((n) => runProbe(probes[n]!, timeoutMs)));
  return Object.fromEntries(names.map((n, i) => [n, results[i]!]));
}

/**
 * GET /health: `{status: "healthy", service, version, uptime_s, checks}` with 200, or
 * `{status: "unhealthy", reason, ...}` with 503 when a dependency is down. A degradable dependency that
 * is down keeps 200 / "healthy" and is named in `degraded`. No authentication; no secrets or content
 * in the body. GET /health/live and GET /health/ready are registered with it (registerLivenessAndReadiness).
 */
export function registerHealthRoute(app: FastifyInstance, options: HealthOptions): void {
  const startedAt = options.startedAt ?? Date.now();
  const timeoutMs = options.timeoutMs ?? 2000;
  app.get('/health', healthDoc, async (_request, reply) => {
    const names = Object.keys(options.probes);
    const checks = await runProbes(options.probes, names, timeoutMs);
    const results = names.map((n) => checks[n]!);
    const degradable = new Set(options.degradable ?? []);
    const failed = names.filter((_, i) => results[i]!.status === 'down');
    const down = failed.filter((n) => !degradable.has(n));
    const degraded = failed.filter((n) => degradable.has(n));
    const body = {
      status: down.length === 0 ? 'healthy' : 'unhealthy',
      ...(down.length > 0 ? { reason: down.map((n) => `${n}: ${checks[n]!.error}`).join('; ') } : {}),
      ...(degraded.length > 0 ? { degraded } : {}),
      service: options.service,
      version: VERSION,
      uptime_s: Math.floor((Date.now() - startedAt) / 1000),
      checks,
      ...(options.info ? options.info() : {}),
    };
    return reply.status(down.length === 0 ? 200 : 503).send(body);
  });
  registerLivenessAndReadiness(app, options);
}

const liveDoc = documented({
  tags: ['health'],
  summary: 'Liveness: 200 while the process serves HTTP (no dependency is checked)',
  security: [],
  responses: { 200: { description: 'The process serves', schema: z.strictObject({ status: z.literal('live'), service: z.string(), version: z.string() }) } },
  errors: [],
});

/** The /health/ready body: `ready`, `not_ready` (a required dependency is down) or `draining` (shutting down). */
export const readyBodySchema = z.strictObject({
  status: z.enum(['ready', 'not_ready', 'draining']),
  reason: z.string().optional().meta({ description: 'Why not ready: each dependency that is down with its error, or "shutting down"' }),
  down: z.array(z.string()).optional().meta({ description: 'The dependencies that are down (database, detection)' }),
  service: z.string(),
  checks: z.record(z.string(), probeResultSchema).optional(),
});

const readyDoc = documented({
  tags: ['health'],
  summary: 'Readiness: 200 when the database and the detection service answer; 503 otherwise and from the start of shutdown',
  description: 'Checks are bounded (HEALTH_READY_TIMEOUT_MS each) and reused for HEALTH_READY_CACHE_MS. Send traffic only to an instance that answers 200.',
  security: [],
  responses: {
    200: { description: 'Ready', schema: readyBodySchema },
    503: { description: 'Not ready (a dependency is down, named in `down`) or draining (shutting down)', schema: readyBodySchema },
  },
  errors: [],
});

interface ReadyResult {
  at: number;
  checks: Record<string, ProbeResult>;
  down: string[];
}

/**
 * GET /health/live: 200 `{status: "live"}` while the process serves HTTP (no dependency is checked: a
 * restart would not bring a database back). GET /health/ready: 200 `{status: "ready"}` when every
 * required (non-degradable) dependency answers within its budget; 503 `{status: "not_ready", reason,
 * down, checks}` when one does not, and 503 `{status: "draining"}` from the moment shutdown begins. The
 * dependency checks are bounded (timeoutMs each, run in parallel) and their result is reused for cacheMs;
 * concurrent calls share one check. No authentication; no secrets or content in the body.
 */
export function registerLivenessAndReadiness(app: FastifyInstance, options: HealthOptions): void {
  const r = options.readiness ?? {};
  const cacheMs = r.cacheMs ?? 1000;
  const timeoutMs = r.timeoutMs ?? 1000;
  const degradable = new Set(options.degradable ?? []);
  const required = Object.keys(options.probes).filter((n) => !degradable.has(n));
  let last: ReadyResult | undefined;
  let checking: Promise<ReadyResult> | undefined;
  const check = (): Promise<ReadyResult> => {
    if (last && Date.now() - last.at < cacheMs) return Promise.resolve(last);
    checking ??= runProbes(options.probes, required, timeoutMs)
      .then((checks) => {
        last = { at: Date.now(), checks, down: required.filter((n) => checks[n]!.status === 'down') };
        return last;
      })
      .finally(() => {
        checking = undefined;
      });
    return checking;
  };
  app.get('/health/live', liveDoc, async () => ({ status: 'live', service: options.service, version: VERSION }));
  app.get('/health/ready', readyDoc, async (_request, reply) => {
    const draining = () => reply.status(503).send({ status: 'draining', reason: 'shutting down', service: options.service });
    if (r.drain?.draining) return draining();
    const result = await check();
    if (r.drain?.draining) return draining();
    const { checks, down } = result;
    if (down.length === 0) return reply.status(200).send({ status: 'ready', service: options.service, checks });
    const reason = down.map((n) => `${n}: ${checks[n]!.error}`).join('; ');
    return reply.status(503).send({ status: 'not_ready', reason, down, service: options.service, checks });
  });
}
