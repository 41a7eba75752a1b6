import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../shared/logger';
import { tryDataDirLock, type DataDirLock } from '../../storage/data-dir-lock';
import { AuditSpool } from './audit-spool';

export interface SpoolSettings {
  AUDIT_SPOOL_DIR?: string;
  AUDIT_SPOOL_MAX_BYTES: number;
  DATA_DIR: string;
}

/**
 * Opens the audit spool of this instance: AUDIT_SPOOL_DIR, else DATA_DIR/audit-spool (none when the
 * data directory is `memory://`). One process per spool directory (a lock: storage/data-dir-lock.ts): a second instance
 * sharing it would replay the same files twice, so it runs without a spool and says so.
 */
export function openAuditSpool(settings: SpoolSettings, logger: Logger): { spool?: AuditSpool; release(): void } {
  const dir = settings.AUDIT_SPOOL_DIR ?? (settings.DATA_DIR.startsWith('memory://') ? undefined : join(settings.DATA_DIR, 'audit-spool'));
  if (!dir) return { release: () => undefined };
  let lock: DataDirLock | undefined;
  try {
    mkdirSync(dir, { recursive: true });
    lock = tryDataDirLock(join(dir, 'queue')); // the lock is dir/queue.lock
    const spool = new AuditSpool(dir, settings.AUDIT_SPOOL_MAX_BYTES, logger);
    const held = lock;
    return { spool, release: () => held.release() };
  } catch (err) {
    lock?.release();
    logger.error(
      { dir, reason: err instanceof Error ? err.message : String(err) },
      'audit spool unavailable (in use by another instance, or not writable): set AUDIT_SPOOL_DIR per instance; events wait in memory during an outage',
    );
    return { release: () => undefined };
  }
}
