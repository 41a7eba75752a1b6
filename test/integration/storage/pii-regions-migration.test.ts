import { DEFAULT_PII_REGIONS } from '../../../src/shared/policy';
import { InitialSchema1763800000000 } from '../../../src/storage/migrations/1763800000000-initial-schema';
import { PolicyPiiRegions1764100000000 } from '../../../src/storage/migrations/1764100000000-policy-pii-regions';
import { STORAGE_TARGETS, freshStorage } from '../../helpers/databases';

/** The pii_regions migration on a database that already holds policies (PGlite, and PostgreSQL when configured). */
describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('pii_regions migration on %s', (_name, target) => {
  it('gives existing policies the default regions, and down() removes the column', async () => {
    const db = await freshStorage(target);
    const runner = db.storage.dataSource.createQueryRunner();
    try {
      await new InitialSchema1763800000000().up(runner);
      const [org] = await runner.query(`INSERT INTO organizations (name) VALUES ('old org') RETURNING id`);
      await runner.query(`INSERT INTO policies (organization_id, name, policy_mode) VALUES ($1, 'before the field', 'IO')`, [org.id]);

      await new PolicyPiiRegions1764100000000().up(runner);
      const rows = await runner.query(`SELECT pii_regions FROM policies`);
      expect(rows).toEqual([{ pii_regions: [...DEFAULT_PII_REGIONS] }]);
      // New rows written without the column get the default too; an explicit list is kept.
      await runner.query(`INSERT INTO policies (organization_id, name, policy_mode, pii_regions) VALUES ($1, 'fr', 'IO', '["FR"]')`, [org.id]);
      const fr = await runner.query(`SELECT pii_regions FROM policies WHERE name = 'fr'`);
      expect(fr).toEqual([{ pii_regions: ['FR'] }]);

      await new PolicyPiiRegions1764100000000().down(runner);
      const columns = await runner.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'policies' AND column_name = 'pii_regions'`);
      expect(columns).toEqual([]);
    } finally {
      await runner.release();
      await db.dispose();
    }
  });
});
