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

/**
 * GET /health: `{status: "healthy", service, version, uptime_s, checks}` with 200, or
 * `{status: "unhealthy", reason, ...}` with 503 when a dependency is down. A degradable dependency that
 * is down keeps 200 / "healthy" and is named in `degraded`. No authentication; no secrets or content
 * in the body.
 */
export function registerHealthRoute(app: FastifyInstance, options: HealthOptions): void {
  const startedAt = options.startedAt ?? Date.now();
  const timeoutMs = options.timeoutMs ?? 2000;
  app.get('/health', healthDoc, async (_request, reply) => {
    const names = Object.keys(options.probes);
    const results = await Promise.all(names.map((n) => runProbe(options.probes[n]!, timeoutMs)));
    const checks = Object.fromEntries(names.map((n, i) => [n, results[i]!]));
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
}
