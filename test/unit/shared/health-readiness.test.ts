import Fastify, { type FastifyInstance } from 'fastify';
import { DrainState, registerHealthRoute, type HealthProbe } from '../../../src/shared/http/health';

/** GET /health/ready's contract on a bare fastify app on port 0: bounded, cached, shared, drain-aware. */
describe('GET /health/live and /health/ready', () => {
  let app: FastifyInstance;
  afterEach(async () => {
    await app?.close();
  });

  let base = '';
  async function build(probes: Record<string, HealthProbe>, readiness: { cacheMs?: number; timeoutMs?: number; drain?: DrainState } = {}) {
    app = Fastify();
    registerHealthRoute(app, { service: 'gateway', probes, degradable: ['redis'], readiness });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  }
  const get = async (url: string) => {
    const res = await fetch(`${base}${url}`);
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };

  it('checks only the required dependencies: a degradable one that is down keeps it ready', async () => {
    await build({ database: async () => {}, detection: async () => {}, redis: async () => Promise.reject(new Error('redis down')) });
    const ready = await get('/health/ready');
    expect(ready).toEqual({ status: 200, json: { status: 'ready', service: 'gateway', checks: { database: expect.objectContaining({ status: 'up' }), detection: expect.objectContaining({ status: 'up' }) } } });
    expect((await get('/health')).json).toMatchObject({ status: 'healthy', degraded: ['redis'] });
  });

  it('answers 503 within its budget when a check hangs, naming the dependency', async () => {
    await build({ database: () => new Promise<void>(() => {}), detection: async () => {} }, { timeoutMs: 50, cacheMs: 0 });
    const ready = await get('/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.json).toMatchObject({ status: 'not_ready', down: ['database'], reason: 'database: no answer within 50 ms', checks: { detection: { status: 'up' } } });
    expect((await get('/health/live')).status).toBe(200);
  });

  it('shares one check among concurrent calls and reuses its result for cacheMs', async () => {
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    await build({ database: async () => { calls += 1; await gate; }, detection: async () => {} }, { cacheMs: 60_000 });
    const pending = Promise.all([get('/health/ready'), get('/health/ready'), get('/health/ready')]);
    await new Promise((r) => setImmediate(r));
    release();
    expect((await pending).map((r) => r.status)).toEqual([200, 200, 200]);
    expect((await get('/health/ready')).status).toBe(200);
    expect(calls).toBe(1);
  });

  it('checks again on every call with cacheMs 0', async () => {
    let healthy = true;
    await build({ database: async () => { if (!healthy) throw new Error('connection refused'); }, detection: async () => {} }, { cacheMs: 0 });
    expect((await get('/health/ready')).status).toBe(200);
    healthy = false;
    expect((await get('/health/ready')).json).toMatchObject({ status: 'not_ready', reason: 'database: connection refused' });
  });

  it('answers 503 draining once the drain began, whatever the dependencies say; live stays 200', async () => {
    const drain = new DrainState();
    await build({ database: async () => {}, detection: async () => {} }, { drain });
    expect((await get('/health/ready')).status).toBe(200);
    drain.begin();
    expect(await get('/health/ready')).toEqual({ status: 503, json: { status: 'draining', reason: 'shutting down', service: 'gateway' } });
    expect((await get('/health/live')).json).toMatchObject({ status: 'live', service: 'gateway' });
  });
});
