import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { generateApiKey } from '../../src/shared/api-key';
import { pgliteTarget, postgresTarget, TEST_DATABASE_URL } from '../helpers/databases';
import { freePort, HAS_REDIS_SERVER, startRedisServer, type ThrowawayRedis } from '../helpers/redis-server';
import { postJson, startAnotherInstance, startTestServices, type TestServices } from '../helpers/services';

/**
 * Limits on Redis: two gateway instances share every limit exactly; Redis going away degrades to a
 * local fallback (still limiting, still healthy, logged once) and comes back by itself.
 */

const TEST_REDIS_URL = process.env.TEST_REDIS_URL;
const START = Date.UTC(2025, 10, 20, 9, 0, 0);

/** A key prefix of its own per run; every key under it is deleted afterwards. */
function redisPrefix(url: string) {
  const prefix = `test:limits:e2e:${randomBytes(6).toString('hex')}:`;
  return {
    prefix,
    async cleanup() {
      const redis = new Redis(url, { maxRetriesPerRequest: 1 });
      try {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(...keys);
      } finally {
        await redis.quit();
      }
    },
  };
}

const detect = (url: string, key: string, content = 'hello') => postJson(`${url}/v1/detect`, { content }, { authorization: `Bearer ${key}` });

(TEST_REDIS_URL ? describe : describe.skip)('two gateway instances on one Redis', () => {
  const clock = { now: START };
  let ns: ReturnType<typeof redisPrefix>;
  beforeAll(() => {
    ns = redisPrefix(TEST_REDIS_URL!);
  });
  afterAll(async () => ns?.cleanup());

  it('share the platform limit of a key exactly, under concurrency', async () => {
    const key = generateApiKey();
    const env = { REDIS_URL: TEST_REDIS_URL!, LIMITS_KEY_PREFIX: ns.prefix, BOOTSTRAP_API_KEY: key, PLATFORM_TRAFFIC_RPM: '7' };
    // Two independent deployments (own databases) that know the same key: only Redis connects them.
    const target = TEST_DATABASE_URL ? postgresTarget : pgliteTarget;
    const a = await startTestServices(target, { services: ['detection', 'gateway'], env, clock: () => clock.now });
    const b = await startTestServices(target, { services: ['gateway'], env: { ...env, DETECTION_ADDRESS: a.running.detectionAddress! }, clock: () => clock.now });
    try {
      const results = await Promise.all(Array.from({ length: 16 }, (_, i) => detect(i % 2 === 0 ? a.gatewayUrl : b.gatewayUrl, key)));
      expect(results.filter((r) => r.status === 200)).toHaveLength(7);
      expect(results.filter((r) => r.status === 429)).toHaveLength(9);
      expect(a.running.gatewayUrl && (await (await fetch(`${a.gatewayUrl}/health`)).json())).toMatchObject({ limits: { store: 'redis' } });
    } finally {
      await b.dispose();
      await a.dispose();
    }
  });

  (TEST_DATABASE_URL ? it : it.skip)('share a policy\'s request and token limits (one PostgreSQL, one Redis)', async () => {
    const env = { REDIS_URL: TEST_REDIS_URL!, LIMITS_KEY_PREFIX: ns.prefix };
    const a = await startTestServices(postgresTarget, { services: ['detection', 'gateway'], env, clock: () => clock.now });
    const b = await startAnotherInstance(a, { services: ['gateway'], env, clock: () => clock.now });
    try {
      const policies = await fetch(`${a.gatewayUrl}/v1/policies/`, { headers: { authorization: `Bearer ${a.apiKey}` } });
      const policyId = ((await policies.json()) as { results: Array<{ id: string; is_default: boolean }> }).results.find((p) => p.is_default)!.id;
      const patch = await fetch(`${a.gatewayUrl}/v1/policies/${policyId}/`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${a.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ input_detectors: [], rate_limits: { rate_limits_enabled: true, requests_per_minute: 5, burst_multiplier: 1, tokens_per_minute: 1000 } }),
      });
      expect(patch.status).toBe(200);
      const first = await detect(b.gatewayUrl, a.apiKey, 'hello hello hello'); // 3 tokens, through B
      expect(first.headers.get('x-tokenlimit-remaining')).toBe('997');
      const onA = await detect(a.gatewayUrl, a.apiKey, 'hello'); // A sees B's spending
      expect(onA.headers.get('x-tokenlimit-remaining')).toBe('996');
      expect(onA.headers.get('x-ratelimit-remaining')).toBe('3');
      const rest = await Promise.all(Array.from({ length: 8 }, (_, i) => detect(i % 2 === 0 ? a.gatewayUrl : b.gatewayUrl, a.apiKey)));
      expect(rest.filter((r) => r.status === 200)).toHaveLength(3);
      expect(rest.filter((r) => r.status === 429).every((r) => r.json.error.details.scope === 'requests_per_minute')).toBe(true);
    } finally {
      await b.running.close();
      await a.dispose();
    }
  });
});

(HAS_REDIS_SERVER ? describe : describe.skip)('Redis down: fallback and recovery', () => {
  let server: ThrowawayRedis | undefined;
  let svc: TestServices | undefined;
  afterAll(async () => {
    await svc?.dispose();
    await server?.kill();
  });

  const health = async () => {
    const res = await fetch(`${svc!.gatewayUrl}/health`);
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  it('keeps limiting on local memory while Redis is down, stays healthy (degraded), logs it once and switches back', async () => {
    const clock = { now: START };
    const port = await freePort();
    server = await startRedisServer(port);
    svc = await startTestServices(pgliteTarget, { services: ['detection', 'gateway'], env: { REDIS_URL: server.url, LIMITS_KEY_PREFIX: 'fb:' }, clock: () => clock.now });
    const key = svc.apiKey;
    const up = await health();
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ status: 'healthy', checks: { redis: { status: 'up' } }, limits: { store: 'redis' } });
    expect(up.body.degraded).toBeUndefined();
    const policyId = ((await (await fetch(`${svc.gatewayUrl}/v1/policies/`, { headers: { authorization: `Bearer ${key}` } })).json()) as { results: Array<{ id: string }> }).results[0]!.id;
    await fetch(`${svc.gatewayUrl}/v1/policies/${policyId}/`, {
      method: 'PATCH', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input_detectors: [], rate_limits: { rate_limits_enabled: true, requests_per_minute: 3, burst_multiplier: 1 } }),
    });
    expect((await detect(svc.gatewayUrl, key)).status).toBe(200);

    await server.kill();
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await detect(svc.gatewayUrl, key)).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]); // requests flow, and the limit still holds (locally)
    const down = await health();
    expect(down.status).toBe(200);
    expect(down.body).toMatchObject({ status: 'healthy', degraded: ['redis'], checks: { redis: { status: 'down' } }, limits: { store: 'memory-fallback' } });
    expect(svc.logs.lines.filter((l) => l.includes('local in-memory fallback'))).toHaveLength(1);

    server = await startRedisServer(port);
    const deadline = Date.now() + 10_000;
    while ((await health()).body.limits.store !== 'redis' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const back = await health();
    expect(back.body).toMatchObject({ status: 'healthy', checks: { redis: { status: 'up' } }, limits: { store: 'redis' } });
    expect(back.body.degraded).toBeUndefined();
    expect(svc.logs.text).toContain('shared through redis again');
    expect((await detect(svc.gatewayUrl, key)).status).toBe(200); // a fresh Redis: the counters start over
  });
});
