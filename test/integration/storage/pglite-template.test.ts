import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { openStorage } from '../../../src/storage/data-source';
import { availablePGliteTemplate, seedFromTemplate } from '../../../src/storage/pglite-template';
import { prepareStorage } from '../../../src/storage/startup';

/**
 * The embedded database's first start from the install-time template (src/storage/pglite-template.ts):
 * an empty data directory gets a copy of the template cluster (no initdb), a directory that holds a
 * database is never overwritten, and the database runs with the reduced shared_buffers.
 */
describe('PGlite template', () => {
  let root: string;
  let template: string;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'pglite-template-'));
    template = join(root, 'template');
    // A template with a marker table: a database opened from a copy has it, one made by initdb does not.
    // Made from a copy of the build's own template when there is one (an initdb takes seconds).
    const built = availablePGliteTemplate();
    if (built) cpSync(built, template, { recursive: true });
    const db = await PGlite.create({ dataDir: template });
    await db.exec('CREATE TABLE template_marker (id int)');
    await db.close();
  }, 120_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('copies the template into an empty data directory, and the storage layer opens and migrates that copy', async () => {
    const dataDir = join(root, 'data-1');
    const dir = join(dataDir, 'pglite');
    mkdirSync(dir, { recursive: true });
    expect(seedFromTemplate(dir, template)).toBe(true);
    expect(existsSync(join(dir, 'PG_VERSION'))).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(readdirSync(template).sort());

    const storage = await openStorage({ dataDir });
    try {
      expect(await storage.query(`SELECT to_regclass('template_marker') IS NOT NULL AS copied`)).toEqual([{ copied: true }]);
      const outcome = await prepareStorage(storage);
      expect(outcome.created).toBe(true);
      expect(await storage.query('SHOW shared_buffers')).toEqual([{ shared_buffers: '16MB' }]);
    } finally {
      await storage.close();
    }
  }, 120_000);

  it('never copies over a data directory that holds a database, nor without a template', async () => {
    const dir = join(root, 'data-2');
    mkdirSync(dir, { recursive: true });
    expect(seedFromTemplate(dir, join(root, 'no-such-template'))).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
    expect(seedFromTemplate(dir, template)).toBe(true);
    const db = await PGlite.create({ dataDir: dir });
    await db.exec('DROP TABLE template_marker; CREATE TABLE own_data (id int)');
    await db.close();
    expect(seedFromTemplate(dir, template)).toBe(false);
    const again = await PGlite.create({ dataDir: dir });
    try {
      expect((await again.query(`SELECT to_regclass('own_data') IS NOT NULL AS own, to_regclass('template_marker') IS NOT NULL AS marker`)).rows).toEqual([{ own: true, marker: false }]);
    } finally {
      await again.close();
    }
  }, 120_000);
});
