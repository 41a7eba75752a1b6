import type Redis from 'ioredis';
import { closeRedis, connectRedis } from '../../../src/gateway/limits/redis-client';
import { ResilientLimitStore } from '../../../src/gateway/limits/redis-store';
import type { BucketRule } from '../../../src/gateway/limits/limit-store';
import { createLogger } from '../../../src/shared/logger';
import { LogCapture } from '../../helpers/services';
import { freePort, HAS_REDIS_SERVER, startRedisServer, type ThrowawayRedis } from '../../helpers/redis-server';

const rule: BucketRule = { type: 'bucket', key: 'fallback-test', capacity: 3, perMinute: 3, cost: 1, mode: 'take' };
const T0 = Date.UTC(2025, 10, 20, 12);

async function until(condition: () => boolean, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

(HAS_REDIS_SERVER ? describe : describe.skip)('Redis unavailable: local fallback and automatic recovery', () => {
  let server: ThrowawayRedis | undefined;
  let redis: Redis | undefined;
  afterEach(async () => {
    if (redis) await closeRedis(redis);
    await server?.kill();
    server = undefined;
    redis = undefined;
  });

  it('keeps answering from memory while Redis is down, logs each switch once, and goes back to Redis by itself', async () => {
    const port = await freePort();
    const logs = new LogCapture();
    const logger = createLogger({ level: 'info', destination: logs });
    // Redis is not there yet: the process still starts, on the fallback.
    redis = await connectRedis(`redis://127.0.0.1:${port}`, logger, { startupWaitMs: 300 });
    const store = new ResilientLimitStore({ redis, prefix: 'fb:', logger, retryMs: 100 });
    const results = [];
    for (let i = 0; i < 5; i++) results.push((await store.apply([rule], T0)).allowed);
    expect(results).toEqual([true, true, true, false, false]); // the limit still holds, locally
    expect(store.kind()).toBe('memory-fallback');
    const degradations = () => logs.lines.filter((l) => l.includes('local in-memory fallback')).length;
    expect(degradations()).toBe(1);

    server = await startRedisServer(port);
    await until(() => store.kind() === 'redis');
    expect(logs.text).toContain('shared through redis again');
    const onRedis = await store.apply([rule], T0);
    expect(onRedis.outcomes[0]!.remaining).toBe(2); // a fresh, shared bucket
    expect(await redis.exists('fb:fallback-test')).toBe(1);

    await server.kill();
    for (let i = 0; i < 20; i++) expect((await store.apply([rule], T0 + 60_000)).outcomes).toHaveLength(1);
    expect(store.kind()).toBe('memory-fallback');
    expect(degradations()).toBe(2); // once per outage, not per request
    expect(logs.lines.filter((l) => l.includes('"redis connection problem"')).length).toBeLessThanOrEqual(2);

    server = await startRedisServer(port);
    await until(() => store.kind() === 'redis');
    expect((await store.apply([rule], T0 + 60_000)).allowed).toBe(true);
  });
});
