import type { Logger } from '../../shared/logger';
import type { Storage } from '../../storage/data-source';
import { AuditBatchInserter, StorageUnavailableError, type InsertOutcome } from './audit-batch-inserter';
import { sanitizeEvent, type AuditEvent } from './audit-sanitizer';
import type { AuditSpool, SpoolStats } from './audit-spool';

export type { AuditEvent, FailReason } from './audit-sanitizer';

export interface AuditWriterOptions {
  /** Flush when this many events are waiting. */
  batchSize?: number;
  /** Flush at least this often. */
  flushIntervalMs?: number;
  /** Hard bound on events waiting in memory (only reached without a spool); beyond it the oldest are dropped, counted. */
  maxBuffered?: number;
  /** Where batches go while the database is unreachable (and at shutdown); without one they wait in memory. */
  spool?: AuditSpool;
  /** Upper bound of the backoff between reconnection probes during an outage. */
  maxRetryDelayMs?: number;
}

/** Counters for operators (and the future /metrics endpoint). */
export interface AuditWriterStats extends SpoolStats {
  written: number;
  /** Dropped from memory (no spool, buffer cap reached) or from the spool (size cap reached). */
  dropped: number;
  failedFlushes: number;
  buffered: number;
  /** Rows the database rejected even after sanitising: stored in audit_dead_letters. */
  deadLettered: number;
  /** Rows rejected by the dead-letter table as well (never expected; logged). */
  lost: number;
  /** Events written from the spool after an outage. */
  replayed: number;
  /** True while the database is considered unreachable. */
  outage: boolean;
}

const NO_SPOOL: SpoolStats = { spooled: 0, spoolBytes: 0, spoolDropped: 0, spoolCorrupt: 0 };

/**
 * Writes audit events off the request path: `record` only appends to memory; a timer (or a full batch)
 * writes them with one multi-row INSERT (AuditBatchInserter: rejected rows are isolated and dead-lettered,
 * so one bad event never blocks the others). While the database is unreachable, batches go to the spool
 * and a probe with backoff waits for it; the spool is replayed (oldest first) before new events.
 * `close()` writes or spools everything: a graceful shutdown loses nothing.
 */
export class AuditWriter {
  private buffer: AuditEvent[] = [];
  private flushing: Promise<void> | null = null;
  /** Events waiting for a field computed off the request thread (recordWhenReady). */
  private readonly completing = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private outage = false;
  private retryDelayMs = 0;
  private nextProbeAt = 0;
  private closed = false;
  private closeDone = false;
  private readonly counters = { written: 0, dropped: 0, failedFlushes: 0, deadLettered: 0, lost: 0, replayed: 0 };
  private readonly batchSize: number;
  private readonly maxBuffered: number;
  private readonly maxRetryDelayMs: number;
  private readonly inserter: AuditBatchInserter;
  private readonly spool: AuditSpool | undefined;

  constructor(
    storage: Storage,
    private readonly logger: Logger,
    options: AuditWriterOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 500;
    this.maxBuffered = options.maxBuffered ?? 100_000;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 5000;
    this.spool = options.spool;
    this.inserter = new AuditBatchInserter(storage, logger);
    this.timer = setInterval(() => void this.flush(), options.flushIntervalMs ?? 250);
    this.timer.unref();
  }

  record(event: AuditEvent): void {
    this.buffer.push(event);
    if (this.closed) {
      // While close() runs, its last step takes the event; after it, the event is spooled at once
      // (the timer is gone), or written directly without a spool.
      if (!this.closeDone) return;
      this.logger.warn({ requestId: event.requestId ?? undefined }, 'audit event after shutdown');
      if (this.spool) this.spoolBuffer();
      else void this.flush();
      return;
    }
    if (this.buffer.length > this.maxBuffered) {
      const excess = this.buffer.length - this.maxBuffered;
      this.buffer.splice(0, excess);
      this.counters.dropped += excess;
      this.logger.error({ dropped: excess, totalDropped: this.counters.dropped }, 'audit buffer full: oldest events dropped (database unavailable, no spool)');
    }
    if (this.buffer.length >= this.batchSize && !this.outage) void this.flush();
  }

  getStats(): AuditWriterStats {
    const spool = this.spool?.stats() ?? NO_SPOOL;
    return { ...this.counters, ...spool, dropped: this.counters.dropped + spool.spoolDropped, buffered: this.buffer.length, outage: this.outage };
  }

  /**
   * Records an event whose last fields are still being computed (its input token count, in a worker):
   * it joins the buffer when ready; flush() and close() wait for it first. `requestLog`: the request's
   * logger, for the line written if the event cannot be completed.
   */
  recordWhenReady(event: Promise<AuditEvent>, requestLog?: Pick<Logger, 'error'>): void {
    const done = event.then(
      (e) => this.record(e),
      // Logged by the request's logger when given (its lines carry the request id).
      (err: unknown) => (requestLog ?? this.logger).error({ err: err instanceof Error ? err.message : 'unknown' }, 'audit event could not be completed'),
    );
    this.completing.add(done);
    void done.finally(() => this.completing.delete(done));
  }

