import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `response_owners`: the organization and project that created each stored response of the Responses
 * API through the gateway (all tenants share the gateway's provider account, so the provider cannot tell
 * them apart). Reads, deletes and `previous_response_id` of a response not recorded for the caller's
 * organization are answered 404. Deleted with the organization; no foreign key on the project (the
 * organization keeps access when the project that created it is deleted). `created_at` indexed for
 * clean-ups by age. Plain SQL that PGlite and PostgreSQL both run.
 */
export class ResponseOwners1764800000000 implements MigrationInterface {
  name = 'ResponseOwners1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE response_owners (
        response_id varchar(255) PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        project_id uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query('CREATE INDEX response_owners_org_idx ON response_owners (organization_id)');
    await q.query('CREATE INDEX response_owners_created_idx ON response_owners (created_at)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE IF EXISTS response_owners');
  }
}
