import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import type { BucketRule, LimitRule, LimitStore, WindowRule } from '../../../src/gateway/limits/limit-store';
import { MemoryLimitStore } from '../../../src/gateway/limits/memory-store';
import { RedisLimitStore } from '../../../src/gateway/limits/redis-store';

const TEST_REDIS_URL = process.env.TEST_REDIS_URL;
const T0 = Date.UTC(2025, 10, 20, 12, 0, 0);

const bucket = (over: Partial<BucketRule> = {}): BucketRule => ({ type: 'bucket', key: 'b', capacity: 3, perMinute: 3, cost: 1, mode: 'take', ...over });
const win = (over: Partial<WindowRule> = {}): WindowRule => ({ type: 'window', key: 'w', limit: 10, windowMs: 86_400_000, cost: 1, mode: 'take', ...over });

interface Target {
  name: string;
  make(): Promise<{ store: LimitStore; key: (k: string) => string; dispose(): Promise<void> }>;
}

const memoryTarget: Target = {
  name: 'memory',
  async make() {
    const store = new MemoryLimitStore();
    return { store, key: (k) => k, dispose: () => store.close() };
  },
};

/** A unique prefix per run; every key it created is deleted afterwards. */
async function redisFixture(url: string) {
  const prefix = `test:limits:${randomBytes(6).toString('hex')}:`;
  const clients: Redis[] = [];
  const client = () => {
    const c = new Redis(url, { enableAutoPipelining: true, maxRetriesPerRequest: 1 });
    clients.push(c);
    return c;
  };
  return {
    prefix,
    client,
    async dispose() {
      const admin = clients[0] ?? client();
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length > 0) await admin.del(...keys);
      await Promise.all(clients.map((c) => c.quit()));
    },
  };
}

const redisTarget: Target = {
  name: 'redis',
  async make() {
    const fx = await redisFixture(TEST_REDIS_URL!);
    const store = new RedisLimitStore(fx.client(), fx.prefix);
    return { store, key: (k) => k, dispose: () => fx.dispose() };
  },
};

const targets = TEST_REDIS_URL ? [memoryTarget, redisTarget] : [memoryTarget];
if (!TEST_REDIS_URL) process.stderr.write('[tests] TEST_REDIS_URL not set: Redis limit-store tests skipped\n');

