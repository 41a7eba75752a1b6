import { AuditRetention } from '../../../src/management/events/audit-retention';
import { createLogger } from '../../../src/shared/logger';
import { openStorage, type Storage } from '../../../src/storage/data-source';
import { prepareStorage } from '../../../src/storage/startup';
import { STORAGE_TARGETS, TEST_DATABASE_URL, freshStorage, postgresBehindProxy } from '../../helpers/databases';
import { LogCapture } from '../../helpers/services';
import { until } from '../../helpers/until';

/** Issue 18, item 8: audit records past their retention are deleted in batches, in the background. */

const DAY_MS = 86_400_000;

function retention(storage: Storage, o: { auditDays?: number; managementDays?: number; batchSize?: number; intervalMs?: number; logs?: LogCapture }) {
  return new AuditRetention(storage, {
    auditDays: o.auditDays ?? 0,
    managementDays: o.managementDays ?? 0,
    batchSize: o.batchSize ?? 1000,
    intervalMs: o.intervalMs ?? 3_600_000,
    logger: createLogger({ level: 'info', destination: o.logs ?? new LogCapture() }),
  });
}

/** A tenant, then `n` security events, dead letters and management records created `ageDays` ago. */
async function seed(storage: Storage, counts: { old: number; recent: number }): Promise<{ org: string; oldIds: string[]; recentIds: string[] }> {
  const [org] = await storage.query<{ id: string }>(`INSERT INTO organizations (name) VALUES ('retention') RETURNING id`);
  const at = (ageDays: number) => new Date(Date.now() - ageDays * DAY_MS).toISOString();
  const insert = async (ageDays: number): Promise<string> => {
    const [row] = await storage.query<{ id: string }>(
      `INSERT INTO security_events (organization_id, kind, path, response_status, latency_ms, created_at)
       VALUES ($1, 'request', '/v1/detect', 200, 1, $2) RETURNING id`,
      [org!.id, at(ageDays)],
    );
    await storage.query(`INSERT INTO audit_dead_letters (event, error_code, created_at) VALUES ('{}'::jsonb, '23503', $1)`, [at(ageDays)]);
    await storage.query(
      `INSERT INTO management_events (organization_id, entity_type, entity_id, action, via, created_at)
       VALUES ($1, 'policy', gen_random_uuid(), 'update', 'rest', $2)`,
      [org!.id, at(ageDays)],
    );
    return row!.id;
  };
  const oldIds: string[] = [];
  const recentIds: string[] = [];
  for (let i = 0; i < counts.old; i++) oldIds.push(await insert(40 + i));
  for (let i = 0; i < counts.recent; i++) recentIds.push(await insert(i % 2 === 0 ? 0 : 29));
  return { org: org!.id, oldIds, recentIds };
}

