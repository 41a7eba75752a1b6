import * as grpc from '@grpc/grpc-js';
import { Semaphore, withTimeout } from 'async-mutex';

/**
 * Size-aware admission for one HTTP/2 session: the request bytes a channel may have in flight at once.
 * A call waits (FIFO, within its own deadline) until its request fits, so the session's buffered data
 * stays well under its `maxSessionMemory` and nghttp2 never answers NGHTTP2_ENHANCE_YOUR_CALM (which
 * fails every stream of the session). Counted in 64 KiB units: async-mutex's weighted Semaphore walks
 * its weights on every release, so the unit keeps that walk short (≤ budget / 64 KiB steps).
 */

const UNIT_BYTES = 64 * 1024;

export type ServiceErrorFactory = (code: grpc.status, details: string) => grpc.ServiceError;

export class InFlightBudget {
  private readonly semaphore: Semaphore;
  private readonly units: number;
  /** One error object for every wait that times out (nothing per call on the hot path). */
  private readonly timeoutError: grpc.ServiceError;

  constructor(readonly maxBytes: number, toError: ServiceErrorFactory) {
    this.units = Math.max(1, Math.floor(maxBytes / UNIT_BYTES));
    this.semaphore = new Semaphore(this.units);
    this.timeoutError = toError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded while waiting for in-flight capacity');
  }

  /** Calls waiting in `admit` (queued in the semaphore, or about to be). */
  private waiting = 0;

  private weightOf(bytes: number): number {
    return Math.min(this.units, Math.max(1, Math.ceil(bytes / UNIT_BYTES)));
  }

  /**
   * The usual case without a wait: when `bytes` fit now and no call is waiting, takes them at once and
   * returns the release function; otherwise undefined (then `admit`, which queues behind the waiters).
   * `admit` alone would allocate a timeout wrapper, a timer and promises per call (~4 KB; bench:c1-gc's
   * allocation profile, bench/RESULTS.md), which a channel with room never needs.
   */
  tryAdmit(bytes: number): (() => void) | undefined {
    const weight = this.weightOf(bytes);
    const free = this.semaphore.getValue();
    if (this.waiting > 0 || free < weight) return undefined;
    this.semaphore.setValue(free - weight);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.semaphore.release(weight);
    };
  }

  /**
   * Waits until `bytes` fit (a request larger than the whole budget waits for an empty channel) and
   * resolves with the release function; rejects with DEADLINE_EXCEEDED when `deadline` passes first.
   */
  async admit(bytes: number, deadline: number): Promise<() => void> {
    const weight = this.weightOf(bytes);
    const remaining = Math.max(1, deadline - Date.now());
    this.waiting++;
    try {
      const [, release] = await withTimeout(this.semaphore, remaining, this.timeoutError).acquire(weight);
      return release;
    } finally {
      this.waiting--;
    }
  }
}
