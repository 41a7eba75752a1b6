import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 18 (least-privilege keys): `projects.key_scope`, what a project's key may do. `full` (the
 * default, and what every existing project gets): traffic and management; `traffic`: the proxy,
 * detect and sensor routes only. Plain SQL that PGlite and PostgreSQL both run.
 */
export class ProjectKeyScope1764400000000 implements MigrationInterface {
  name = 'ProjectKeyScope1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query("ALTER TABLE projects ADD COLUMN key_scope varchar(16) NOT NULL DEFAULT 'full' CHECK (key_scope IN ('full', 'traffic'))");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE projects DROP COLUMN IF EXISTS key_scope');
  }
}
