import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 16 (no audit event lost):
 * - `audit_dead_letters`: events the database rejected even after sanitising (e.g. a project deleted while
 *   its request was in flight: foreign key). The sanitised event as JSON, the SQLSTATE and the violated
 *   constraint's name; never the error message (it can quote row data).
 * - `security_events.fail_reason`: why a request failed closed (`detection_unavailable`, `detection_timeout`).
 * Plain SQL that PGlite and PostgreSQL both run.
 */
export class AuditDeadLetters1764200000000 implements MigrationInterface {
  name = 'AuditDeadLetters1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE audit_dead_letters (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        event jsonb NOT NULL,
        error_code varchar(32) NOT NULL,
        constraint_name varchar(128) NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query('CREATE INDEX audit_dead_letters_created_idx ON audit_dead_letters (created_at)');
    await q.query('ALTER TABLE security_events ADD COLUMN fail_reason varchar(32) NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE security_events DROP COLUMN IF EXISTS fail_reason');
    await q.query('DROP TABLE IF EXISTS audit_dead_letters');
  }
}
