import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { ClassifierBackend, ClassifierScores, ClassifierType } from '../backend';
import { BackendError, describeError, isBackendError } from './backend-errors';
import { CircuitBreaker, type BreakerSnapshot, type Permit } from './circuit-breaker';
import { LruCache } from './lru-cache';
import { Semaphore } from './semaphore';

/**
 * Wraps an external backend with, in call order:
 *   1. an LRU cache of successful verdicts keyed by the SHA-256 of the text (failures are never cached);
 *   2. single-flight: identical texts in flight share one backend call (the router asks per type and per
 *      view, so the same window arrives several times at once);
 *   3. a circuit breaker (circuit-breaker.ts): while open, calls fail fast without touching the backend;
 *   4. bounded concurrency: `maxConcurrency` calls in flight, `maxQueue` waiting, beyond that `overloaded`;
 *   5. a per-call timeout combined with the callers' signals (AbortSignal.any). The shared call is
 *      cancelled when its timeout expires or when every caller waiting for it has given up.
 * A backend failure, a timeout, a malformed answer, and a call abandoned by its callers after it was sent
 * (the backend did not answer within the request's deadline) count as breaker failures. A full queue, an
 * open circuit and a caller that gives up before the call is sent do not. Scores are checked (every type
 * of the backend present, a number in 0..1) before they are returned or cached.
 */

export interface ResilienceOptions {
  timeoutMs: number;
  maxConcurrency: number;
  maxQueue: number;
  /** 0 disables the cache. */
  cacheSize: number;
  cacheTtlMs: number;
  breakerFailures: number;
  breakerCooldownMs: number;
  /** Failure-ratio window of the breaker (defaults in circuit-breaker.ts). */
  breakerWindow?: number;
  breakerFailureRatio?: number;
  breakerMinCalls?: number;
  /** Clock for the breaker and the cache TTL (tests). */
  now?: () => number;
}

const LATENCY_BUCKETS_MS = [10, 25, 50, 100, 250, 500, 1000, 2500, 5000] as const;

export interface BackendStats {
  name: string;
  /** classify() calls. */
  calls: number;
  cacheHits: number;
  /** Calls that joined an identical call already in flight. */
  coalesced: number;
  /** Requests sent to the backend. */
  backendCalls: number;
  successes: number;
  /** Backend calls that failed, including timeouts and malformed answers. */
  failures: number;
  timeouts: number;
  malformed: number;
  /** Refused because the queue was full. */
  overloaded: number;
  /** Refused because the circuit was open. */
  shortCircuited: number;
  inFlight: number;
  queued: number;
  cacheEntries: number;
  breaker: BreakerSnapshot;
  /** Durations of backend calls (from slot acquired to answer), cumulative buckets `le` in ms. */
  latencyMs: { count: number; sum: number; max: number; buckets: Array<{ le: number; count: number }> };
}

type Counters = Omit<BackendStats, 'name' | 'inFlight' | 'queued' | 'cacheEntries' | 'breaker' | 'latencyMs'>;

interface Flight {
  promise: Promise<ClassifierScores>;
  waiters: number;
  settled: boolean;
  /** Every caller left: cancel the call, and let later callers start a fresh one. */
  abandon(): void;
}

export class ResilientBackend implements ClassifierBackend {
  readonly name: string;
  readonly types: readonly ClassifierType[];
  private readonly cache: LruCache<ClassifierScores>;
  private readonly breaker: CircuitBreaker;
  private readonly semaphore: Semaphore;
  private readonly inflight = new Map<string, Flight>();
  private readonly counters: Counters = {
    calls: 0, cacheHits: 0, coalesced: 0, backendCalls: 0, successes: 0, failures: 0, timeouts: 0, malformed: 0,
    overloaded: 0, shortCircuited: 0,
  };
  private readonly latency = { count: 0, sum: 0, max: 0, buckets: LATENCY_BUCKETS_MS.map(() => 0) };

  constructor(
    private readonly inner: ClassifierBackend,
    private readonly options: ResilienceOptions,
  ) {
    if (!Number.isInteger(options.timeoutMs) || options.timeoutMs < 1) throw new Error('timeoutMs must be a positive integer');
    this.name = inner.name;
    this.types = inner.types;
    this.cache = new LruCache(options.cacheSize, options.cacheTtlMs, options.now);
    this.semaphore = new Semaphore(options.maxConcurrency, options.maxQueue, inner.name);
    this.breaker = new CircuitBreaker({
      failureThreshold: options.breakerFailures,
      cooldownMs: options.breakerCooldownMs,
      windowSize: options.breakerWindow,
      failureRatio: options.breakerFailureRatio,
      minCalls: options.breakerMinCalls,
      now: options.now,
    });
  }

  async classify(text: string, signal: AbortSignal): Promise<ClassifierScores> {
    this.counters.calls++;
    if (signal.aborted) throw abortReason(signal, this.name);
    const key = createHash('sha256').update(text, 'utf8').digest('hex');
    const cached = this.cache.get(key);
    if (cached) {
      this.counters.cacheHits++;
      return { ...cached };
    }
    let flight = this.inflight.get(key);
    if (flight) this.counters.coalesced++;
    else flight = this.startFlight(key, text);
    return join(flight, signal, this.name);
  }

