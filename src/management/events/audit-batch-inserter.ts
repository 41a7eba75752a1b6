import { randomUUID } from 'node:crypto';
import type { Logger } from '../../shared/logger';
import type { Storage } from '../../storage/data-source';
import { classifyStorageError, constraintOf, errorCodeOf } from '../../storage/storage-errors';
import { eventToJson, sanitizeEvent, type AuditEvent } from './audit-sanitizer';

const COLUMNS = [
  'id', 'organization_id', 'project_id', 'kind', 'path', 'session_id', 'model', 'input_tokens', 'findings', 'blocked',
  'response_status', 'latency_ms', 'client_ip', 'fail_reason', 'unscanned_content', 'request_id', 'provider', 'upstream_attempts', 'created_at',
];
const CAST = [
  'uuid[]', 'uuid[]', 'uuid[]', 'text[]', 'text[]', 'text[]', 'text[]', 'int[]', 'jsonb[]', 'bool[]', 'int[]', 'float8[]', 'text[]', 'text[]', 'jsonb[]',
  'text[]', 'text[]', 'jsonb[]', 'timestamptz[]',
];
const INSERT_SQL = `INSERT INTO security_events (${COLUMNS.join(', ')})
  SELECT * FROM unnest(${CAST.map((c, i) => `$${i + 1}::${c}`).join(', ')})
  ON CONFLICT (id) DO NOTHING`;
const DEAD_LETTER_SQL = 'INSERT INTO audit_dead_letters (event, error_code, constraint_name) VALUES ($1::jsonb, $2, $3)';

/** Thrown when the database is unreachable: `remaining` are the rows not yet written (nor dead-lettered). */
export class StorageUnavailableError extends Error {
  constructor(
    readonly remaining: AuditEvent[],
    readonly code: string,
  ) {
    super(`database unavailable (${code})`);
    this.name = 'StorageUnavailableError';
  }
}

export interface InsertOutcome {
  written: number;
  deadLettered: number;
  /** Rows neither written nor dead-lettered (the dead-letter insert itself was rejected). */
  lost: number;
}

/**
 * Inserts sanitised events with one multi-row statement. A permanent rejection splits the batch in
 * halves until the rejected rows are alone; each of those goes to `audit_dead_letters` (the event as
 * JSON, the SQLSTATE and the constraint name: no message, which can quote row data). A transient
 * failure stops at once with the unwritten rows in a StorageUnavailableError. Rows carry their id, and
 * an id already stored is skipped: a batch committed just before the connection broke (its answer lost)
 * is not stored twice when retried or replayed from the spool.
 */
export class AuditBatchInserter {
  constructor(
    private readonly storage: Storage,
    private readonly logger: Logger,
  ) {}

  async insert(rows: AuditEvent[]): Promise<InsertOutcome> {
    const out: InsertOutcome = { written: 0, deadLettered: 0, lost: 0 };
    const stack: AuditEvent[][] = [rows]; // popped last-first: halves are pushed right, then left
    while (stack.length > 0) {
      const part = stack.pop() as AuditEvent[];
      const err = await this.tryInsert(part);
      if (err === undefined) {
        out.written += part.length;
        continue;
      }
      if (await this.isOutage(err)) throw new StorageUnavailableError([part, ...[...stack].reverse()].flat(), errorCodeOf(err));
      if (part.length > 1) {
        const mid = Math.ceil(part.length / 2);
        stack.push(part.slice(mid), part.slice(0, mid));
        continue;
      }
      const deadErr = await this.deadLetter(part[0] as AuditEvent, err);
      if (deadErr === undefined) out.deadLettered += 1;
      else if (await this.isOutage(deadErr)) throw new StorageUnavailableError([part, ...[...stack].reverse()].flat(), errorCodeOf(deadErr));
      else {
        out.lost += 1;
        this.logger.error({ code: errorCodeOf(deadErr), requestId: part[0]?.requestId ?? undefined }, 'audit event rejected by the dead-letter table too: lost');
      }
    }
    return out;
  }

  /** Whether the database answers at all (`SELECT 1`). */
  async reachable(): Promise<boolean> {
    try {
      await this.storage.query('SELECT 1');
      return true;
    } catch {
      return false;
    }
  }

  /** Transient errors are an outage; unclassified ones are one only if the database does not answer. */
  private async isOutage(err: unknown): Promise<boolean> {
    const kind = classifyStorageError(err);
    if (kind === 'unknown') return !(await this.reachable());
    return kind === 'transient';
  }

  private async tryInsert(rows: AuditEvent[]): Promise<unknown> {
    const col = <T>(f: (e: AuditEvent) => T) => rows.map(f);
    try {
      await this.storage.query(INSERT_SQL, [
        col((e) => e.id ?? randomUUID()), // sanitised events always carry theirs
        col((e) => e.organizationId),
        col((e) => e.projectId),
        col((e) => e.kind),
        col((e) => e.path),
        col((e) => e.sessionId),
        col((e) => e.model),
        col((e) => e.inputTokens),
        col((e) => JSON.stringify(e.findings)),
        col((e) => e.blocked),
        col((e) => e.responseStatus),
        col((e) => e.latencyMs),
        col((e) => e.clientIp),
        col((e) => e.failReason ?? null),
        col((e) => (e.unscannedContent && e.unscannedContent.length > 0 ? JSON.stringify(e.unscannedContent) : null)),
        col((e) => e.requestId ?? null),
        col((e) => e.provider ?? null),
        col((e) => (e.upstreamAttempts && e.upstreamAttempts.length > 0 ? JSON.stringify(e.upstreamAttempts) : null)),
        col((e) => e.createdAt.toISOString()),
      ]);
      return undefined;
    } catch (err) {
      return err ?? new Error('insert failed');
    }
  }

  private async deadLetter(event: AuditEvent, cause: unknown): Promise<unknown> {
    const code = errorCodeOf(cause);
    const constraint = constraintOf(cause) ?? null;
    this.logger.error({ code, constraint, kind: event.kind, requestId: event.requestId ?? undefined }, 'audit event rejected by the database: moved to audit_dead_letters');
    try {
      await this.storage.query(DEAD_LETTER_SQL, [JSON.stringify(eventToJson(sanitizeEvent(event))), code, constraint]);
      return undefined;
    } catch (err) {
      return err ?? new Error('dead-letter insert failed');
    }
  }
}
