import { hashApiKey } from '../../../src/shared/api-key';
import { openStorage } from '../../../src/storage/data-source';
import { OrganizationEntity, PolicyEntity, ProjectEntity } from '../../../src/storage/entities';
import { MIGRATIONS } from '../../../src/storage/migrations';
import { prepareStorage } from '../../../src/storage/startup';
import { STORAGE_TARGETS, TEST_DATABASE_URL, freshStorage, postgresTarget, pgliteTarget } from '../../helpers/databases';

const KEY = 'svc_sk_' + 'A1b2C3d4'.repeat(5);

describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('storage on %s', (_name, target) => {
  it('migrates an empty database and bootstraps exactly once', async () => {
    const db = await freshStorage(target);
    try {
      const first = await prepareStorage(db.storage, { bootstrapApiKey: KEY });
      expect(first.created).toBe(true);
      if (!first.created) throw new Error('unreachable');
      expect(first.result.rawKey).toBe(KEY);
      expect(first.keyWasProvided).toBe(true);

      const tables = await db.storage.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
      );
      expect(tables.map((t) => t.table_name)).toEqual([
        'audit_dead_letters',
        'management_events',
        'organizations',
        'policies',
        'projects',
        'response_owners',
        'schema_migrations',
        'security_events',
      ]);

      const again = await prepareStorage(db.storage, { bootstrapApiKey: KEY });
      expect(again).toEqual({ created: false, bootstrapKeyKnown: true });
      const m = db.storage.dataSource.manager;
      expect(await m.count(OrganizationEntity)).toBe(1);
      expect(await m.count(PolicyEntity)).toBe(1);
      const projects = await m.find(ProjectEntity);
      expect(projects).toHaveLength(1);
      // Only the hash and display prefix are stored, never the raw key.
      expect(projects[0]!.keyHash).toBe(hashApiKey(KEY));
      expect(projects[0]!.keyPrefix).toBe(KEY.slice(0, 13));
      const dump = JSON.stringify(await db.storage.query('SELECT * FROM projects'));
      expect(dump).not.toContain(KEY);
      const policy = await m.findOneByOrFail(PolicyEntity, { organizationId: projects[0]!.organizationId });
      expect(policy.isDefault).toBe(true);
      expect(policy.inputDetectors.map((d) => d.detector_type)).toContain('pii/email');
    } finally {
      await db.dispose();
    }
  });

  it('generates a fresh key when no bootstrap key is given', async () => {
    const db = await freshStorage(target);
    try {
      const out = await prepareStorage(db.storage);
      if (!out.created) throw new Error('expected a bootstrap');
      expect(out.keyWasProvided).toBe(false);
      expect(out.result.rawKey).toMatch(/^svc_sk_[A-Za-z0-9]{40}$/);
    } finally {
      await db.dispose();
    }
  });

  it('enforces one default policy per organization and same-organization policy references', async () => {
    const db = await freshStorage(target);
    try {
      const out = await prepareStorage(db.storage);
      if (!out.created) throw new Error('expected a bootstrap');
      const { organizationId, projectId } = out.result;
      await expect(
        db.storage.query(
          `INSERT INTO policies (organization_id, name, policy_mode, is_default) VALUES ($1, 'second default', 'IO', true)`,
          [organizationId],
        ),
      ).rejects.toThrow(/policies_one_default_per_org|duplicate key/);

      const [other] = await db.storage.query<{ id: string }>(`INSERT INTO organizations (name) VALUES ('other') RETURNING id`);
      const [foreign] = await db.storage.query<{ id: string }>(
        `INSERT INTO policies (organization_id, name, policy_mode) VALUES ($1, 'theirs', 'IO') RETURNING id`,
        [other!.id],
      );
      await expect(
        db.storage.query(`UPDATE projects SET policy_id = $1 WHERE id = $2`, [foreign!.id, projectId]),
      ).rejects.toThrow(/projects_policy_same_org_fk|foreign key/);

      // Deleting an assigned policy unassigns the project (it falls back to the default).
      const [own] = await db.storage.query<{ id: string }>(
        `INSERT INTO policies (organization_id, name, policy_mode) VALUES ($1, 'mine', 'I') RETURNING id`,
        [organizationId],
      );
      await db.storage.query(`UPDATE projects SET policy_id = $1 WHERE id = $2`, [own!.id, projectId]);
      await db.storage.query(`DELETE FROM policies WHERE id = $1`, [own!.id]);
      const [row] = await db.storage.query<{ policy_id: string | null; organization_id: string }>(
        `SELECT policy_id, organization_id FROM projects WHERE id = $1`,
        [projectId],
      );
      expect(row).toEqual({ policy_id: null, organization_id: organizationId });
    } finally {
      await db.dispose();
    }
  });

  it('keeps concurrent transactions apart', async () => {
    const db = await freshStorage(target);
    try {
      await prepareStorage(db.storage);
      const ds = db.storage.dataSource;
      // Two transactions at once: one rolls back, one commits; neither may see or undo the other's work.
      const failing = ds.transaction(async (m) => {
        await m.query(`INSERT INTO organizations (name) VALUES ('rolled-back')`);
        await new Promise((r) => setTimeout(r, 50));
        throw new Error('abort');
      });
      const succeeding = ds.transaction(async (m) => {
        await m.query(`INSERT INTO organizations (name) VALUES ('committed')`);
      });
      await expect(failing).rejects.toThrow('abort');
      await succeeding;
      const names = (await db.storage.query<{ name: string }>(`SELECT name FROM organizations ORDER BY name`)).map((r) => r.name);
      expect(names).toEqual(['Default organization', 'committed']);
    } finally {
      await db.dispose();
    }
  });
});

