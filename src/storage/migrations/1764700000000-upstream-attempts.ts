import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 19 (several upstreams): `security_events.provider`, the upstream provider that gave the answer
 * (a PROVIDERS_FILE provider name, `openai` for the single OPENAI_BASE_URL upstream), and
 * `security_events.upstream_attempts`, every attempt in order (provider, model, status or error kind,
 * duration_ms). NULL on events written before this migration and on requests that never went upstream.
 * Plain SQL that PGlite and PostgreSQL both run.
 */
export class UpstreamAttempts1764700000000 implements MigrationInterface {
  name = 'UpstreamAttempts1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE security_events ADD COLUMN provider varchar(64) NULL');
    await q.query('ALTER TABLE security_events ADD COLUMN upstream_attempts jsonb NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE security_events DROP COLUMN IF EXISTS upstream_attempts');
    await q.query('ALTER TABLE security_events DROP COLUMN IF EXISTS provider');
  }
}
