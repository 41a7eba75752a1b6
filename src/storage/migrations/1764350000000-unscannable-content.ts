import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 16 (nothing skipped silently):
 * - `policies.unscannable`: `block` / `allow` for request content no detector can read (images, audio,
 *   PDFs, file references); NULL = the automatic default (block when any detector blocks). Existing
 *   policies get NULL, i.e. the automatic default.
 * - `security_events.unscanned_content`: the JSON paths of such content in the request (a JSON array of
 *   strings); NULL on events without any (and on events written before this migration).
 * Plain SQL that PGlite and PostgreSQL both run.
 */
export class UnscannableContent1764350000000 implements MigrationInterface {
  name = 'UnscannableContent1764350000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query("ALTER TABLE policies ADD COLUMN unscannable varchar(8) NULL CHECK (unscannable IN ('block', 'allow'))");
    await q.query('ALTER TABLE security_events ADD COLUMN unscanned_content jsonb NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE security_events DROP COLUMN IF EXISTS unscanned_content');
    await q.query('ALTER TABLE policies DROP COLUMN IF EXISTS unscannable');
  }
}