  /** Writes (or, during an outage, spools) everything waiting now, after the events still being completed. */
  async flush(): Promise<void> {
    if (this.completing.size > 0) await Promise.allSettled([...this.completing]);
    if (this.flushing) return this.flushing;
    if (this.buffer.length === 0 && !this.spool?.pending) return;
    this.flushing = this.drain().catch((err: unknown) => {
      // Never an unhandled rejection from the timer: events stay buffered for the next tick.
      this.counters.failedFlushes += 1;
      this.logger.error({ err: err instanceof Error ? err.name : 'unknown' }, 'audit flush failed');
    }).finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  /** Stops the timer, then writes every waiting event, or spools what the database does not take. */
  async close(): Promise<void> {
    while (this.completing.size > 0) await Promise.allSettled([...this.completing]);
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flushing;
    if (this.outage) this.nextProbeAt = 0; // one last attempt
    await this.flush();
    this.spoolBuffer();
    this.closeDone = true;
    const s = this.getStats();
    if (s.buffered > 0) this.logger.error({ lost: s.buffered }, 'audit events could not be written nor spooled before shutdown');
    else if (s.spooled > 0) this.logger.warn({ spooled: s.spooled }, 'audit events spooled at shutdown: written at the next start');
  }

  private async drain(): Promise<void> {
    while (true) {
      if (this.outage && !(await this.probe())) {
        this.spoolBuffer();
        return;
      }
      const batch = this.nextBatch();
      if (!batch) return;
      // From here the batch is only in `batch` (and its spool file): every exit path below keeps it.
      try {
        this.count(await this.inserter.insert(batch.events), batch.fromSpool);
        if (batch.fromSpool) this.spool?.remove(batch.fromSpool);
      } catch (err) {
        if (!(err instanceof StorageUnavailableError)) {
          if (!batch.fromSpool) this.buffer.unshift(...batch.events); // kept for the next flush
          throw err;
        }
        this.enterOutage(err, batch);
      }
      // Let waiting I/O run between batches: on the embedded database a statement is synchronous
      // CPU work, so one long flush would stall every request behind it.
      await new Promise((r) => setImmediate(r));
    }
  }

  /** The spool's oldest batch first (older events), then the memory buffer. Events are sanitised here. */
  private nextBatch(): { events: AuditEvent[]; fromSpool?: string } | undefined {
    const spooled = this.spool?.peek();
    if (spooled) return { events: spooled.events.map(sanitizeEvent), fromSpool: spooled.name };
    if (this.buffer.length === 0) return undefined;
    // Taken out of the buffer now: a concurrent spoolBuffer() (an event recorded after close) never sees it twice.
    return { events: this.buffer.splice(0, this.batchSize).map(sanitizeEvent) };
  }

  private count(o: InsertOutcome, fromSpool: string | undefined): void {
    this.counters.written += o.written;
    this.counters.deadLettered += o.deadLettered;
    this.counters.lost += o.lost;
    if (fromSpool) this.counters.replayed += o.written + o.deadLettered;
  }

  private enterOutage(err: StorageUnavailableError, batch: { events: AuditEvent[]; fromSpool?: string }): void {
    this.counters.failedFlushes += 1;
    const done = batch.events.length - err.remaining.length;
    if (batch.fromSpool) {
      // Rewrite the partly written spool file as the rows still to do (none is written twice).
      if (done > 0 && this.spool) {
        this.spool.remove(batch.fromSpool);
        this.spool.append(err.remaining);
      }
    } else {
      this.buffer.unshift(...err.remaining);
    }
    if (!this.outage) this.logger.error({ code: err.code, waiting: this.buffer.length }, 'audit: database unavailable; spooling events until it answers');
    this.outage = true;
    this.retryDelayMs = Math.min(this.maxRetryDelayMs, Math.max(100, this.retryDelayMs * 2));
    this.nextProbeAt = Date.now() + this.retryDelayMs;
    this.spoolBuffer();
  }

  /** During an outage: true (outage over) once the database answers again; probes no faster than the backoff. */
  private async probe(): Promise<boolean> {
    if (Date.now() < this.nextProbeAt) return false;
    if (await this.inserter.reachable()) {
      this.logger.info({ spooled: this.spool?.pendingEvents() ?? 0 }, 'audit: database reachable again; replaying spooled events');
      this.outage = false;
      this.retryDelayMs = 0;
      return true;
    }
    this.retryDelayMs = Math.min(this.maxRetryDelayMs, Math.max(100, this.retryDelayMs * 2));
    this.nextProbeAt = Date.now() + this.retryDelayMs;
    return false;
  }

  /** Moves the memory buffer to the spool (batch by batch); keeps it in memory if there is no spool or it fails. */
  private spoolBuffer(): void {
    if (!this.spool) return;
    while (this.buffer.length > 0) {
      const batch = this.buffer.slice(0, this.batchSize).map(sanitizeEvent);
      try {
        this.spool.append(batch);
      } catch (err) {
        this.logger.error({ code: (err as NodeJS.ErrnoException).code }, 'audit spool not writable: events stay in memory');
        return;
      }
      this.buffer.splice(0, batch.length);
    }
  }
}
