import * as grpc from '@grpc/grpc-js';
import type { DetectionAdmission, Release } from './detection-admission';
import { AppError } from './errors';

/**
 * The sending side of a streaming scan (DetectStream), under admission control: text written by the
 * caller is batched, and each batch is one step of detection work: a slot is acquired from the
 * process's DetectionAdmission (as admitted work: a stream that started is never refused), the batch
 * is sent with `ack`, and the slot is released once the server has taken it in (its answer counts the
 * batch in `received`). While a step waits for its slot or its answer, later writes accumulate into the
 * next batch, so a loaded detection service gets fewer, larger steps instead of a backlog of tiny ones.
 *
 * Each step's deadline (`stepTimeoutMs`) starts when its slot is granted, never while it waits in the
 * queue. A step that misses it fails the stream (the caller fails closed).
 */

/**
 * Characters of one batch (one request, well under the message size limit): bounds the scan one step
 * costs, so a stream with a large backlog takes several turns in the queue, between other work.
 */
export const MAX_BATCH_CHARS = 64 * 1024;
/** Text a writer may hold before write() waits for the batches ahead of it (backpressure). */
export const MAX_PENDING_CHARS = 256 * 1024;

export interface StreamWriterDeps {
  /** Writes one request on the call; resolves once the transport accepted it; rejects once the stream failed. */
  send(msg: { text: string; final: boolean; ack: boolean }): Promise<void>;
  /** Resolves once the server's answers count `chars` characters received; rejects once the stream failed. */
  received(chars: number): Promise<void>;
  /** Fails the stream (the call is cancelled, pending promises reject with `err`). */
  fail(err: unknown): void;
  admission?: DetectionAdmission;
  stepTimeoutMs: number;
  /** Aborted when the stream is cancelled: a step waiting for its slot leaves the queue. */
  signal: AbortSignal;
}

export class DetectStreamWriter {
  private pending = '';
  private sent = 0;
  private running = false;
  private loop: Promise<void> = Promise.resolve();
  private failure: unknown;
  private ended = false;

  constructor(private readonly d: StreamWriterDeps) {}

  /** Queues a chunk; waits only when more than MAX_PENDING_CHARS are pending. Rejects once the stream failed. */
  async write(chunk: string): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    this.pending += chunk;
    if (!this.running) {
      this.running = true;
      this.loop = this.flush();
    }
    if (this.pending.length > MAX_PENDING_CHARS) await this.drain();
  }

  /** Sends everything pending, then `final` (its scan is a step too, ended by `done`). */
  async end(done: Promise<unknown>): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.drain();
    await this.step(async () => {
      const text = this.pending;
      this.pending = '';
      await this.d.send({ text, final: true, ack: false });
      await done;
    });
  }

  private async drain(): Promise<void> {
    while (this.running) await this.loop;
    if (this.failure !== undefined) throw this.failure;
  }

  private async flush(): Promise<void> {
    try {
      for (;;) {
        const text = this.batch();
        if (text === '' || this.failure !== undefined) return;
        await this.step(async () => {
          await this.d.send({ text, final: false, ack: true });
          this.sent += text.length;
          await this.d.received(this.sent);
        });
      }
    } catch (err) {
      this.failure ??= err;
    } finally {
      this.running = false;
    }
  }

  /** Takes up to MAX_BATCH_CHARS of the pending text, never ending in a high surrogate (sent whole with its pair next time). */
  private batch(): string {
    let cut = Math.min(this.pending.length, MAX_BATCH_CHARS);
    const last = this.pending.charCodeAt(cut - 1);
    if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
    const text = this.pending.slice(0, cut);
    this.pending = this.pending.slice(cut);
    return text;
  }

  /** One piece of detection work: waits for a slot, then runs `work` within stepTimeoutMs. */
  private async step(work: () => Promise<void>): Promise<void> {
    const release: Release | undefined = await this.d.admission?.acquire({ admitted: true, signal: this.d.signal });
    let timer: NodeJS.Timeout | undefined;
    let late: NodeJS.Immediate | undefined;
    try {
      // The deadline is judged after the loop's pending I/O: when the process was busy past it (1,024
      // streams at once), the expired timer runs before the socket's waiting answer is read, and would
      // fail a step that was answered in time.
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => (late = setImmediate(() => reject(stepTimeout(this.d.stepTimeoutMs)))), this.d.stepTimeoutMs);
      });
      await Promise.race([work(), timeout]);
    } catch (err) {
      this.failure ??= err;
      this.d.fail(err);
      throw err;
    } finally {
      clearTimeout(timer);
      if (late) clearImmediate(late);
      release?.();
    }
  }
}

/** A step that was admitted but not answered in time: 503 detection_unavailable, caused by DEADLINE_EXCEEDED. */
function stepTimeout(ms: number): AppError {
  const cause = Object.assign(new Error(`DetectStream step not answered within ${ms} ms`), { code: grpc.status.DEADLINE_EXCEEDED });
  return new AppError('internal_error', 'Detection service unavailable', { code: 'detection_unavailable', status: 503, cause });
}
