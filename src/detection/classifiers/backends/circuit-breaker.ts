/**
 * A circuit breaker per backend.
 *
 *   closed    → calls pass; opens after `failureThreshold` consecutive failures, or when at least
 *               `minCalls` of the last `windowSize` calls are recorded and the failure ratio reaches
 *               `failureRatio`.
 *   open      → calls fail fast (no backend call) for `cooldownMs`.
 *   half_open → after the cool-down, exactly one call (the probe) goes through; every other call fails
 *               fast while it runs. Probe success → closed (history cleared); failure → open again.
 */

export type BreakerState = 'closed' | 'open' | 'half_open';

export interface CircuitBreakerOptions {
  failureThreshold: number;
  cooldownMs: number;
  /** Default 20. */
  windowSize?: number;
  /** Default 0.5. */
  failureRatio?: number;
  /** Default 10. */
  minCalls?: number;
  now?: () => number;
}

/** What `tryAcquire` grants: a normal call, the single half-open probe, or nothing (fail fast). */
export type Permit = 'call' | 'probe' | null;

export interface BreakerSnapshot {
  state: BreakerState;
  consecutiveFailures: number;
  /** Times the breaker went from closed or half-open to open. */
  opens: number;
  /** Milliseconds until a probe is allowed (0 unless open). */
  retryInMs: number;
}

export class CircuitBreaker {
  private current: BreakerState = 'closed';
  private consecutive = 0;
  private window: boolean[] = [];
  private openedAt = 0;
  private probeInFlight = false;
  private opened = 0;
  private readonly windowSize: number;
  private readonly failureRatio: number;
  private readonly minCalls: number;
  private readonly now: () => number;

  constructor(private readonly options: CircuitBreakerOptions) {
    if (!Number.isInteger(options.failureThreshold) || options.failureThreshold < 1) throw new Error('failureThreshold must be >= 1');
    this.windowSize = options.windowSize ?? 20;
    this.failureRatio = options.failureRatio ?? 0.5;
    this.minCalls = Math.min(options.minCalls ?? 10, this.windowSize);
    this.now = options.now ?? Date.now;
  }

  get state(): BreakerState {
    if (this.current === 'open' && this.now() - this.openedAt >= this.options.cooldownMs) return 'half_open';
    return this.current;
  }

  tryAcquire(): Permit {
    if (this.current === 'closed') return 'call';
    if (this.current === 'open') {
      if (this.now() - this.openedAt < this.options.cooldownMs) return null;
      this.current = 'half_open';
    }
    if (this.probeInFlight) return null;
    this.probeInFlight = true;
    return 'probe';
  }

  onSuccess(permit: Exclude<Permit, null>): void {
    if (permit === 'probe') {
      this.probeInFlight = false;
      this.reset();
      return;
    }
    if (this.current !== 'closed') return; // a call that started before the breaker opened
    this.consecutive = 0;
    this.record(false);
  }

  onFailure(permit: Exclude<Permit, null>): void {
    if (permit === 'probe') {
      this.probeInFlight = false;
      this.open();
      return;
    }
    if (this.current !== 'closed') return;
    this.consecutive++;
    this.record(true);
    const failures = this.window.filter(Boolean).length;
    const ratioTripped = this.window.length >= this.minCalls && failures / this.window.length >= this.failureRatio;
    if (this.consecutive >= this.options.failureThreshold || ratioTripped) this.open();
  }

  /** The permitted call never reached the backend (e.g. the queue was full): nothing learnt. */
  onAbandon(permit: Exclude<Permit, null>): void {
    if (permit === 'probe') this.probeInFlight = false;
  }

  snapshot(): BreakerSnapshot {
    const state = this.state;
    const retryInMs = this.current === 'open' ? Math.max(0, this.options.cooldownMs - (this.now() - this.openedAt)) : 0;
    return { state, consecutiveFailures: this.consecutive, opens: this.opened, retryInMs };
  }

  private record(failed: boolean): void {
    this.window.push(failed);
    if (this.window.length > this.windowSize) this.window.shift();
  }

  private open(): void {
    this.current = 'open';
    this.openedAt = this.now();
    this.opened++;
  }

  private reset(): void {
    this.current = 'closed';
    this.consecutive = 0;
    this.window = [];
  }
}