const count = async (s: Storage, table: string) => (await s.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n;

describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('audit retention on %s', (_name, target) => {
  let db: Awaited<ReturnType<typeof freshStorage>>;

  beforeEach(async () => {
    db = await freshStorage(target);
    await prepareStorage(db.storage);
    // Bootstrap recorded the first organization's provisioning: start from an empty trail.
    await db.storage.query('DELETE FROM management_events');
  });
  afterEach(async () => {
    await db?.dispose();
  });

  it('deletes security events and dead letters older than AUDIT_RETENTION_DAYS, in batches, and keeps the rest', async () => {
    const { recentIds } = await seed(db.storage, { old: 7, recent: 4 });
    const job = retention(db.storage, { auditDays: 30, batchSize: 3 });
    const run = await job.runOnce();
    // 7 old rows in batches of 3: 3 + 3 + 1.
    expect(run).toEqual({ deleted: { security_events: 7, audit_dead_letters: 7 }, skipped: false });
    const left = await db.storage.query<{ id: string }>('SELECT id FROM security_events ORDER BY id');
    expect(left.map((r) => r.id)).toEqual([...recentIds].sort());
    expect(await count(db.storage, 'audit_dead_letters')).toBe(4);
    // MANAGEMENT_AUDIT_RETENTION_DAYS 0: the management trail is kept whole.
    expect(await count(db.storage, 'management_events')).toBe(11);
    // Idempotent: a second run finds nothing more.
    expect((await job.runOnce()).deleted).toEqual({ security_events: 0, audit_dead_letters: 0 });
    await job.close();
  });

  it('applies MANAGEMENT_AUDIT_RETENTION_DAYS to the management trail on its own', async () => {
    await seed(db.storage, { old: 3, recent: 2 });
    const job = retention(db.storage, { managementDays: 35 });
    expect(await job.runOnce()).toEqual({ deleted: { management_events: 3 }, skipped: false });
    expect(await count(db.storage, 'management_events')).toBe(2);
    expect(await count(db.storage, 'security_events')).toBe(5);
    await job.close();
  });

  it('with every retention 0 (the default) starts no timer and deletes nothing', async () => {
    await seed(db.storage, { old: 2, recent: 1 });
    const job = retention(db.storage, { intervalMs: 10 });
    expect(job.targets).toEqual([]);
    job.start();
    expect(await job.runOnce()).toEqual({ deleted: {}, skipped: false });
    expect(await count(db.storage, 'security_events')).toBe(3);
    await job.close();
  });

  it('runs by itself every AUDIT_RETENTION_INTERVAL_MS, catching rows that age in later', async () => {
    await seed(db.storage, { old: 5, recent: 1 });
    const logs = new LogCapture();
    const job = retention(db.storage, { auditDays: 30, managementDays: 30, intervalMs: 100, logs });
    job.start();
    await until(async () => ((await count(db.storage, 'security_events')) === 1 ? true : undefined), 10_000);
    await until(async () => ((await count(db.storage, 'management_events')) === 1 ? true : undefined), 10_000);
    // A row written "old" after the first run is caught by a later one.
    await seed(db.storage, { old: 2, recent: 0 });
    await until(async () => ((await count(db.storage, 'security_events')) === 1 ? true : undefined), 10_000);
    await job.close();
    expect(logs.text).toContain('audit retention: deleted records past their retention');
  });

  it('skips its round while another instance holds the retention lock, and finishes the work next time', async () => {
    await seed(db.storage, { old: 4, recent: 0 });
    const job = retention(db.storage, { auditDays: 30 });
    const runner = db.storage.dataSource.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    try {
      await runner.query('SELECT pg_advisory_xact_lock($1)', [7_428_571_730_002]);
      if (target.name === 'postgres') {
        // Another replica mid-batch: this round is skipped, nothing is deleted twice, nothing blocks.
        const run = await job.runOnce();
        expect(run.skipped).toBe(true);
        expect(await count(db.storage, 'security_events')).toBe(4);
      }
    } finally {
      await runner.commitTransaction();
      await runner.release();
    }
    expect((await job.runOnce()).deleted.security_events).toBe(4);
    await job.close();
  });
});

const pgOnly = TEST_DATABASE_URL ? describe : describe.skip;

pgOnly('audit retention on postgres: several replicas and outages', () => {
  it('two replicas running at once delete every old row exactly once, without errors', async () => {
    const db = await freshStorage(STORAGE_TARGETS.find((t) => t.name === 'postgres')!);
    const other = await openStorage({ databaseUrl: db.options.databaseUrl, dataDir: 'memory://', poolSize: 4 });
    try {
      await prepareStorage(db.storage);
      await db.storage.query('DELETE FROM management_events');
      await seed(db.storage, { old: 40, recent: 5 });
      const logs = new LogCapture();
      const a = retention(db.storage, { auditDays: 30, managementDays: 30, batchSize: 4, logs });
      const b = retention(other, { auditDays: 30, managementDays: 30, batchSize: 4, logs });
      const runs = await Promise.all([a.runOnce(), b.runOnce()]);
      // A concurrent call on the same instance shares its run instead of starting a second one. That run
      // counts too: when both rounds above were cut short by the other's lock, it deletes what they left.
      const shared = a.runOnce();
      expect(a.runOnce()).toBe(shared);
      runs.push(await shared);
      // Whatever a skipped round left, one more run each finishes.
      runs.push(await a.runOnce(), await b.runOnce());
      const total = (t: 'security_events' | 'management_events') => runs.reduce((sum, r) => sum + (r.deleted[t] ?? 0), 0);
      expect(total('security_events')).toBe(40);
      expect(total('management_events')).toBe(40);
      expect(await count(db.storage, 'security_events')).toBe(5);
      expect(logs.text).not.toContain('retention run failed');
      await Promise.all([a.close(), b.close()]);
    } finally {
      await other.close();
      await db.dispose();
    }
  });

  it('a database that is down fails the run quietly (logged, no throw) and the next run catches up', async () => {
    const { target, state } = postgresBehindProxy();
    const db = await target.create();
    const storage = await openStorage({ databaseUrl: db.databaseUrl, dataDir: 'memory://', poolSize: 2, connectTimeoutMs: 500, statementTimeoutMs: 1000 });
    try {
      await prepareStorage(storage);
      await seed(storage, { old: 3, recent: 1 });
      const logs = new LogCapture();
      const job = retention(storage, { auditDays: 30, intervalMs: 100, logs });
      await state.proxy!.stop();
      await expect(job.runOnce()).resolves.toEqual({ deleted: {}, skipped: false });
      expect(logs.text).toContain('audit retention run failed; retrying at the next interval');
      job.start(); // the timer keeps going through the outage
      await new Promise((r) => setTimeout(r, 300));
      await state.proxy!.start();
      await until(async () => ((await count(storage, 'security_events').catch(() => -1)) === 1 ? true : undefined), 15_000);
      await job.close();
    } finally {
      await storage.close();
      await state.proxy?.stop();
      await db.cleanup();
    }
  });
});