describe('embedded database', () => {
  it('persists under DATA_DIR across restarts and refuses a second opener', async () => {
    const db = await pgliteTarget.create();
    try {
      const a = await openStorage({ dataDir: db.dataDir });
      const first = await prepareStorage(a);
      if (!first.created) throw new Error('expected a bootstrap');
      await expect(openStorage({ dataDir: db.dataDir })).rejects.toThrow(/already open in this process|in use/);
      await a.close();

      const b = await openStorage({ dataDir: db.dataDir });
      try {
        const second = await prepareStorage(b);
        expect(second.created).toBe(false);
        const [row] = await b.query<{ key_hash: string }>(`SELECT key_hash FROM projects`);
        expect(row!.key_hash).toBe(hashApiKey(first.result.rawKey));
      } finally {
        await b.close();
      }
    } finally {
      await db.cleanup();
    }
  });
});

(TEST_DATABASE_URL ? describe : describe.skip)('PostgreSQL concurrent start', () => {
  it('two instances starting at once migrate and bootstrap exactly once', async () => {
    const db = await postgresTarget.create();
    const a = await openStorage({ databaseUrl: db.databaseUrl, dataDir: 'memory://', poolSize: 3 });
    const b = await openStorage({ databaseUrl: db.databaseUrl, dataDir: 'memory://', poolSize: 3 });
    try {
      const outcomes = await Promise.all([prepareStorage(a), prepareStorage(b)]);
      expect(outcomes.filter((o) => o.created)).toHaveLength(1);
      const [counts] = await a.query<{ orgs: number; policies: number; projects: number; migrations: number }>(
        `SELECT (SELECT count(*)::int FROM organizations) AS orgs, (SELECT count(*)::int FROM policies) AS policies,
                (SELECT count(*)::int FROM projects) AS projects, (SELECT count(*)::int FROM schema_migrations) AS migrations`,
      );
      // Each migration recorded once (not once per instance).
      expect(counts).toEqual({ orgs: 1, policies: 1, projects: 1, migrations: MIGRATIONS.length });
    } finally {
      await a.close();
      await b.close();
      await db.cleanup();
    }
  });
});
