import { LimitsService, type LimitsSettings } from '../../../src/gateway/limits/limits.service';
import { MemoryLimitStore } from '../../../src/gateway/limits/memory-store';
import { costMicroCents, DEFAULT_PRICE, priceOf } from '../../../src/gateway/limits/prices';
import { DEFAULT_RATE_LIMITS, type RateLimits } from '../../../src/shared/policy';

const KEY_A = `svc_sk_${'A'.repeat(40)}`;
const KEY_B = `svc_sk_${'B'.repeat(40)}`;

function setup(settings: Partial<LimitsSettings> = {}) {
  let now = Date.UTC(2025, 10, 20, 23, 59, 0);
  const store = new MemoryLimitStore();
  const limits = new LimitsService({
    store,
    settings: { platformTrafficRpm: 1000, platformManagementRpm: 1000, authFailuresPerMinute: 3, ...settings },
    now: () => now,
  });
  return {
    limits,
    advance: (ms: number) => {
      now += ms;
    },
    at: (ms: number) => {
      now = ms;
    },
    dispose: () => store.close(),
  };
}

const policy = (over: Partial<RateLimits> = {}): RateLimits => ({ ...DEFAULT_RATE_LIMITS, rate_limits_enabled: true, ...over });

describe('LimitsService', () => {
  let t: ReturnType<typeof setup>;
  afterEach(() => t.dispose());

  describe('requests_per_minute (token bucket, capacity rate × burst_multiplier)', () => {
    const admit = (rl: RateLimits, project = 'p1') => t.limits.admitRequest({ key: KEY_A, projectId: project, limits: rl, model: 'gpt-4o', inputTokens: 10 });

    it('allows rate × burst at once, then 429 with the time to the next request', async () => {
      t = setup();
      const rl = policy({ requests_per_minute: 3, burst_multiplier: 2 });
      for (let i = 0; i < 6; i++) {
        const a = await admit(rl);
        expect(a.error).toBeUndefined();
        expect(a.requests).toEqual({ limit: 6, remaining: 5 - i, resetSeconds: (i + 1) * 20 });
      }
      const over = await admit(rl);
      expect(over.error).toMatchObject({
        type: 'rate_limit', status: 429, code: 'rate_limit_exceeded',
        details: { limit: 3, window: 'minute', retry_after: 20, scope: 'requests_per_minute' },
      });
      expect(over.requests.remaining).toBe(0);
      t.advance(20_000);
      expect((await admit(rl)).error).toBeUndefined();
      expect((await admit(rl)).error).toBeDefined();
    });

    it('burst_multiplier 1: exactly the rate (just under, at, just over)', async () => {
      t = setup();
      const rl = policy({ requests_per_minute: 2, burst_multiplier: 1 });
      expect((await admit(rl)).error).toBeUndefined();
      expect((await admit(rl)).error).toBeUndefined();
      expect((await admit(rl)).error).toBeDefined();
    });

    it('is per project', async () => {
      t = setup();
      const rl = policy({ requests_per_minute: 1, burst_multiplier: 1 });
      expect((await admit(rl, 'p1')).error).toBeUndefined();
      expect((await admit(rl, 'p1')).error).toBeDefined();
      expect((await admit(rl, 'p2')).error).toBeUndefined();
    });

    it('an invalid input still counts as a request but takes no tokens', async () => {
      t = setup();
      const rl = policy({ requests_per_minute: 2, burst_multiplier: 1, tokens_per_minute: 100 });
      const a = await t.limits.admitRequest({ key: KEY_A, projectId: 'p', limits: rl, model: 'gpt-4o', inputTokens: null });
      expect(a.error).toBeUndefined();
      expect(a.requests.remaining).toBe(1);
      expect(a.tokens.remaining).toBe(100);
    });
  });

  describe('tokens_per_minute (input before the call, output after it)', () => {
    const admit = (rl: RateLimits, inputTokens: number) => t.limits.admitRequest({ key: KEY_A, projectId: 'p', limits: rl, model: 'gpt-4o', inputTokens });

    it('takes input tokens up to the limit exactly; one more is 429 and spends nothing', async () => {
      t = setup();
      const rl = policy({ tokens_per_minute: 100, requests_per_minute: 100 });
      expect((await admit(rl, 60)).tokens).toEqual({ limit: 100, remaining: 40, resetSeconds: 36 });
      expect((await admit(rl, 40)).error).toBeUndefined(); // exactly at the limit
      const over = await admit(rl, 1);
      expect(over.error).toMatchObject({ status: 429, details: { scope: 'tokens_per_minute', limit: 100, window: 'minute', retry_after: 1 } });
      expect(over.requests.remaining).toBe(198); // the refused request was not counted
    });

    it('output tokens are charged after the response and can put the budget in debt', async () => {
      t = setup();
      const rl = policy({ tokens_per_minute: 100 });
      await admit(rl, 10);
      await t.limits.settle({ projectId: 'p', limits: rl, model: 'gpt-4o', outputTokens: 150 });
      const next = await admit(rl, 1);
      expect(next.error).toMatchObject({ details: { scope: 'tokens_per_minute', retry_after: 37 } }); // 61 tokens of debt + 1 at 100/min
      expect(next.tokens.remaining).toBe(0);
      t.advance(37_000);
      expect((await admit(rl, 1)).error).toBeUndefined();
    });

    it('output charges not carried by a next request are written within 50 ms, in one batch', async () => {
      t = setup();
      const rl = policy({ tokens_per_minute: 100, cost_limit_per_day_cents: 1 });
      await t.limits.settle({ projectId: 'p', limits: rl, model: 'gpt-4o', outputTokens: 40 });
      await t.limits.settle({ projectId: 'p', limits: rl, model: 'gpt-4o', outputTokens: 20 });
      await t.limits.settle({ projectId: 'q', limits: rl, model: 'gpt-4o', outputTokens: 10 });
      await new Promise((r) => setTimeout(r, 120));
      // A read that carries nothing: the charges are already in the store.
      const p = await t.limits.admitRequest({ key: KEY_A, projectId: 'p', limits: rl, model: 'gpt-4o', inputTokens: null });
      expect(p.tokens.remaining).toBe(40);
      const q = await t.limits.admitRequest({ key: KEY_A, projectId: 'q', limits: rl, model: 'gpt-4o', inputTokens: null });
      expect(q.tokens.remaining).toBe(90);
      await t.limits.settle({ projectId: 'p', limits: rl, model: 'gpt-4o', outputTokens: 5 });
      await t.limits.close(); // shutdown writes what is pending
      expect((await t.limits.admitRequest({ key: KEY_A, projectId: 'p', limits: rl, model: 'gpt-4o', inputTokens: null })).tokens.remaining).toBe(35);
    });

    it('a request larger than the whole per-minute budget is refused outright', async () => {
      t = setup();
      const rl = policy({ tokens_per_minute: 100 });
      const a = await admit(rl, 101);
      expect(a.error).toMatchObject({ details: { scope: 'tokens_per_minute', retry_after: 60 } });
      expect(a.error?.message).toMatch(/Request too large/);
      expect(a.tokens.remaining).toBe(100);
    });
  });

  describe('cost_limit_per_day_cents (UTC day)', () => {
    it('charges input before and output after, refuses past the cap, and starts over at UTC midnight', async () => {
      t = setup();
      t.at(Date.UTC(2025, 10, 20, 23, 58, 0));
      // gpt-4o: $2.50 / $10 per 1M tokens → 100 000 input tokens = 25 ¢, 10 000 output tokens = 10 ¢.
      const rl = policy({ cost_limit_per_day_cents: 50, tokens_per_minute: 10_000_000, max_input_tokens: 1_000_000 });
      const admit = (inputTokens: number) => t.limits.admitRequest({ key: KEY_A, projectId: 'p', limits: rl, model: 'gpt-4o', inputTokens });
      expect((await admit(100_000)).error).toBeUndefined(); // 25 ¢
      await t.limits.settle({ projectId: 'p', limits: rl, model: 'gpt-4o', outputTokens: 15_000 }); // +15 ¢ = 40 ¢
      expect((await admit(40_000)).error).toBeUndefined(); // +10 ¢ = exactly 50 ¢: at the cap is allowed
      const over = await admit(4); // 0.001 ¢ more
      expect(over.error).toMatchObject({ status: 429, code: 'rate_limit_exceeded', details: { scope: 'cost_limit_per_day_cents', limit: 50, window: 'day', retry_after: 120 } });
      t.at(Date.UTC(2025, 10, 20, 23, 59, 59, 999));
      expect((await admit(4)).error).toBeDefined();
      t.at(Date.UTC(2025, 10, 21, 0, 0, 0)); // a new UTC day
      expect((await admit(100_000)).error).toBeUndefined();
    });

    it('0 disables the cap; /v1/detect (no model) is never charged', async () => {
      t = setup();
      const off = policy({ cost_limit_per_day_cents: 0, tokens_per_minute: 1e9, max_input_tokens: 1e7 });
      for (let i = 0; i < 3; i++) expect((await t.limits.admitRequest({ key: KEY_A, projectId: 'p', limits: off, model: 'o1-pro', inputTokens: 1e7 })).error).toBeUndefined();
      const cap = policy({ cost_limit_per_day_cents: 1, tokens_per_minute: 1e9 });
      expect((await t.limits.admitRequest({ key: KEY_A, projectId: 'p', limits: cap, model: null, inputTokens: 1e7 })).error).toBeUndefined();
    });
  });

  describe('platform limits (per key) and failed authentications (per address)', () => {
    it('traffic and management have separate per-key buckets; policy checks share the traffic one', async () => {
      t = setup({ platformTrafficRpm: 5, platformManagementRpm: 2 });
      const rl = policy({ requests_per_minute: 100, burst_multiplier: 1 });
      for (let i = 0; i < 4; i++) expect((await t.limits.admitPlatform('traffic', KEY_A)).error).toBeUndefined();
      const viaPolicy = await t.limits.admitRequest({ key: KEY_A, projectId: 'p', limits: rl, model: 'gpt-4o', inputTokens: 1 });
      expect(viaPolicy.error).toBeUndefined();
      expect(viaPolicy.platform.view).toEqual({ limit: 5, remaining: 0, resetSeconds: 60 });
      const over = await t.limits.admitPlatform('traffic', KEY_A);
      expect(over.error).toMatchObject({ status: 429, details: { scope: 'platform', limit: 5, window: 'minute', retry_after: 12 } });
      expect(over.view).toEqual({ limit: 5, remaining: 0, resetSeconds: 60 });
      const overViaPolicy = await t.limits.admitRequest({ key: KEY_A, projectId: 'p', limits: rl, model: 'gpt-4o', inputTokens: 1 });
      expect(overViaPolicy.error).toMatchObject({ details: { scope: 'platform' } });
      expect(overViaPolicy.requests.remaining).toBe(99); // refused as a whole: the policy bucket was not charged
      expect((await t.limits.admitPlatform('traffic', KEY_B)).error).toBeUndefined();
      expect((await t.limits.admitPlatform('management', KEY_A)).error).toBeUndefined();
      expect((await t.limits.admitPlatform('management', KEY_A)).error).toBeUndefined();
      expect((await t.limits.admitPlatform('management', KEY_A)).error).toBeDefined();
    });

    it('an address is blocked once its failures reach the limit, for any key that has not just authenticated', async () => {
      t = setup();
      const ip = '10.0.0.9';
      t.limits.recordAuthSuccess(KEY_B);
      for (let i = 0; i < 2; i++) await t.limits.recordAuthFailure(ip, undefined);
      expect(await t.limits.checkAddress(ip, KEY_A)).toBeUndefined(); // 2 failures: under the limit
      await t.limits.recordAuthFailure(ip, undefined);
      const blocked = await t.limits.checkAddress(ip, KEY_A); // 3 failures: at the limit
      expect(blocked).toMatchObject({ status: 429, details: { scope: 'auth_failures', limit: 3, window: 'minute', retry_after: 20 } });
      expect(await t.limits.checkAddress(ip, undefined)).toBeDefined();
      expect(await t.limits.checkAddress(ip, KEY_B)).toBeUndefined(); // authenticated a moment ago: not a guess
      expect(await t.limits.checkAddress('10.0.0.10', KEY_A)).toBeUndefined();
      t.advance(20_000);
      expect(await t.limits.checkAddress(ip, KEY_A)).toBeUndefined();
      await t.limits.recordAuthFailure(ip, KEY_B); // a known key that fails (revoked) is known no more
      t.advance(1);
      expect(await t.limits.checkAddress(ip, KEY_B)).toBeDefined();
    });

    it('a known key stays exempt for one minute', async () => {
      t = setup();
      for (let i = 0; i < 3; i++) await t.limits.recordAuthFailure('ip', undefined);
      t.limits.recordAuthSuccess(KEY_A);
      t.advance(59_999);
      for (let i = 0; i < 3; i++) await t.limits.recordAuthFailure('ip', undefined);
      expect(await t.limits.checkAddress('ip', KEY_A)).toBeUndefined();
      t.advance(1);
      expect(await t.limits.checkAddress('ip', KEY_A)).toBeDefined();
    });
  });

  it('reports its store', () => {
    t = setup();
    expect(t.limits.status()).toEqual({ store: 'memory' });
  });
});

