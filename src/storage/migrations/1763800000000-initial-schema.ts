import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Initial schema. Runs unchanged on PGlite (PostgreSQL 17) and PostgreSQL ≥ 15 (column-list
 * `ON DELETE SET NULL (policy_id)` needs 15). Ids use the built-in gen_random_uuid().
 *
 * Invariants enforced by the database itself:
 * - at most one default policy per organization (partial unique index);
 * - a project can only reference a policy of its own organization (composite foreign key), and
 *   deleting that policy unassigns the project (it falls back to the organization default);
 * - API keys are unique by hash.
 */
export class InitialSchema1763800000000 implements MigrationInterface {
  name = 'InitialSchema1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE organizations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name varchar(200) NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE policies (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        name varchar(200) NOT NULL,
        policy_mode varchar(2) NOT NULL CHECK (policy_mode IN ('IO', 'I', 'O')),
        is_default boolean NOT NULL DEFAULT false,
        input_detectors jsonb NOT NULL DEFAULT '[]',
        output_detectors jsonb NOT NULL DEFAULT '[]',
        allow_list jsonb NOT NULL DEFAULT '{"entries": [], "match_type": "contains"}',
        deny_list jsonb NOT NULL DEFAULT '{"entries": [], "match_type": "contains"}',
        custom_detectors jsonb NOT NULL DEFAULT '[]',
        rate_limits jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT policies_id_org_unique UNIQUE (id, organization_id)
      )`);
    await q.query(`CREATE INDEX policies_org_created_idx ON policies (organization_id, created_at)`);
    await q.query(`CREATE UNIQUE INDEX policies_one_default_per_org ON policies (organization_id) WHERE is_default`);
    await q.query(`
      CREATE TABLE projects (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        name varchar(200) NOT NULL,
        environment varchar(32) NOT NULL CHECK (environment IN ('production', 'staging', 'development')),
        policy_id uuid NULL,
        key_hash char(64) NOT NULL,
        key_prefix varchar(32) NOT NULL,
        is_active boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz NULL,
        CONSTRAINT projects_key_hash_unique UNIQUE (key_hash),
        CONSTRAINT projects_policy_same_org_fk FOREIGN KEY (policy_id, organization_id)
          REFERENCES policies (id, organization_id) ON DELETE SET NULL (policy_id)
      )`);
    await q.query(`CREATE INDEX projects_org_created_idx ON projects (organization_id, created_at)`);
    await q.query(`CREATE INDEX projects_policy_idx ON projects (policy_id)`);
    await q.query(`
      CREATE TABLE security_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NULL REFERENCES organizations(id) ON DELETE CASCADE,
        project_id uuid NULL REFERENCES projects(id) ON DELETE SET NULL,
        kind varchar(32) NOT NULL,
        path varchar(512) NOT NULL,
        session_id varchar(128) NULL,
        model varchar(200) NULL,
        input_tokens integer NULL,
        findings jsonb NOT NULL DEFAULT '[]',
        blocked boolean NOT NULL DEFAULT false,
        response_status integer NOT NULL,
        latency_ms double precision NOT NULL,
        client_ip varchar(64) NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX security_events_org_created_idx ON security_events (organization_id, created_at DESC)`);
    await q.query(`CREATE INDEX security_events_org_session_idx ON security_events (organization_id, session_id)`);
    await q.query(`CREATE INDEX security_events_org_path_idx ON security_events (organization_id, path)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE IF EXISTS security_events');
    await q.query('DROP TABLE IF EXISTS projects');
    await q.query('DROP TABLE IF EXISTS policies');
    await q.query('DROP TABLE IF EXISTS organizations');
  }
}
