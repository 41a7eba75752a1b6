import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 18 (request ids): `security_events.request_id`, the request's X-Request-Id (the client's when it
 * sent a valid one, else the UUID the service generated), so a client's failure can be found in the audit
 * trail. NULL on events written before this migration. Indexed per organization for the `request_id`
 * filter of GET /v1/events/ and the GraphQL events query. Plain SQL that PGlite and PostgreSQL both run.
 */
export class AuditRequestId1764500000000 implements MigrationInterface {
  name = 'AuditRequestId1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE security_events ADD COLUMN request_id varchar(128) NULL');
    await q.query('CREATE INDEX security_events_org_request_id ON security_events (organization_id, request_id) WHERE request_id IS NOT NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS security_events_org_request_id');
    await q.query('ALTER TABLE security_events DROP COLUMN IF EXISTS request_id');
  }
}
