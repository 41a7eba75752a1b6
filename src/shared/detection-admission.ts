import { AppError } from './errors';

/**
 * Admission control for detection work, shared by every route of a process (the gateway's and the
 * sensor's, through their one DetectionClient). At most `maxActive` pieces of detection work are on
 * their way to the detection service at once: a unary Detect call, or one step of a streaming scan
 * (a batch of streamed text sent and acknowledged). Further work waits in one FIFO queue.
 *
 * Two kinds of work enter the queue:
 * - new work (the first detection call of a request: its input scan, a /v1/detect call): refused at
 *   once with 503 `detection_overloaded` (Retry-After) when `maxQueued` pieces are already waiting, so
 *   a request is turned away before anything of it reaches the upstream;
 * - admitted work (the later calls of a request already admitted: its output scan, the steps of its
 *   stream): always queued, never refused, so a stream that started is scanned to its end.
 *
 * The caller's deadline starts when its work is admitted (acquire resolves), not when it was queued:
 * a piece of work never times out because others ahead of it were slow. A waiter whose signal aborts
 * (the client went away) leaves the queue at once.
 */

export interface DetectionAdmissionOptions {
  /** Pieces of detection work in flight at once (at least 1). */
  maxActive: number;
  /** New work that may wait; past it new work is refused (0: refused whenever every slot is busy). */
  maxQueued: number;
  /** Seconds the refusal's Retry-After header asks the client to wait. */
  retryAfterSeconds?: number;
}

export const DEFAULT_DETECTION_MAX_ACTIVE = 16;
/**
 * 4096: the queue holds new work and every open stream's next step, so 1,024 streams open together (one
 * queued step each) plus a burst of new requests fit; a waiter is a few hundred bytes.
 */
export const DEFAULT_DETECTION_MAX_QUEUED = 4096;
export const DETECTION_RETRY_AFTER_SECONDS = 1;

/** Returned by acquire: ends the piece of work (idempotent). */
export type Release = () => void;

export interface AcquireOptions {
  /** Later work of an admitted request: queued even past maxQueued. */
  admitted: boolean;
  signal?: AbortSignal;
}

interface Waiter {
  resolve: (release: Release) => void;
  /** Stops listening to the waiter's abort signal. */
  detach: () => void;
}

/** 503 service_unavailable `detection_overloaded`, with Retry-After (error-handler.ts reads details.retry_after). */
export function detectionOverloaded(retryAfterSeconds = DETECTION_RETRY_AFTER_SECONDS): AppError {
  return new AppError('service_unavailable', 'Detection is at capacity: retry later', {
    code: 'detection_overloaded',
    details: { retry_after: retryAfterSeconds },
  });
}

export class DetectionAdmission {
  private active = 0;
  /** Insertion-ordered: the first entry is the oldest waiter; delete is O(1) for aborted waiters. */
  private readonly queue = new Set<Waiter>();
  private readonly retryAfterSeconds: number;

  constructor(private readonly o: DetectionAdmissionOptions) {
    if (!Number.isInteger(o.maxActive) || o.maxActive < 1) throw new RangeError('maxActive must be an integer of at least 1');
    if (!Number.isInteger(o.maxQueued) || o.maxQueued < 0) throw new RangeError('maxQueued must be a non-negative integer');
    this.retryAfterSeconds = o.retryAfterSeconds ?? DETECTION_RETRY_AFTER_SECONDS;
  }

  /** Work in flight and work waiting (for /health and tests). */
  stats(): { active: number; queued: number; maxActive: number; maxQueued: number } {
    return { active: this.active, queued: this.queue.size, maxActive: this.o.maxActive, maxQueued: this.o.maxQueued };
  }

  /**
   * Resolves with the release function once the work may run. Rejects with detection_overloaded (new
   * work, queue full; decided synchronously, before the promise is returned), or with the signal's
   * reason when it aborts while waiting.
   */
  acquire(options: AcquireOptions): Promise<Release> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.active < this.o.maxActive && this.queue.size === 0) return Promise.resolve(this.grant());
    if (!options.admitted && this.queue.size >= this.o.maxQueued) return Promise.reject(detectionOverloaded(this.retryAfterSeconds));
    return new Promise<Release>((resolve, reject) => {
      const onAbort = () => {
        if (this.queue.delete(waiter)) reject(signal!.reason);
      };
      const waiter: Waiter = { resolve, detach: () => signal?.removeEventListener('abort', onAbort) };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.add(waiter);
    });
  }

  /** Takes a slot and returns its (idempotent) release. */
  private grant(): Release {
    this.active += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active -= 1;
      this.dispatch();
    };
  }

  /** Hands free slots to the oldest waiters. */
  private dispatch(): void {
    while (this.active < this.o.maxActive && this.queue.size > 0) {
      const next = this.queue.values().next().value as Waiter;
      this.queue.delete(next);
      next.detach();
      next.resolve(this.grant());
    }
  }
}
