import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * policies.pii_regions: the ISO 3166-1 alpha-2 regions whose national phone formats pii/phone_number
 * reads. Existing policies get the default list (the column default, frozen here as it was when this
 * migration was written: a later change of DEFAULT_PII_REGIONS does not rewrite stored policies).
 * Plain SQL that PGlite and PostgreSQL both run.
 */
const DEFAULT_AT_MIGRATION: readonly string[] = [
  'US', 'CA', 'GB', 'IE', 'DE', 'AT', 'CH', 'FR', 'BE', 'NL', 'ES', 'PT', 'IT', 'SE', 'PL', 'JP', 'IN', 'AU', 'BR', 'MX',
];

export class PolicyPiiRegions1764100000000 implements MigrationInterface {
  name = 'PolicyPiiRegions1764100000000';

  async up(q: QueryRunner): Promise<void> {
    const literal = JSON.stringify(DEFAULT_AT_MIGRATION).replace(/'/g, "''");
    await q.query(`ALTER TABLE policies ADD COLUMN pii_regions jsonb NOT NULL DEFAULT '${literal}'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE policies DROP COLUMN IF EXISTS pii_regions');
  }
}
