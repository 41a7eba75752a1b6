import { pgliteTarget } from '../helpers/databases';
import { freePort, HAS_REDIS_SERVER, startRedisServer, type ThrowawayRedis } from '../helpers/redis-server';
import { postJson, startTestServices, type TestServices } from '../helpers/services';
import { TcpProxy } from '../helpers/tcp-proxy';

/**
 * Redis behind a TCP proxy (the real server keeps running): stopped (connections cut, then refused)
 * and stalled (connections open, nothing answered). Either way traffic keeps flowing on the
 * per-instance in-memory fallback (fail open on sharing, never on limiting), a stalled Redis costs a
 * request at most the client's command timeout (1 s) once, /health stays 200 with `degraded`, and the
 * limits return to Redis by themselves when it is back.
 */
const REDIS_URL = process.env.TEST_REDIS_URL;
const onRedis = REDIS_URL || HAS_REDIS_SERVER ? describe : describe.skip;
/** The client's command timeout (1 s) plus a wide margin for a loaded machine. */
const STALL_BOUND_MS = 1000 + 2500;

onRedis('Redis stopped or stalled (TCP proxy in front of a real Redis)', () => {
  let throwaway: ThrowawayRedis | undefined;
  let proxy: TcpProxy;
  let svc: TestServices;

  const health = async () => (await (await fetch(`${svc.gatewayUrl}/health`)).json()) as Record<string, any>;
  const detect = async () => {
    const started = performance.now();
    const res = await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'hello' }, { authorization: `Bearer ${svc.apiKey}` });
    return { status: res.status, ms: performance.now() - started };
  };
  /** Polls with traffic: after a stall (no reconnect) it is a later limit call succeeding that switches back. */
  const until = async (store: string) => {
    const deadline = Date.now() + 10000;
    while ((await health()).limits?.store !== store && Date.now() < deadline) {
      expect((await detect()).status).toBe(200);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await health()).limits.store).toBe(store);
  };

  beforeAll(async () => {
    const target = new URL(REDIS_URL ?? (throwaway = await startRedisServer(await freePort())).url);
    proxy = new TcpProxy(target.hostname, Number(target.port || 6379));
    await proxy.start();
    svc = await startTestServices(pgliteTarget, {
      services: ['detection', 'gateway'],
      env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}`, LIMITS_KEY_PREFIX: `test:faults:${Date.now()}:` },
    });
  });
  afterAll(async () => {
    await svc?.dispose();
    await proxy?.stop();
    await throwaway?.kill();
  });

  it('stopped: requests keep flowing on the local fallback, /health 200 degraded; back on Redis when it returns', async () => {
    expect((await detect()).status).toBe(200);
    await until('redis');
    await proxy.stop();
    for (let i = 0; i < 5; i++) expect((await detect()).status).toBe(200);
    const down = await health();
    expect(down).toMatchObject({ status: 'healthy', degraded: ['redis'], checks: { redis: { status: 'down' } }, limits: { store: 'memory-fallback' } });
    await proxy.start();
    await until('redis');
    expect((await detect()).status).toBe(200);
  }, 60000);

  it('stalled: a request waits at most the command timeout, then the fallback answers at once; recovers when unstalled', async () => {
    await until('redis');
    proxy.stall();
    try {
      const first = await detect();
      expect(first.status).toBe(200);
      expect(first.ms).toBeLessThan(STALL_BOUND_MS);
      const next = await Promise.all(Array.from({ length: 5 }, () => detect()));
      for (const r of next) {
        expect(r.status).toBe(200);
        expect(r.ms).toBeLessThan(STALL_BOUND_MS);
      }
      expect((await health()).limits.store).toBe('memory-fallback');
    } finally {
      proxy.unstall();
    }
    await until('redis');
  }, 60000);
});
