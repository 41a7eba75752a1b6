import { AuditBatchInserter } from '../../../src/management/events/audit-batch-inserter';
import { sanitizeEvent, type AuditEvent } from '../../../src/management/events/audit-sanitizer';
import { createLogger } from '../../../src/shared/logger';
import { InitialSchema1763800000000 } from '../../../src/storage/migrations/1763800000000-initial-schema';
import { PolicyPiiRegions1764100000000 } from '../../../src/storage/migrations/1764100000000-policy-pii-regions';
import { AuditDeadLetters1764200000000 } from '../../../src/storage/migrations/1764200000000-audit-dead-letters';
import { UnscannableContent1764350000000 } from '../../../src/storage/migrations/1764350000000-unscannable-content';
import { prepareStorage } from '../../../src/storage/startup';
import { STORAGE_TARGETS, freshStorage } from '../../helpers/databases';

const event = (unscannedContent: string[] | null, sessionId: string): AuditEvent => ({
  organizationId: null, projectId: null, kind: 'request', path: '/v1/chat/completions', sessionId, model: 'm', inputTokens: 1,
  findings: [], blocked: false, responseStatus: 200, latencyMs: 1, clientIp: null, unscannedContent, createdAt: new Date(),
});

/** policies.unscannable and security_events.unscanned_content (PGlite, and PostgreSQL when configured). */
describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('unscannable migration on %s', (_name, target) => {
  it('leaves existing policies automatic (NULL), refuses other values, and down() removes both columns', async () => {
    const db = await freshStorage(target);
    const runner = db.storage.dataSource.createQueryRunner();
    try {
      await new InitialSchema1763800000000().up(runner);
      await new PolicyPiiRegions1764100000000().up(runner);
      await new AuditDeadLetters1764200000000().up(runner);
      const [org] = await runner.query(`INSERT INTO organizations (name) VALUES ('old org') RETURNING id`);
      await runner.query(`INSERT INTO policies (organization_id, name, policy_mode) VALUES ($1, 'before the field', 'IO')`, [org.id]);

      await new UnscannableContent1764350000000().up(runner);
      expect(await runner.query(`SELECT unscannable FROM policies`)).toEqual([{ unscannable: null }]);
      await runner.query(`UPDATE policies SET unscannable = 'allow'`);
      await expect(runner.query(`UPDATE policies SET unscannable = 'maybe'`)).rejects.toThrow();

      await new UnscannableContent1764350000000().down(runner);
      const columns = await runner.query(
        `SELECT column_name FROM information_schema.columns WHERE column_name IN ('unscannable', 'unscanned_content') AND table_name IN ('policies', 'security_events')`,
      );
      expect(columns).toEqual([]);
    } finally {
      await runner.release();
      await db.dispose();
    }
  });

  it('the audit writer stores unscanned_content as a JSON array, NULL when there is none', async () => {
    const db = await freshStorage(target);
    try {
      await prepareStorage(db.storage, {});
      const inserter = new AuditBatchInserter(db.storage, createLogger({ level: 'silent' }));
      const paths = ['messages[0].content[1].image_url', 'messages[2].content[0].file.file_data', '+3'];
      const out = await inserter.insert([event(paths, 'with'), event(null, 'without'), event([], 'empty')].map(sanitizeEvent));
      expect(out).toEqual({ written: 3, deadLettered: 0, lost: 0 });
      const rows = await db.storage.query<{ session_id: string; unscanned_content: unknown }>(
        'SELECT session_id, unscanned_content FROM security_events ORDER BY session_id',
      );
      expect(rows).toEqual([
        { session_id: 'empty', unscanned_content: null },
        { session_id: 'with', unscanned_content: paths },
        { session_id: 'without', unscanned_content: null },
      ]);
    } finally {
      await db.dispose();
    }
  });
});
