import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 18, items 7 and 8:
 * - `management_events`: the management audit trail. One row per change to a policy or project (create,
 *   update, delete, duplicate, set_default, rotate_key, ...), written in the transaction of the change.
 *   Who (acting project id and key prefix, never the key or its hash), what (entity type, id, action),
 *   when, and the resource as the API shows it before and after (JSON, secrets redacted).
 *   No foreign key on the actor or the entity: the record outlives a deleted project or policy. The
 *   organization's rows go with the organization.
 * - `security_events (created_at)`: the retention job deletes the oldest events in batches across all
 *   organizations; the existing index leads with organization_id and cannot serve that range.
 * Plain SQL that PGlite and PostgreSQL both run.
 */
export class ManagementEvents1764600000000 implements MigrationInterface {
  name = 'ManagementEvents1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE management_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        actor_project_id uuid NULL,
        actor_key_prefix varchar(32) NULL,
        entity_type varchar(16) NOT NULL,
        entity_id uuid NOT NULL,
        action varchar(32) NOT NULL,
        before jsonb NULL,
        after jsonb NULL,
        details jsonb NULL,
        request_id varchar(128) NULL,
        via varchar(16) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query('CREATE INDEX management_events_org_created_idx ON management_events (organization_id, created_at DESC, id DESC)');
    await q.query('CREATE INDEX management_events_org_entity_idx ON management_events (organization_id, entity_type, entity_id)');
    await q.query('CREATE INDEX management_events_created_idx ON management_events (created_at)');
    // IF NOT EXISTS: on a large table an operator may build it beforehand with CREATE INDEX CONCURRENTLY.
    await q.query('CREATE INDEX IF NOT EXISTS security_events_created_idx ON security_events (created_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS security_events_created_idx');
    await q.query('DROP TABLE IF EXISTS management_events');
  }
}