  stats(): BackendStats {
    let cumulative = 0;
    const buckets = LATENCY_BUCKETS_MS.map((le, i) => ({ le, count: (cumulative += this.latency.buckets[i] as number) }));
    return {
      name: this.name,
      ...this.counters,
      inFlight: this.semaphore.inUse,
      queued: this.semaphore.waiting,
      cacheEntries: this.cache.size,
      breaker: this.breaker.snapshot(),
      latencyMs: { count: this.latency.count, sum: round(this.latency.sum), max: round(this.latency.max), buckets },
    };
  }

  private startFlight(key: string, text: string): Flight {
    const permit = this.breaker.tryAcquire();
    if (!permit) {
      this.counters.shortCircuited++;
      const retry = Math.ceil(this.breaker.snapshot().retryInMs / 1000);
      throw new BackendError('circuit_open', `${this.name}: circuit open after repeated failures (next attempt in ${retry} s)`);
    }
    const controller = new AbortController();
    const flight: Flight = {
      waiters: 0,
      settled: false,
      promise: Promise.resolve({}),
      abandon: () => {
        if (this.inflight.get(key) === flight) this.inflight.delete(key);
        controller.abort(new BackendError('aborted', `${this.name}: every caller gave up`));
      },
    };
    flight.promise = this.execute(text, key, permit, controller.signal).finally(() => {
      flight.settled = true;
      if (this.inflight.get(key) === flight) this.inflight.delete(key);
    });
    flight.promise.catch(() => undefined); // every caller may have left; the rejection is still handled
    this.inflight.set(key, flight);
    return flight;
  }

  private async execute(text: string, key: string, permit: Exclude<Permit, null>, callers: AbortSignal): Promise<ClassifierScores> {
    const timeout = new AbortController();
    const { timeoutMs } = this.options;
    const timer = setTimeout(() => timeout.abort(new BackendError('timeout', `${this.name}: no answer within ${timeoutMs} ms`)), timeoutMs);
    const signal = AbortSignal.any([callers, timeout.signal]);
    let release: () => void;
    try {
      release = await this.semaphore.acquire(signal);
      if (signal.aborted) {
        // Granted in the same turn as the deadline passed: give the slot back unused.
        release();
        throw signal.reason;
      }
    } catch (err) {
      clearTimeout(timer);
      this.breaker.onAbandon(permit);
      if (isBackendError(err) && err.kind === 'overloaded') this.counters.overloaded++;
      if (isBackendError(err) && err.kind === 'timeout') this.counters.timeouts++;
      throw err;
    }
    this.counters.backendCalls++;
    const started = performance.now();
    try {
      const scores = checkScores(await this.inner.classify(text, signal), this.types, this.name);
      this.counters.successes++;
      this.breaker.onSuccess(permit);
      this.cache.set(key, scores);
      return scores;
    } catch (err) {
      const failure = this.toFailure(err, timeout.signal, callers);
      this.counters.failures++;
      if (failure.kind === 'timeout') this.counters.timeouts++;
      if (failure.kind === 'malformed') this.counters.malformed++;
      this.breaker.onFailure(permit);
      throw failure;
    } finally {
      clearTimeout(timer);
      release();
      this.observe(performance.now() - started);
    }
  }

  private toFailure(err: unknown, timeout: AbortSignal, callers: AbortSignal): BackendError {
    if (timeout.aborted) return timeout.reason as BackendError;
    if (callers.aborted) return new BackendError('timeout', `${this.name}: no answer before the request's deadline`);
    if (isBackendError(err)) return err;
    return new BackendError('transport', `${this.name}: ${describeError(err)}`, { cause: err });
  }

  private observe(ms: number): void {
    this.latency.count++;
    this.latency.sum += ms;
    this.latency.max = Math.max(this.latency.max, ms);
    const i = LATENCY_BUCKETS_MS.findIndex((le) => ms <= le);
    if (i >= 0) this.latency.buckets[i] = (this.latency.buckets[i] as number) + 1;
  }
}

/** Waits for a shared flight on behalf of one caller; the caller leaving never cancels it for the others. */
function join(flight: Flight, signal: AbortSignal, name: string): Promise<ClassifierScores> {
  flight.waiters++;
  return new Promise<ClassifierScores>((resolve, reject) => {
    let done = false;
    const leave = () => {
      if (done) return;
      done = true;
      signal.removeEventListener('abort', onAbort);
      flight.waiters--;
    };
    const onAbort = () => {
      leave();
      if (flight.waiters === 0 && !flight.settled) flight.abandon();
      reject(abortReason(signal, name));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    flight.promise.then(
      (scores) => {
        leave();
        resolve({ ...scores });
      },
      (err: unknown) => {
        leave();
        reject(err);
      },
    );
  });
}

function checkScores(scores: ClassifierScores, types: readonly ClassifierType[], name: string): ClassifierScores {
  const out: ClassifierScores = {};
  for (const type of types) {
    const v = scores[type];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1) {
      throw new BackendError('malformed', `${name}: no score in 0..1 for ${type}`);
    }
    out[type] = v;
  }
  return out;
}

function abortReason(signal: AbortSignal, name: string): Error {
  return signal.reason instanceof Error ? signal.reason : new BackendError('aborted', `${name}: call aborted`);
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
