import { openPGliteThread } from '../../../src/storage/pglite-thread';
import { openStorage } from '../../../src/storage/data-source';
import { prepareStorage } from '../../../src/storage/startup';

/**
 * The embedded database in its worker thread (src/storage/pglite-thread.ts): results cross the thread
 * boundary with their types, errors keep PostgreSQL's fields (TypeORM and the services read `code`),
 * statements are answered in order, and the storage layer works on it end to end.
 */
describe('PGlite in a worker thread', () => {
  it('answers queries with typed values, exec with one result per statement, and errors with their PostgreSQL fields', async () => {
    const db = await openPGliteThread(undefined);
    try {
      await db.exec(`CREATE TABLE t (id int PRIMARY KEY, doc jsonb, at timestamptz, tags text[], raw bytea); CREATE INDEX t_at ON t (at)`);
      const at = new Date('2026-01-02T03:04:05.678Z');
      const inserted = await db.query('INSERT INTO t VALUES ($1, $2, $3, $4, $5)', [1, JSON.stringify({ a: [1, 'x'] }), at.toISOString(), ['p', 'q'], new Uint8Array([1, 2, 3])]);
      expect(inserted.affectedRows).toBe(1);
      const { rows, fields } = await db.query('SELECT * FROM t WHERE id = $1', [1]);
      expect(fields.map((f) => f.name)).toEqual(['id', 'doc', 'at', 'tags', 'raw']);
      const row = rows[0] as { id: number; doc: unknown; at: Date; tags: string[]; raw: Uint8Array };
      expect(row.id).toBe(1);
      expect(row.doc).toEqual({ a: [1, 'x'] });
      // A Date (of the main realm: structured clone; jest runs tests in another realm, hence no instanceof).
      expect(Object.prototype.toString.call(row.at)).toBe('[object Date]');
      expect(new Date(row.at).toISOString()).toBe(at.toISOString());
      expect(row.tags).toEqual(['p', 'q']);
      expect(Array.from(row.raw)).toEqual([1, 2, 3]);

      const all = await db.exec('SELECT 1 AS one; SELECT 2 AS two');
      expect(all.map((r) => r.rows)).toEqual([[{ one: 1 }], [{ two: 2 }]]);

      const dup = (await db.query('INSERT INTO t (id) VALUES (1)').catch((e: unknown) => e)) as Error & Record<string, unknown>;
      expect(dup).toBeInstanceOf(Error);
      expect(dup.code).toBe('23505');
      expect(dup.constraint).toBe('t_pkey');
      expect(dup.message).toMatch(/duplicate key/);
      const syntax = (await db.query('SELEC 1').catch((e: unknown) => e)) as Error & Record<string, unknown>;
      expect(syntax.code).toBe('42601');

      // Many statements in flight at once are answered, each with its own result.
      const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => db.query('SELECT $1::int AS n', [i])));
      expect(answers.map((a) => (a.rows[0] as { n: number }).n)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    } finally {
      await db.close();
    }
    await expect(db.query('SELECT 1')).rejects.toThrow(/exited/);
  });

  it.each([
    ['in its worker thread (the default)', undefined],
    ['on the calling thread (embeddedThread: false)', false],
  ])('openStorage runs the embedded database %s, migrations and transactions included', async (_name, embeddedThread) => {
    const storage = await openStorage({ dataDir: 'memory://', embeddedThread });
    try {
      const outcome = await prepareStorage(storage, { bootstrapApiKey: 'svc_sk_' + 'A1b2C3d4'.repeat(5) });
      expect(outcome.created).toBe(true);
      const count = await storage.query<{ n: number }>('SELECT count(*)::int AS n FROM projects');
      expect(count[0]!.n).toBe(1);
      await expect(
        storage.dataSource.transaction(async (m) => {
          await m.query('DELETE FROM security_events');
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
    } finally {
      await storage.close();
    }
  });
});
