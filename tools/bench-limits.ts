import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { FastifyInstance } from 'fastify';
import type Redis from 'ioredis';
import { Pool } from 'undici';
import { bearerCredential, trafficLimitHooks } from '#src/gateway/limits/limit-hooks';
import { LimitsService } from '#src/gateway/limits/limits.service';
import { MemoryLimitStore } from '#src/gateway/limits/memory-store';
import { closeRedis, connectRedis } from '#src/gateway/limits/redis-client';
import { ResilientLimitStore } from '#src/gateway/limits/redis-store';
import type { AuthContext } from '#src/management/projects/project-auth.service';
// request.auth: the FastifyRequest augmentation the gateway's routes see.
import type {} from '#src/management/projects/request-auth';
import { generateApiKey } from '#src/shared/api-key';
import { createHttpApp } from '#src/shared/http/create-app';
import { createLogger } from '#src/shared/logger';
import { DEFAULT_RATE_LIMITS, type RateLimits } from '#src/shared/policy';
import { PACKAGE_ROOT } from './text-corpus';

/**
 * `npm run bench:limits`: what the rate-limit checks add to one request. The same fastify route (the
 * gateway's HTTP stack and the real limit hooks, with a stub key check and a stub handler answering a
 * chat completion) is measured with limits off, on the in-memory store and on Redis (REDIS_URL, else
 * redis://127.0.0.1:6379; skipped when unreachable), each with the platform limit only and with a
 * policy's rate_limits on. The load generator runs in a worker thread (its own event loop, as a
 * remote client would). Variants are interleaved in rounds so drift hits them alike; sequential
 * requests on one keep-alive connection give the per-request latency, 16 in flight the throughput.
 * Results go to bench/LIMITS.md.
 */

const ROUNDS = 20;
const PER_ROUND = 200;
const WARMUP = 400;
const CONCURRENT = 16;
const CONCURRENT_REQUESTS = 4000;
const TARGET_ADDED_P50_MS = 0.3;
const RESULTS_FILE = path.join(PACKAGE_ROOT, 'bench', 'LIMITS.md');

const PROMPT = 'Summarise the attached meeting notes in three bullet points and list the open action items with their owners. '.repeat(2);
const BODY = JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 256, messages: [{ role: 'user', content: PROMPT }] });
const ANSWER = JSON.stringify({
  id: 'chatcmpl-bench', object: 'chat.completion', created: 1, model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 40, completion_tokens: 2, total_tokens: 42 },
});
const HUGE: RateLimits = {
  ...DEFAULT_RATE_LIMITS, requests_per_minute: 1_000_000, tokens_per_minute: 1_000_000_000, cost_limit_per_day_cents: 1_000_000_000,
};

interface Variant {
  name: string;
  limits?: LimitsService;
  policyOn: boolean;
}

function context(policyOn: boolean): AuthContext {
  return {
    organizationId: '00000000-0000-4000-8000-000000000001', projectId: '00000000-0000-4000-8000-000000000002',
    projectName: 'bench', keyPrefix: 'svc_sk_bench', keyScope: 'full',
    policy: {
      id: '00000000-0000-4000-8000-000000000003', name: 'bench', inherited: false,
      detection: { cacheKey: 'bench', policyMode: 'IO', inputDetectors: [], outputDetectors: [], allowList: { entries: [], match_type: 'contains' }, denyList: { entries: [], match_type: 'contains' }, customDetectors: [] },
      rateLimits: { ...HUGE, rate_limits_enabled: policyOn },
      unscannable: 'allow',
    },
  };
}

