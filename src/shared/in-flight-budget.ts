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

  /**
   * Waits until `bytes` fit (a request larger than the whole budget waits for an empty channel) and
   * resolves with the release function; rejects with DEADLINE_EXCEEDED when `deadline` passes first.
   */
  async admit(bytes: number, deadline: number): Promise<() => void> {
    const weight = Math.min(this.units, Math.max(1, Math.ceil(bytes / UNIT_BYTES)));
    const remaining = Math.max(1, deadline - Date.now());
    const [, release] = await withTimeout(this.semaphore, remaining, this.timeoutError).acquire(weight);
    return release;
  }
}
