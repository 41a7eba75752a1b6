import { CircuitBreaker } from '../../../../src/detection/classifiers/backends/circuit-breaker';

describe('CircuitBreaker', () => {
  let now = 0;
  const breaker = (o: Partial<ConstructorParameters<typeof CircuitBreaker>[0]> = {}) =>
    new CircuitBreaker({ failureThreshold: 3, cooldownMs: 1000, now: () => now, ...o });
  beforeEach(() => {
    now = 0;
  });

  it('closed → open after N consecutive failures; a success in between resets the count', () => {
    const b = breaker();
    b.onFailure('call');
    b.onFailure('call');
    b.onSuccess('call');
    b.onFailure('call');
    b.onFailure('call');
    expect(b.state).toBe('closed');
    b.onFailure('call');
    expect(b.snapshot()).toMatchObject({ state: 'open', opens: 1, retryInMs: 1000 });
    expect(b.tryAcquire()).toBeNull();
  });

  it('open → half-open after the cool-down: exactly one probe', () => {
    const b = breaker({ failureThreshold: 1 });
    b.onFailure('call');
    now = 999;
    expect(b.tryAcquire()).toBeNull();
    now = 1000;
    expect(b.state).toBe('half_open');
    expect(b.tryAcquire()).toBe('probe');
    expect(b.tryAcquire()).toBeNull();
    b.onSuccess('probe');
    expect(b.state).toBe('closed');
    expect(b.tryAcquire()).toBe('call');
  });

  it('a failed probe re-opens for a full cool-down; an abandoned probe frees the slot', () => {
    const b = breaker({ failureThreshold: 1 });
    b.onFailure('call');
    now = 1000;
    expect(b.tryAcquire()).toBe('probe');
    b.onAbandon('probe');
    expect(b.tryAcquire()).toBe('probe');
    b.onFailure('probe');
    expect(b.snapshot()).toMatchObject({ state: 'open', opens: 2 });
    now = 1999;
    expect(b.tryAcquire()).toBeNull();
    now = 2000;
    expect(b.tryAcquire()).toBe('probe');
  });

  it('opens on the failure ratio of the window once minCalls are recorded', () => {
    const b = breaker({ failureThreshold: 100, windowSize: 4, failureRatio: 0.5, minCalls: 4 });
    b.onFailure('call');
    b.onSuccess('call');
    b.onFailure('call');
    expect(b.state).toBe('closed'); // 3 calls < minCalls
    b.onSuccess('call');
    b.onFailure('call'); // window: S F S F → 2/4
    expect(b.state).toBe('open');
  });

  it('results of calls that started before the breaker opened do not change it', () => {
    const b = breaker({ failureThreshold: 1 });
    b.onFailure('call');
    b.onSuccess('call');
    expect(b.state).toBe('open');
  });
});
