import { BackendError } from './backend-errors';

/**
 * At most `maxConcurrent` holders at once and at most `maxQueue` waiters; a caller that would be waiter
 * number maxQueue + 1 is refused at once with an `overloaded` error (load is shed, not buffered). A waiter
 * whose signal aborts leaves the queue.
 */
export class Semaphore {
  private active = 0;
  private readonly queue: Array<{ grant: () => void }> = [];

  constructor(
    readonly maxConcurrent: number,
    readonly maxQueue: number,
    private readonly name = 'backend',
  ) {
    if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1) throw new Error('maxConcurrent must be a positive integer');
    if (!Number.isInteger(maxQueue) || maxQueue < 0) throw new Error('maxQueue must be a non-negative integer');
  }

  get inUse(): number {
    return this.active;
  }

  get waiting(): number {
    return this.queue.length;
  }

  /** Resolves with a release function (idempotent) once a slot is held. */
  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(abortReason(signal, this.name));
    if (this.active < this.maxConcurrent) {
      this.active++;
      return Promise.resolve(this.releaser());
    }
    if (this.queue.length >= this.maxQueue) {
      return Promise.reject(
        new BackendError('overloaded', `${this.name}: overloaded (${this.maxConcurrent} calls in flight, ${this.maxQueue} queued)`),
      );
    }
    return new Promise((resolve, reject) => {
      const entry = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          this.active++;
          resolve(this.releaser());
        },
      };
      const onAbort = () => {
        const i = this.queue.indexOf(entry);
        if (i >= 0) this.queue.splice(i, 1);
        reject(abortReason(signal, this.name));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.queue.push(entry);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      this.queue.shift()?.grant();
    };
  }
}

function abortReason(signal: AbortSignal, name: string): Error {
  return signal.reason instanceof Error ? signal.reason : new BackendError('aborted', `${name}: call aborted`);
}
