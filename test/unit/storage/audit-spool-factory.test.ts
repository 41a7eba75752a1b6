import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openAuditSpool } from '../../../src/management/events/audit-spool.factory';
import { createLogger } from '../../../src/shared/logger';
import { LogCapture } from '../../helpers/services';

describe('openAuditSpool', () => {
  it('DATA_DIR/audit-spool by default, none for memory://, and one process per directory', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-data-'));
    const logs = new LogCapture();
    const logger = createLogger({ level: 'info', destination: logs });
    try {
      expect(openAuditSpool({ DATA_DIR: 'memory://', AUDIT_SPOOL_MAX_BYTES: 1024 }, logger).spool).toBeUndefined();
      const first = openAuditSpool({ DATA_DIR: dataDir, AUDIT_SPOOL_MAX_BYTES: 1024 }, logger);
      expect(first.spool).toBeDefined();
      // Same process, same directory: refused (another process gets the same answer while this one lives).
      const second = openAuditSpool({ DATA_DIR: 'unused', AUDIT_SPOOL_DIR: join(dataDir, 'audit-spool'), AUDIT_SPOOL_MAX_BYTES: 1024 }, logger);
      expect(second.spool).toBeUndefined();
      expect(logs.text).toMatch(/audit spool unavailable/);
      first.release();
      const third = openAuditSpool({ DATA_DIR: dataDir, AUDIT_SPOOL_MAX_BYTES: 1024 }, logger);
      expect(third.spool).toBeDefined();
      third.release();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