describe('prices', () => {
  it.each([
    ['gpt-4o', 2.5, 10], ['gpt-4o-2024-08-06', 2.5, 10], ['gpt-4o-mini', 0.15, 0.6], ['gpt-4.1-mini', 0.4, 1.6], ['gpt-4', 30, 60],
    ['gpt-4-turbo', 10, 30], ['gpt-5-nano', 0.05, 0.4], ['o3-mini', 1.1, 4.4], ['o1', 15, 60], ['claude-sonnet-4-5-20250929', 3, 15],
    ['claude-opus-4-1', 15, 75], ['claude-opus-4-5', 5, 25], ['claude-3-5-haiku-latest', 0.8, 4], ['anthropic/claude-haiku-4-5', 1, 5],
    ['no-such-model', DEFAULT_PRICE.inputPerMillion, DEFAULT_PRICE.outputPerMillion],
  ])('%s costs $%s / $%s per 1M tokens', (model, input, output) => {
    expect(priceOf(model)).toEqual({ inputPerMillion: input, outputPerMillion: output });
  });

  it('computes exact integer micro-cents, rounded up', () => {
    expect(costMicroCents(1_000_000, 2.5)).toBe(250_000_000); // $2.50 = 250 ¢
    expect(costMicroCents(1, 0.15)).toBe(15);
    expect(costMicroCents(1, 0.075)).toBe(8); // 7.5 µ¢ rounded up
    expect(costMicroCents(3, 0.1)).toBe(30);
  });
});
