import { createKeepAliveAgent } from '../../../../src/detection/classifiers/backends/http-json';
import { HttpClassifierBackend } from '../../../../src/detection/classifiers/backends/http-classifier-backend';
import { OpenAiModerationBackend } from '../../../../src/detection/classifiers/backends/openai-moderation-backend';
import { ResilientBackend, type ResilienceOptions } from '../../../../src/detection/classifiers/backends/resilient-backend';
import { startFakeModeration, type FakeModeration } from '../../../fakes/fake-moderation';
import { startFakeTei, type FakeTei } from '../../../fakes/fake-tei';

describe('resilient backend: timeout, breaker, cache, concurrency against real fakes', () => {
  let fake: FakeModeration;
  let tei: FakeTei;
  const agent = createKeepAliveAgent({ connections: 16 });
  let clock = 0;
  const signal = () => new AbortController().signal;
  const settle = <T>(p: Promise<T>) => p.then((value) => ({ value, error: undefined }), (error: Error) => ({ value: undefined, error }));

  beforeAll(async () => {
    fake = await startFakeModeration();
    tei = await startFakeTei();
  });
  afterAll(async () => {
    await fake.close();
    await tei.close();
    await agent.close();
  });
  beforeEach(() => {
    clock = 1_000_000;
    fake.mode = 'ok';
    fake.delayMs = 0;
    fake.received.length = 0;
    fake.maxActive = 0;
    fake.scores = () => ({ violence: 0.8 });
    tei.mode = 'ok';
    tei.received.length = 0;
  });

  // A generous per-call budget unless a test is about the timeout: backends that answer after 50–100 ms must not
  // read as timeouts on a loaded CI machine (a 150 ms budget did so once in engine-fail-mode.test.ts).
  const options = (o: Partial<ResilienceOptions> = {}): ResilienceOptions => ({
    timeoutMs: 5_000,
    maxConcurrency: 4,
    maxQueue: 8,
    cacheSize: 100,
    cacheTtlMs: 60_000,
    breakerFailures: 3,
    breakerCooldownMs: 10_000,
    now: () => clock,
    ...o,
  });
  const moderation = (o: Partial<ResilienceOptions> = {}) =>
    new ResilientBackend(
      new OpenAiModerationBackend({ baseUrl: fake.url, model: 'omni-moderation-latest', types: ['moderated_content/violence'], dispatcher: agent }),
      options(o),
    );

  describe('timeout', () => {
    it('a hanging backend is a timeout error within the per-call budget', async () => {
      fake.mode = 'hang';
      const b = moderation({ timeoutMs: 150 });
      const started = Date.now();
      const err = (await b.classify('x', signal()).catch((e: unknown) => e)) as Error;
      const took = Date.now() - started;
      expect(err).toMatchObject({ name: 'BackendError', kind: 'timeout', message: 'openai-moderation: no answer within 150 ms' });
      expect(took).toBeGreaterThanOrEqual(140);
      expect(took).toBeLessThan(5000); // the 150 ms budget, with room for a loaded machine
      expect(fake.received).toHaveLength(1); // it really was sent
      expect(b.stats()).toMatchObject({ timeouts: 1, failures: 1, backendCalls: 1, successes: 0 });
    });

    it("the caller's signal aborts the call at once (AbortSignal.any of caller and timeout)", async () => {
      tei.mode = 'hang';
      const b = new ResilientBackend(
        new HttpClassifierBackend({ baseUrl: tei.url, labels: new Map([['MALICIOUS', 'prompt_attack']]), dispatcher: agent }),
        options({ timeoutMs: 10_000 }),
      );
      const controller = new AbortController();
      const reason = new Error('request deadline');
      setTimeout(() => controller.abort(reason), 50);
      const started = Date.now();
      await expect(b.classify('x', controller.signal)).rejects.toBe(reason);
      expect(Date.now() - started).toBeLessThan(5000); // the caller's 50 ms abort, not the 10 s budget
      // The call had been sent and was abandoned unanswered: the breaker counts it as a timeout.
      await new Promise((r) => setTimeout(r, 20));
      expect(b.stats()).toMatchObject({ failures: 1, timeouts: 1, inFlight: 0 });
    });

    it('an already aborted signal never reaches the backend', async () => {
      const b = moderation();
      const controller = new AbortController();
      controller.abort(new Error('gone'));
      await expect(b.classify('x', controller.signal)).rejects.toThrow('gone');
      expect(fake.received).toHaveLength(0);
    });
  });

  describe('circuit breaker', () => {
    it('opens after N consecutive failures, fails fast while open, then half-open lets exactly one probe through', async () => {
      fake.mode = 'http-500';
      const b = moderation({ breakerFailures: 3, breakerCooldownMs: 10_000 });
      for (let i = 0; i < 3; i++) await expect(b.classify(`t${i}`, signal())).rejects.toMatchObject({ kind: 'http_status' });
      expect(b.stats().breaker).toMatchObject({ state: 'open', opens: 1 });
      expect(fake.received).toHaveLength(3);

      // Open: fail fast, the backend is not called.
      await expect(b.classify('t3', signal())).rejects.toMatchObject({
        kind: 'circuit_open',
        message: 'openai-moderation: circuit open after repeated failures (next attempt in 10 s)',
      });
      expect(fake.received).toHaveLength(3);
      expect(b.stats().shortCircuited).toBe(1);

      // Cool-down over: half-open. The backend has recovered; one probe goes through, a concurrent call fails fast.
      clock += 10_000;
      expect(b.stats().breaker.state).toBe('half_open');
      fake.mode = 'ok';
      fake.delayMs = 50;
      const probe = b.classify('probe', signal());
      await expect(b.classify('other', signal())).rejects.toMatchObject({ kind: 'circuit_open' });
      expect(await probe).toEqual({ 'moderated_content/violence': 0.8 });
      expect(fake.received.map((r) => r.body.input)).toEqual(['t0', 't1', 't2', 'probe']);

      // Probe succeeded: closed again, calls flow.
      expect(b.stats().breaker).toMatchObject({ state: 'closed', consecutiveFailures: 0 });
      fake.delayMs = 0;
      await expect(b.classify('after', signal())).resolves.toEqual({ 'moderated_content/violence': 0.8 });
    });

    it('a failed probe opens the breaker again for another cool-down', async () => {
      fake.mode = 'http-500';
      const b = moderation({ breakerFailures: 2 });
      for (const t of ['a', 'b']) await b.classify(t, signal()).catch(() => undefined);
      clock += 10_000;
      await expect(b.classify('probe', signal())).rejects.toMatchObject({ kind: 'http_status' });
      expect(b.stats().breaker).toMatchObject({ state: 'open', opens: 2 });
      await expect(b.classify('c', signal())).rejects.toMatchObject({ kind: 'circuit_open' });
      expect(fake.received).toHaveLength(3);
    });

    it('opens on a failure ratio in the window even without N consecutive failures', async () => {
      const b = moderation({ breakerFailures: 100, breakerWindow: 10, breakerFailureRatio: 0.5, breakerMinCalls: 10 });
      // fail, ok, fail, ok … : never 2 failures in a row; the 11th call makes 5 failures in the last 10.
      for (let i = 0; i < 11; i++) {
        fake.mode = i % 2 === 0 ? 'http-500' : 'ok';
        await settle(b.classify(`r${i}`, signal()));
        if (i === 9) expect(b.stats().breaker.state).toBe('closed');
      }
      expect(b.stats().breaker).toMatchObject({ state: 'open', consecutiveFailures: 1 });
      fake.mode = 'ok';
      await expect(b.classify('next', signal())).rejects.toMatchObject({ kind: 'circuit_open' });
    });

    it('malformed answers count as failures too', async () => {
      fake.mode = 'out-of-range';
      const b = moderation({ breakerFailures: 2 });
      await expect(b.classify('a', signal())).rejects.toMatchObject({ kind: 'malformed' });
      await expect(b.classify('b', signal())).rejects.toMatchObject({ kind: 'malformed' });
      expect(b.stats()).toMatchObject({ malformed: 2, breaker: { state: 'open' } });
    });
  });

  describe('cache', () => {
    it('a second call with the same text does not reach the backend', async () => {
      const b = moderation();
      const first = await b.classify('same text', signal());
      const second = await b.classify('same text', signal());
      expect(second).toEqual(first);
      expect(fake.received).toHaveLength(1);
      expect(b.stats()).toMatchObject({ calls: 2, cacheHits: 1, backendCalls: 1, cacheEntries: 1 });
      await b.classify('other text', signal());
      expect(fake.received).toHaveLength(2);
    });

    it('a returned verdict is a copy: mutating it does not poison the cache', async () => {
      const b = moderation();
      const first = await b.classify('t', signal());
      first['moderated_content/violence'] = 0;
      expect(await b.classify('t', signal())).toEqual({ 'moderated_content/violence': 0.8 });
    });

    it('failures are never cached', async () => {
      const b = moderation();
      fake.mode = 'http-500';
      await expect(b.classify('t', signal())).rejects.toMatchObject({ kind: 'http_status' });
      fake.mode = 'ok';
      await expect(b.classify('t', signal())).resolves.toEqual({ 'moderated_content/violence': 0.8 });
      expect(fake.received).toHaveLength(2);
    });

    it('entries expire after the TTL and the least recently used is evicted beyond the size', async () => {
      const b = moderation({ cacheSize: 2, cacheTtlMs: 1000 });
      await b.classify('a', signal());
      await b.classify('b', signal());
      await b.classify('a', signal()); // hit; b is now least recently used
      await b.classify('c', signal()); // evicts b
      await b.classify('b', signal()); // miss
      expect(fake.received.map((r) => r.body.input)).toEqual(['a', 'b', 'c', 'b']);
      clock += 1000;
      await b.classify('b', signal()); // expired
      expect(fake.received).toHaveLength(5);
    });

    it('size 0 disables the cache', async () => {
      const b = moderation({ cacheSize: 0 });
      await b.classify('a', signal());
      await b.classify('a', signal());
      expect(fake.received).toHaveLength(2);
    });

    it('identical texts in flight share one backend call', async () => {
      fake.delayMs = 50;
      const b = moderation();
      const results = await Promise.all(Array.from({ length: 5 }, () => b.classify('same', signal())));
      expect(results.every((r) => r['moderated_content/violence'] === 0.8)).toBe(true);
      expect(fake.received).toHaveLength(1);
      expect(b.stats()).toMatchObject({ coalesced: 4, backendCalls: 1 });
    });

    it('one caller giving up does not cancel the shared call for the others', async () => {
      fake.delayMs = 80;
      const b = moderation();
      const leaving = new AbortController();
      const first = settle(b.classify('shared', leaving.signal));
      const second = b.classify('shared', signal());
      setTimeout(() => leaving.abort(new Error('left')), 20);
      expect((await first).error?.message).toBe('left');
      await expect(second).resolves.toEqual({ 'moderated_content/violence': 0.8 });
      expect(fake.received).toHaveLength(1);
    });
  });

  describe('bounded concurrency', () => {
    it('at most maxConcurrency calls in flight; queue full → overloaded at once', async () => {
      fake.delayMs = 100;
      const b = moderation({ maxConcurrency: 1, maxQueue: 1, timeoutMs: 2000 });
      const started = Date.now();
      const calls = ['a', 'b', 'c'].map((t) => settle(b.classify(t, signal())));
      const [a, bb, c] = await Promise.all(calls);
      expect(c?.error).toMatchObject({ kind: 'overloaded', message: 'openai-moderation: overloaded (1 calls in flight, 1 queued)' });
      expect(a?.value).toEqual({ 'moderated_content/violence': 0.8 });
      expect(bb?.value).toEqual({ 'moderated_content/violence': 0.8 });
      expect(fake.maxActive).toBe(1);
      expect(fake.received.map((r) => r.body.input)).toEqual(['a', 'b']);
      expect(Date.now() - started).toBeGreaterThanOrEqual(190); // b waited for a
      expect(b.stats()).toMatchObject({ overloaded: 1, failures: 0, breaker: { state: 'closed' } });
    });

    it('a queued caller that gives up leaves the queue: never sent, not a backend failure', async () => {
      fake.delayMs = 150;
      const b = moderation({ maxConcurrency: 1, maxQueue: 4, timeoutMs: 2000 });
      const leaving = new AbortController();
      const first = b.classify('a', signal());
      const second = settle(b.classify('b', leaving.signal));
      setTimeout(() => leaving.abort(new Error('request deadline')), 30);
      expect((await second).error?.message).toBe('request deadline');
      expect(b.stats()).toMatchObject({ inFlight: 1, queued: 0 });
      await expect(first).resolves.toEqual({ 'moderated_content/violence': 0.8 });
      expect(fake.received.map((r) => r.body.input)).toEqual(['a']);
      expect(b.stats()).toMatchObject({ backendCalls: 1, failures: 0, successes: 1 });
    });

    it('reports in-flight and queued counts and latency', async () => {
      fake.delayMs = 60;
      const b = moderation({ maxConcurrency: 2, maxQueue: 4 });
      const all = Promise.all(['a', 'b', 'c'].map((t) => b.classify(t, signal())));
      await new Promise((r) => setTimeout(r, 20));
      expect(b.stats()).toMatchObject({ inFlight: 2, queued: 1 });
      await all;
      const s = b.stats();
      expect(s).toMatchObject({ inFlight: 0, queued: 0, successes: 3 });
      expect(s.latencyMs.count).toBe(3);
      expect(s.latencyMs.max).toBeGreaterThanOrEqual(50);
      expect(s.latencyMs.buckets.at(-1)?.count).toBe(3);
    });
  });
});