async function serve(variant: Variant): Promise<{ app: FastifyInstance; url: string }> {
  const app = createHttpApp({ logger: createLogger({ level: 'silent' }), bodyLimitBytes: 1 << 20, envelope: 'standard' });
  const ctx = context(variant.policyOn);
  const hooks = trafficLimitHooks(variant.limits, {
    wire: 'openai-chat',
    authenticate: async (request) => {
      request.auth = ctx;
    },
    credential: bearerCredential,
  });
  app.post('/v1/chat/completions', hooks, async (_request, reply) => reply.type('application/json').send(ANSWER));
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  return { app, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` };
}

async function once(pool: Pool, key: string): Promise<void> {
  const res = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: BODY });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`unexpected status ${res.statusCode}`);
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function main(): Promise<void> {
  const loadAtStart = os.loadavg()[0] ?? 0;
  const key = generateApiKey();
  const settings = { platformTrafficRpm: 100_000_000, platformManagementRpm: 100_000_000, authFailuresPerMinute: 1_000_000 };
  const memory = new LimitsService({ store: new MemoryLimitStore(), settings });
  const redisUrl = process.env.REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const quiet = createLogger({ level: 'silent' });
  let redis: Redis | undefined = await connectRedis(redisUrl, quiet, { startupWaitMs: 2000 });
  if (redis.status !== 'ready') {
    process.stderr.write(`Redis not reachable at ${redisUrl}: Redis variants skipped\n`);
    await closeRedis(redis);
    redis = undefined;
  }
  const prefix = `bench:limits:${process.pid}:`;
  const onRedis = redis ? new LimitsService({ store: new ResilientLimitStore({ redis, prefix, logger: quiet }), settings }) : undefined;
  const variants: Variant[] = [
    { name: 'off (no limit hooks)', policyOn: false },
    { name: 'memory, platform only', limits: memory, policyOn: false },
    { name: 'memory, platform + policy', limits: memory, policyOn: true },
    ...(onRedis
      ? [
          { name: 'redis, platform only', limits: onRedis, policyOn: false },
          { name: 'redis, platform + policy', limits: onRedis, policyOn: true },
        ]
      : []),
  ];
  const servers = await Promise.all(variants.map(serve));
  const { samples, throughput } = await measureInWorker(servers.map((x) => x.url), key);
  const rows = variants.map((variant, v) => {
    const sorted = [...samples[v]!].sort((a, b) => a - b);
    return { name: variant.name, p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), rps: throughput[v]! };
  });
  const base = rows[0]!;
  const fmt = (n: number) => n.toFixed(3);
  const table = [
    '| variant | p50 ms | p90 ms | p99 ms | added p50 ms | req/s (16 in flight) |',
    '|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.name} | ${fmt(r.p50)} | ${fmt(r.p90)} | ${fmt(r.p99)} | ${r === base ? '—' : fmt(r.p50 - base.p50)} | ${Math.round(r.rps)} |`),
  ].join('\n');
  const worstRedis = rows.filter((r) => r.name.startsWith('redis')).map((r) => r.p50 - base.p50);
  const verdict = worstRedis.length === 0
    ? 'Redis variants not measured (no Redis reachable).'
    : `Largest added p50 with Redis: ${fmt(Math.max(...worstRedis))} ms (target ≤ ${TARGET_ADDED_P50_MS} ms): ${Math.max(...worstRedis) <= TARGET_ADDED_P50_MS ? 'met' : 'NOT met'}.`;
  process.stdout.write(`${table}\n\n${verdict}\n`);
  const doc = [
    '# Rate-limit overhead',
    '',
    'Produced by `npm run bench:limits` (tools/bench-limits.ts). The same fastify route (the gateway\'s HTTP',
    'stack and the real limit hooks, a stub key check and a stub handler answering a chat completion) with',
    'limits off, on the in-memory store and on Redis over loopback. "platform only": a policy with',
    '`rate_limits_enabled: false` (one store call: the platform bucket; the address check is skipped for a key',
    'that authenticated in the last minute). "platform + policy": still one store call (platform, requests,',
    'tokens and cost together) plus input validation, o200k tokenization of a ~230-character prompt and output',
    'counting from the answer\'s usage (that charge rides on the next request). The client runs in a worker thread.',
    `Sequential requests on a keep-alive connection: ${ROUNDS} interleaved rounds × ${PER_ROUND} per variant after ${WARMUP}`,
    `warm-up requests; throughput with ${CONCURRENT} requests in flight (${CONCURRENT_REQUESTS} requests).`,
    '',
    `Machine: ${os.cpus()[0]?.model ?? 'unknown CPU'} × ${os.cpus().length}, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}.`,
    `Load average (1 min) at the start: ${loadAtStart.toFixed(2)}. Absolute numbers move with the machine's load; the "added"`,
    'column compares variants of the same run (on this shared 2-core VM it varied by about ±0.04 ms between runs).',
    '',
    table,
    '',
    verdict,
    '',
  ].join('\n');
  fs.mkdirSync(path.dirname(RESULTS_FILE), { recursive: true });
  fs.writeFileSync(RESULTS_FILE, doc);
  await Promise.all(servers.map((x) => x.app.close()));
  await memory.close();
  await onRedis?.close(); // writes the pending output charges first, so the clean-up below sees every key
  if (redis) {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await closeRedis(redis);
  }
}

interface Measured {
  samples: number[][];
  throughput: number[];
}

function measureInWorker(urls: string[], key: string): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(__filename, { workerData: { urls, key } });
    worker.once('message', (m: Measured) => resolve(m));
    worker.once('error', reject);
  });
}

/** The load generator: every variant in interleaved rounds, then a concurrent run per variant. */
async function generateLoad(urls: string[], key: string): Promise<Measured> {
  const pools = urls.map((url) => new Pool(url, { connections: CONCURRENT, pipelining: 1 }));
  const samples = urls.map(() => [] as number[]);
  for (const pool of pools) for (let i = 0; i < WARMUP; i++) await once(pool, key);
  for (let round = 0; round < ROUNDS; round++) {
    for (let v = 0; v < pools.length; v++) {
      for (let i = 0; i < PER_ROUND; i++) {
        const started = performance.now();
        await once(pools[v]!, key);
        samples[v]!.push(performance.now() - started);
      }
    }
  }
  const throughput: number[] = [];
  for (const pool of pools) {
    let next = 0;
    const started = performance.now();
    await Promise.all(Array.from({ length: CONCURRENT }, async () => {
      while (next++ < CONCURRENT_REQUESTS) await once(pool, key);
    }));
    throughput.push(CONCURRENT_REQUESTS / ((performance.now() - started) / 1000));
  }
  await Promise.all(pools.map((p) => p.close()));
  return { samples, throughput };
}

if (isMainThread) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
} else {
  const { urls, key } = workerData as { urls: string[]; key: string };
  void generateLoad(urls, key).then((m) => parentPort!.postMessage(m));
}