describe.each(targets.map((t) => [t.name, t] as const))('limit store: %s', (_name, target) => {
  let store: LimitStore;
  let dispose: () => Promise<void>;
  beforeEach(async () => {
    const made = await target.make();
    store = made.store;
    dispose = made.dispose;
  });
  afterEach(async () => dispose());

  const take = (rules: LimitRule[], now = T0) => store.apply(rules, now);

  it('a token bucket starts full, allows exactly its capacity, then refuses with the time to the next token', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await take([bucket()]);
      expect(r.allowed).toBe(true);
      expect(r.outcomes[0]).toMatchObject({ allowed: true, remaining: 2 - i, retryAfterMs: 0 });
    }
    const over = await take([bucket()]);
    expect(over.allowed).toBe(false);
    expect(over.outcomes[0]).toEqual({ allowed: false, remaining: 0, resetMs: 60_000, retryAfterMs: 20_000 });
  });

  it('refills continuously at perMinute and never above capacity', async () => {
    for (let i = 0; i < 3; i++) await take([bucket()]);
    expect((await take([bucket()], T0 + 19_999)).allowed).toBe(false);
    expect((await take([bucket()], T0 + 20_000)).allowed).toBe(true);
    const later = await take([bucket({ mode: 'read' })], T0 + 10 * 60_000);
    expect(later.outcomes[0]).toMatchObject({ remaining: 3, resetMs: 0 });
  });

  it('burst: capacity above the rate allows a burst, then the steady rate', async () => {
    const rule = bucket({ capacity: 6, perMinute: 3 });
    const results = [];
    for (let i = 0; i < 7; i++) results.push((await take([rule])).allowed);
    expect(results).toEqual([true, true, true, true, true, true, false]);
    expect((await take([rule], T0 + 20_000)).allowed).toBe(true);
    expect((await take([rule], T0 + 20_000)).allowed).toBe(false);
  });

  it('is all-or-nothing: a refused rule leaves every other take untouched', async () => {
    const a = bucket({ key: 'a', capacity: 10, perMinute: 10 });
    const b = bucket({ key: 'b', capacity: 100, perMinute: 100, cost: 101 });
    const r = await take([a, b]);
    expect(r.allowed).toBe(false);
    expect(r.outcomes.map((o) => o.allowed)).toEqual([true, false]);
    expect((await take([{ ...a, mode: 'read' }])).outcomes[0]!.remaining).toBe(10);
  });

  it('peek needs one token and spends none; debit always applies and can go into debt', async () => {
    const rule = bucket({ capacity: 2, perMinute: 2 });
    expect((await take([{ ...rule, mode: 'peek' }])).outcomes[0]).toMatchObject({ allowed: true, remaining: 2 });
    await take([{ ...rule, mode: 'debit', cost: 5 }]);
    const peek = await take([{ ...rule, mode: 'peek' }]);
    expect(peek.outcomes[0]).toMatchObject({ allowed: false, remaining: -3, retryAfterMs: 120_000 });
    // Debt is paid back by the refill: -3 → 1 token takes 4 tokens × 30 s.
    expect((await take([{ ...rule, mode: 'peek' }], T0 + 119_999)).allowed).toBe(false);
    expect((await take([{ ...rule, mode: 'peek' }], T0 + 120_000)).allowed).toBe(true);
  });

  it('read never refuses and never writes', async () => {
    const rule = bucket({ capacity: 1, perMinute: 1, cost: 50, mode: 'read' });
    const r = await take([rule, bucket({ key: 'x' })]);
    expect(r.allowed).toBe(true);
    expect(r.outcomes[0]).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('pre is debited before the rule is evaluated, and is written even when the call is refused', async () => {
    const rule = bucket({ capacity: 10, perMinute: 10, cost: 3 });
    expect((await take([{ ...rule, pre: 7 }])).outcomes[0]).toMatchObject({ allowed: true, remaining: 0 });
    const refused = await take([{ ...rule, pre: 2 }]);
    expect(refused.outcomes[0]).toMatchObject({ allowed: false, remaining: -2 });
    expect((await take([{ ...rule, mode: 'read' }])).outcomes[0]!.remaining).toBe(-2);
    const w = win({ limit: 10, cost: 1 });
    expect((await take([{ ...w, mode: 'read', pre: 4 }])).outcomes[0]!.remaining).toBe(6);
    expect((await take([{ ...w, pre: 5 }])).outcomes[0]).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('a smaller capacity (policy change) applies at once', async () => {
    await take([bucket({ capacity: 100, perMinute: 100 })]);
    const r = await take([bucket({ capacity: 5, perMinute: 5 })]);
    expect(r.outcomes[0]!.remaining).toBe(4);
  });

  it('a fixed window counts within its window and starts over in the next (UTC day)', async () => {
    const rule = win({ limit: 10, cost: 4 });
    expect((await take([rule])).outcomes[0]).toMatchObject({ allowed: true, remaining: 6 });
    expect((await take([rule])).outcomes[0]).toMatchObject({ allowed: true, remaining: 2 });
    const over = await take([rule]);
    const toMidnight = Date.UTC(2025, 10, 21) - T0;
    expect(over.outcomes[0]).toEqual({ allowed: false, remaining: 2, resetMs: toMidnight, retryAfterMs: toMidnight });
    expect((await take([{ ...rule, cost: 2 }])).outcomes[0]).toMatchObject({ allowed: true, remaining: 0 });
    const nextDay = Date.UTC(2025, 10, 21, 0, 0, 0);
    expect((await take([rule], nextDay - 1)).allowed).toBe(false);
    expect((await take([rule], nextDay)).outcomes[0]).toMatchObject({ allowed: true, remaining: 6 });
  });

  it('window debit adds past the limit (after-the-fact accounting)', async () => {
    await take([win({ mode: 'debit', cost: 15 })]);
    expect((await take([win({ cost: 0 })])).allowed).toBe(false);
    expect((await take([win({ mode: 'read' })])).outcomes[0]!.remaining).toBe(-5);
  });
});

(TEST_REDIS_URL ? describe : describe.skip)('Redis store shared by two instances', () => {
  it('two clients on one Redis share a bucket exactly under concurrency', async () => {
    const fx = await redisFixture(TEST_REDIS_URL!);
    try {
      const a = new RedisLimitStore(fx.client(), fx.prefix);
      const b = new RedisLimitStore(fx.client(), fx.prefix);
      const rule = bucket({ key: 'shared', capacity: 25, perMinute: 25 });
      const calls = Array.from({ length: 60 }, (_, i) => (i % 2 === 0 ? a : b).apply([rule], T0));
      const results = await Promise.all(calls);
      expect(results.filter((r) => r.allowed)).toHaveLength(25);
      const day = win({ key: 'spend', limit: 1000, cost: 7 });
      const spends = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).apply([day], T0)));
      expect(spends.filter((r) => r.allowed)).toHaveLength(Math.floor(1000 / 7));
    } finally {
      await fx.dispose();
    }
  });
});
