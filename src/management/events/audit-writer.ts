import type { Logger } from '../../shared/logger';
import type { Storage } from '../../storage/data-source';
import type { RecordedFinding, SecurityEventKind } from '../../storage/entities/security-event.entity';

/** One audit record (a SecurityEvent). Never carries matched text, credentials or bodies. */
export interface AuditEvent {
  organizationId: string | null;
  projectId: string | null;
  kind: SecurityEventKind;
  path: string;
  sessionId: string | null;
  model: string | null;
  inputTokens: number | null;
  findings: RecordedFinding[];
  blocked: boolean;
  responseStatus: number;
  latencyMs: number;
  clientIp: string | null;
  createdAt: Date;
}

export interface AuditWriterOptions {
  /** Flush when this many events are waiting. */
  batchSize?: number;
  /** Flush at least this often. */
  flushIntervalMs?: number;
  /** Hard bound on waiting events (memory); beyond it the oldest are dropped and counted loudly. */
  maxBuffered?: number;
}

export interface AuditWriterStats {
  written: number;
  dropped: number;
  failedFlushes: number;
  buffered: number;
}

const COLUMNS = [
  'organization_id', 'project_id', 'kind', 'path', 'session_id', 'model', 'input_tokens', 'findings', 'blocked',
  'response_status', 'latency_ms', 'client_ip', 'created_at',
];
const CAST = ['uuid[]', 'uuid[]', 'text[]', 'text[]', 'text[]', 'text[]', 'int[]', 'jsonb[]', 'bool[]', 'int[]', 'float8[]', 'text[]', 'timestamptz[]'];
const INSERT_SQL = `INSERT INTO security_events (${COLUMNS.join(', ')})
  SELECT * FROM unnest(${CAST.map((c, i) => `$${i + 1}::${c}`).join(', ')})`;

/**
 * Writes audit events off the request path: `record` only appends to memory; a timer (or a full batch)
 * writes them with ONE multi-row INSERT. A failed write keeps the batch and retries with backoff.
 * `close()` stops the timer and writes everything still waiting (graceful shutdown loses nothing).
 */
export class AuditWriter {
  private buffer: AuditEvent[] = [];
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | undefined;
  private retryDelayMs = 0;
  private closed = false;
  private readonly stats = { written: 0, dropped: 0, failedFlushes: 0 };
  private readonly batchSize: number;
  private readonly maxBuffered: number;

  constructor(
    private readonly storage: Storage,
    private readonly logger: Logger,
    options: AuditWriterOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 500;
    this.maxBuffered = options.maxBuffered ?? 100_000;
    this.timer = setInterval(() => void this.flush(), options.flushIntervalMs ?? 250);
    this.timer.unref();
  }

  record(event: AuditEvent): void {
    if (this.closed) {
      this.logger.error({ path: event.path }, 'audit event after shutdown: written directly');
      void this.writeBatch([event]).catch(() => undefined);
      return;
    }
    this.buffer.push(event);
    if (this.buffer.length > this.maxBuffered) {
      const excess = this.buffer.length - this.maxBuffered;
      this.buffer.splice(0, excess);
      this.stats.dropped += excess;
      this.logger.error({ dropped: excess, totalDropped: this.stats.dropped }, 'audit buffer full: oldest events dropped (database unavailable?)');
    }
    if (this.buffer.length >= this.batchSize && this.retryDelayMs === 0) void this.flush();
  }

  getStats(): AuditWriterStats {
    return { ...this.stats, buffered: this.buffer.length };
  }

  /** Writes everything waiting now (one batch at a time). */
  async flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.buffer.length === 0) return;
    this.flushing = this.drain().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  /** Stops the timer and writes every waiting event; retries a few times before giving up loudly. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (let attempt = 0; attempt < 5 && (this.buffer.length > 0 || this.flushing); attempt++) {
      this.retryDelayMs = 0;
      await this.flushing;
      await this.flush();
      if (this.buffer.length > 0) await new Promise((r) => setTimeout(r, 100 * (attempt + 1)));
    }
    if (this.buffer.length > 0) {
      this.logger.error({ lost: this.buffer.length }, 'audit events could not be written before shutdown');
    }
  }

  private async drain(): Promise<void> {
    while (this.buffer.length > 0) {
      if (this.retryDelayMs > 0) {
        await new Promise((r) => setTimeout(r, this.retryDelayMs));
      }
      const batch = this.buffer.slice(0, this.batchSize);
      try {
        await this.writeBatch(batch);
        this.buffer.splice(0, batch.length);
        this.stats.written += batch.length;
        this.retryDelayMs = 0;
        // Let waiting I/O run between batches: on the embedded database a statement is synchronous
        // CPU work on this thread, so one long flush would stall every request behind it.
        if (this.buffer.length > 0) await new Promise((r) => setImmediate(r));
      } catch (err) {
        this.stats.failedFlushes += 1;
        this.retryDelayMs = Math.min(5000, Math.max(100, this.retryDelayMs * 2));
        this.logger.warn({ err: err instanceof Error ? err.message : String(err), waiting: this.buffer.length }, 'audit write failed; will retry');
        if (this.closed) return;
      }
    }
  }

  private async writeBatch(batch: AuditEvent[]): Promise<void> {
    const col = <T>(f: (e: AuditEvent) => T) => batch.map(f);
    await this.storage.query(INSERT_SQL, [
      col((e) => e.organizationId),
      col((e) => e.projectId),
      col((e) => e.kind),
      col((e) => e.path.slice(0, 512)),
      col((e) => (e.sessionId === null ? null : e.sessionId.slice(0, 128))),
      col((e) => (e.model === null ? null : e.model.slice(0, 200))),
      col((e) => e.inputTokens),
      col((e) => JSON.stringify(e.findings)),
      col((e) => e.blocked),
      col((e) => e.responseStatus),
      col((e) => e.latencyMs),
      col((e) => e.clientIp),
      col((e) => e.createdAt.toISOString()),
    ]);
  }
}
