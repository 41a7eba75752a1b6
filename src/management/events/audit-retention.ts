import type { Storage } from '../../storage/data-source';
import type { Logger } from '../../shared/logger';

/**
 * Audit retention (issue 18, item 8): deletes audit records older than their retention in the
 * background. Every `intervalMs` (and once shortly after start) each table with a retention is
 * cleaned in batches of `batchSize` rows, oldest first, one short transaction per batch:
 *
 *   BEGIN; SELECT pg_try_advisory_xact_lock(<id>);  -- another replica is mid-batch: skip this round
 *   WITH d AS (DELETE … WHERE id IN (SELECT id … WHERE created_at < now() - N days
 *                                    ORDER BY created_at LIMIT batch FOR UPDATE SKIP LOCKED) RETURNING 1)
 *   SELECT count(*) FROM d; COMMIT;
 *
 * so a huge backlog never holds a long lock or a long statement (the created_at indexes serve the
 * range), several gateway replicas never do the same work twice nor block each other, and deletes are
 * idempotent (a replica stopping mid-run loses nothing: the next run continues). The cut-off is the
 * database's clock, the same for every replica. A database that is down or slow only fails the run: it
 * is logged and retried at the next interval, never thrown. Retention 0 keeps the table forever.
 */

/** Advisory lock id of the retention job (distinct from the start-up lock of storage/startup.ts). */
export const RETENTION_LOCK_ID = 7_428_571_730_002;

export type RetainedTable = 'security_events' | 'audit_dead_letters' | 'management_events';

export interface AuditRetentionOptions {
  /** AUDIT_RETENTION_DAYS: security events and dead-lettered security events; 0 = keep forever. */
  auditDays: number;
  /** MANAGEMENT_AUDIT_RETENTION_DAYS: the management audit trail; 0 = keep forever. */
  managementDays: number;
  /** AUDIT_RETENTION_INTERVAL_MS: how often a run starts (the first one after min(interval, 60 s)). */
  intervalMs: number;
  /** AUDIT_RETENTION_BATCH_SIZE: rows per DELETE statement (and per transaction). */
  batchSize: number;
  logger: Logger;
}

export interface RetentionRun {
  /** Rows deleted per table in this run. */
  deleted: Partial<Record<RetainedTable, number>>;
  /** A table was left for this round because another replica held the lock. */
  skipped: boolean;
}

const FIRST_RUN_MAX_DELAY_MS = 60_000;

function deleteBatchSql(table: RetainedTable): string {
  return `WITH d AS (
      DELETE FROM ${table} WHERE id IN (
        SELECT id FROM ${table} WHERE created_at < now() - ($1::int * interval '1 day')
         ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
      RETURNING 1)
    SELECT count(*)::int AS n FROM d`;
}

export class AuditRetention {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<RetentionRun> | undefined;
  private stopped = false;

  constructor(
    private readonly storage: Storage,
    private readonly options: AuditRetentionOptions,
  ) {}

  /** The tables with a retention, and their retention in days. */
  get targets(): Array<{ table: RetainedTable; days: number }> {
    const { auditDays, managementDays } = this.options;
    const all: Array<{ table: RetainedTable; days: number }> = [
      { table: 'security_events', days: auditDays },
      { table: 'audit_dead_letters', days: auditDays },
      { table: 'management_events', days: managementDays },
    ];
    return all.filter((t) => t.days > 0);
  }

  /** Schedules the periodic runs (nothing to do, and no timer, when every retention is 0). */
  start(): void {
    if (this.targets.length === 0 || this.stopped) return;
    this.schedule(Math.min(this.options.intervalMs, FIRST_RUN_MAX_DELAY_MS));
  }

  /** One run over every table: never throws (failures are logged); concurrent calls share the run. */
  runOnce(): Promise<RetentionRun> {
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Stops the timer and waits for a run in progress (it stops after its current batch). */
  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      void this.runOnce().finally(() => {
        if (!this.stopped) this.schedule(this.options.intervalMs);
      });
    }, delayMs);
    this.timer.unref();
  }

  private async run(): Promise<RetentionRun> {
    const result: RetentionRun = { deleted: {}, skipped: false };
    for (const { table, days } of this.targets) {
      try {
        const outcome = await this.purge(table, days);
        result.deleted[table] = outcome.deleted;
        result.skipped ||= outcome.skipped;
      } catch (err) {
        // Storage down or stalled: the next run tries again. The message only (never row data).
        this.options.logger.warn({ table, err: err instanceof Error ? err.message : String(err) }, 'audit retention run failed; retrying at the next interval');
      }
    }
    const total = Object.values(result.deleted).reduce((a, b) => a + b, 0);
    if (total > 0) this.options.logger.info({ deleted: result.deleted }, 'audit retention: deleted records past their retention');
    return result;
  }

  /** Deletes batch after batch until a batch comes back short, the lock is taken, or close() is called. */
  private async purge(table: RetainedTable, days: number): Promise<{ deleted: number; skipped: boolean }> {
    const sql = deleteBatchSql(table);
    let deleted = 0;
    while (!this.stopped) {
      const n = await this.storage.dataSource.transaction(async (m) => {
        const [lock] = (await m.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [RETENTION_LOCK_ID])) as Array<{ locked: boolean }>;
        if (!lock?.locked) return null;
        const [row] = (await m.query(sql, [days, this.options.batchSize])) as Array<{ n: number }>;
        return row?.n ?? 0;
      });
      if (n === null) return { deleted, skipped: true };
      deleted += n;
      if (n < this.options.batchSize) break;
      // Between batches: let other work on the connection pool (and the embedded database's thread) in.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return { deleted, skipped: false };
  }
}
