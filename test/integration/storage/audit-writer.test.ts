import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditBatchInserter } from '../../../src/management/events/audit-batch-inserter';
import { AuditSpool } from '../../../src/management/events/audit-spool';
import { eventFromJson, eventToJson, sanitizeEvent } from '../../../src/management/events/audit-sanitizer';
import { AuditWriter, type AuditEvent } from '../../../src/management/events/audit-writer';
import { createLogger } from '../../../src/shared/logger';
import { openStorage, type Storage } from '../../../src/storage/data-source';
import { prepareStorage } from '../../../src/storage/startup';
import { STORAGE_TARGETS, TEST_DATABASE_URL, freshStorage, postgresTarget } from '../../helpers/databases';
import { LogCapture } from '../../helpers/services';
import { TcpProxy } from '../../helpers/tcp-proxy';

/** Issue 16: no audit event is lost to a rejected row, a database outage or a shutdown. */

function event(i: number, over: Partial<AuditEvent> = {}): AuditEvent {
  return {
    organizationId: null, projectId: null, kind: 'request', path: '/v1/chat/completions', sessionId: `s-${i}`,
    model: 'gpt-4o', inputTokens: 10, findings: [], blocked: false, responseStatus: 200, latencyMs: 1.5,
    clientIp: '127.0.0.1', createdAt: new Date(), ...over,
  };
}

async function tenant(storage: Storage): Promise<{ org: string; live: string; deleted: string }> {
  const [org] = await storage.query<{ id: string }>(`INSERT INTO organizations (name) VALUES ('t') RETURNING id`);
  const project = async (n: number) =>
    (await storage.query<{ id: string }>(
      `INSERT INTO projects (organization_id, name, environment, key_hash, key_prefix) VALUES ($1, 'p', 'production', $2, 'svc_sk_x') RETURNING id`,
      [org!.id, String(n).repeat(64)],
    ))[0]!.id;
  const live = await project(1);
  const deleted = await project(2);
  await storage.query('DELETE FROM projects WHERE id = $1', [deleted]);
  return { org: org!.id, live, deleted };
}

const countEvents = async (s: Storage) => (await s.query<{ n: number }>('SELECT count(*)::int AS n FROM security_events'))[0]!.n;
const deadLetters = (s: Storage) =>
  s.query<{ event: AuditEvent & { createdAt: string }; error_code: string; constraint_name: string | null }>(
    'SELECT event, error_code, constraint_name FROM audit_dead_letters ORDER BY created_at',
  );

async function until(cond: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('audit writer on %s', (_name, target) => {
  it('a poison pill in the middle of a batch: every other event persisted, the rejected one dead-lettered', async () => {
    const db = await freshStorage(target);
    const logs = new LogCapture();
    const writer = new AuditWriter(db.storage, createLogger({ level: 'info', destination: logs }), { batchSize: 100, flushIntervalMs: 60_000 });
    try {
      await prepareStorage(db.storage, {});
      const t = await tenant(db.storage);
      const own = { organizationId: t.org, projectId: t.live };
      for (let i = 0; i < 100; i++) {
        if (i === 40) writer.record(event(i, { ...own, model: 'claude\u0000' }));
        else if (i === 60) writer.record(event(i, { organizationId: t.org, projectId: t.deleted }));
        else if (i === 70) writer.record(event(i, { ...own, path: '/x'.repeat(2000), model: 'm'.repeat(900), sessionId: 's-70'.padEnd(500, 'z') }));
        else writer.record(event(i, own));
      }
      await writer.flush();
      for (let i = 100; i < 150; i++) writer.record(event(i, own)); // persistence goes on after the pill
      await writer.flush();

      expect(await countEvents(db.storage)).toBe(149);
      const [nul] = await db.storage.query<{ model: string }>(`SELECT model FROM security_events WHERE session_id = 's-40'`);
      expect(nul!.model).toBe('claude');
      const [long] = await db.storage.query<{ p: number; m: number; s: number }>(
        `SELECT length(path) AS p, length(model) AS m, length(session_id) AS s FROM security_events WHERE session_id LIKE 's-70%'`,
      );
      expect(long).toEqual({ p: 512, m: 200, s: 128 });
      const dead = await deadLetters(db.storage);
      expect(dead).toHaveLength(1);
      expect(dead[0]).toMatchObject({ error_code: '23503', constraint_name: expect.stringContaining('project_id') });
      expect(dead[0]!.event).toMatchObject({ sessionId: 's-60', projectId: t.deleted });
      expect(writer.getStats()).toMatchObject({ written: 149, deadLettered: 1, lost: 0, dropped: 0, buffered: 0 });
      expect(logs.text).toMatch(/audit_dead_letters/);
      expect(logs.text).not.toMatch(/claude|s-60/); // no event content in logs
    } finally {
      await writer.close();
      await db.dispose();
    }
  });

  it('bisects a batch the database rejects (unsanitised NUL): the bad rows alone go to dead letter', async () => {
    const db = await freshStorage(target);
    try {
      await prepareStorage(db.storage, {});
      const inserter = new AuditBatchInserter(db.storage, createLogger({ level: 'silent' }));
      const rows = Array.from({ length: 64 }, (_, i) => event(i, i === 5 || i === 50 ? { model: `x\u0000${i}` } : {}));
      const out = await inserter.insert(rows);
      expect(out).toEqual({ written: 62, deadLettered: 2, lost: 0 });
      expect(await countEvents(db.storage)).toBe(62);
      const dead = await deadLetters(db.storage);
      expect(dead.map((d) => d.event.model).sort()).toEqual(['x5', 'x50']);
      expect(dead.every((d) => /^22/.test(d.error_code))).toBe(true); // class 22: data exception
    } finally {
      await db.dispose();
    }
  });

  it('a batch retried after its commit (the answer lost with the connection) is stored once', async () => {
    const db = await freshStorage(target);
    try {
      await prepareStorage(db.storage, {});
      const inserter = new AuditBatchInserter(db.storage, createLogger({ level: 'silent' }));
      const rows = Array.from({ length: 20 }, (_, i) => sanitizeEvent(event(i)));
      expect(new Set(rows.map((r) => r.id)).size).toBe(20);
      await inserter.insert(rows);
      await inserter.insert([...rows.slice(10), sanitizeEvent(event(20))]); // the same ids again, plus one new
      expect(await countEvents(db.storage)).toBe(21);
      // The id survives a spool round trip, so a replayed batch is recognised too.
      expect(eventFromJson(JSON.stringify(eventToJson(rows[3]!)))?.id).toBe(rows[3]!.id);
    } finally {
      await db.dispose();
    }
  });

  it('replays a spool left by an earlier run (shutdown during an outage) before new events', async () => {
    const db = await freshStorage(target);
    const dir = mkdtempSync(join(tmpdir(), 'gw-spool-'));
    const logger = createLogger({ level: 'silent' });
    try {
      await prepareStorage(db.storage, {});
      new AuditSpool(dir, 1 << 20, logger).append(Array.from({ length: 120 }, (_, i) => event(i)));
      const writer = new AuditWriter(db.storage, logger, { spool: new AuditSpool(dir, 1 << 20, logger), flushIntervalMs: 60_000 });
      writer.record(event(1000));
      await writer.close();
      expect(await countEvents(db.storage)).toBe(121);
      expect(writer.getStats()).toMatchObject({ written: 121, replayed: 120, spooled: 0, lost: 0, dropped: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await db.dispose();
    }
  });
});

const onPostgres = TEST_DATABASE_URL ? describe : describe.skip;

onPostgres('audit writer during a PostgreSQL outage (TCP proxy stopped and started)', () => {
  let db: Awaited<ReturnType<typeof freshStorage>>;
  let proxy: TcpProxy;
  let proxied: Storage;
  let dir: string;
  const logs = new LogCapture();
  const logger = createLogger({ level: 'info', destination: logs });

  beforeEach(async () => {
    db = await freshStorage(postgresTarget);
    await prepareStorage(db.storage, {});
    const url = new URL(db.options.databaseUrl!);
    proxy = new TcpProxy(url.hostname, Number(url.port || 5432));
    await proxy.start();
    url.hostname = '127.0.0.1';
    url.port = String(proxy.port);
    proxied = await openStorage({ databaseUrl: url.toString(), dataDir: 'memory://', poolSize: 2 });
    dir = mkdtempSync(join(tmpdir(), 'gw-spool-'));
  });
  afterEach(async () => {
    await proxy.start().catch(() => undefined);
    await proxied.close();
    await proxy.stop();
    rmSync(dir, { recursive: true, force: true });
    await db.dispose();
  });

  it('spools while the database is down and replays when it is back: 0 lost', async () => {
    const writer = new AuditWriter(proxied, logger, { spool: new AuditSpool(dir, 64 << 20, logger), batchSize: 50, flushIntervalMs: 50, maxRetryDelayMs: 200 });
    for (let i = 0; i < 100; i++) writer.record(event(i));
    await writer.flush();
    expect(writer.getStats().written).toBe(100);

    await proxy.stop();
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 15; i++) writer.record(event(100 + round * 15 + i));
      await new Promise((r) => setTimeout(r, 50));
    }
    await until(() => writer.getStats().buffered === 0, 5000);
    const during = writer.getStats();
    expect(during.outage).toBe(true);
    expect(during.spooled).toBe(300);

    await proxy.start();
    await until(() => !writer.getStats().outage && writer.getStats().spooled === 0 && writer.getStats().buffered === 0, 10_000);
    await writer.close();
    expect(await countEvents(db.storage)).toBe(400);
    expect(writer.getStats()).toMatchObject({ written: 400, replayed: 300, lost: 0, dropped: 0, deadLettered: 0 });
    expect(logs.text).toMatch(/database unavailable; spooling/);
  });

  it('shutdown during an outage spools everything; the next start writes it: 0 lost', async () => {
    const first = new AuditWriter(proxied, logger, { spool: new AuditSpool(dir, 64 << 20, logger), batchSize: 50, flushIntervalMs: 60_000, maxRetryDelayMs: 200 });
    await proxy.stop();
    for (let i = 0; i < 500; i++) first.record(event(i));
    await first.close();
    expect(first.getStats()).toMatchObject({ written: 0, spooled: 500, buffered: 0, lost: 0 });

    await proxy.start();
    const second = new AuditWriter(proxied, logger, { spool: new AuditSpool(dir, 64 << 20, logger), flushIntervalMs: 60_000 });
    await second.close();
    expect(await countEvents(db.storage)).toBe(500);
    expect(second.getStats()).toMatchObject({ replayed: 500, spooled: 0, lost: 0 });
  });

  it('shutdown under load: events recorded before and during close() are written, a straggler after it spooled: 0 lost', async () => {
    const writer = new AuditWriter(proxied, logger, { spool: new AuditSpool(dir, 64 << 20, logger) });
    let closing: Promise<void> | undefined;
    for (let i = 0; i < 5000; i++) {
      writer.record(event(i));
      if (i === 4800) closing = writer.close(); // while batches are in flight and thousands wait
      if (i % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    await closing;
    writer.record(event(5000)); // a straggler after close() completed: spooled at once
    const s = writer.getStats();
    expect(s.lost + s.dropped + s.buffered).toBe(0);
    expect(s.spooled).toBe(1);
    expect(s.written + s.spooled).toBe(5001);
    process.stderr.write(`[shutdown under load] written ${s.written}, spooled ${s.spooled}, lost ${s.lost}\n`);
    const next = new AuditWriter(proxied, logger, { spool: new AuditSpool(dir, 64 << 20, logger), flushIntervalMs: 60_000 });
    await next.close();
    expect(await countEvents(db.storage)).toBe(5001);
  });
});

describe('audit spool', () => {
  it('keeps under its size cap by dropping the oldest batches, counted and logged', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-spool-'));
    const logs = new LogCapture();
    try {
      const spool = new AuditSpool(dir, 40_000, createLogger({ level: 'info', destination: logs }));
      for (let b = 0; b < 10; b++) spool.append(Array.from({ length: 50 }, (_, i) => event(b * 50 + i, { organizationId: randomUUID() })));
      const s = spool.stats();
      expect(s.spoolBytes).toBeLessThanOrEqual(40_000);
      expect(s.spoolDropped).toBeGreaterThan(0);
      expect(s.spooled + s.spoolDropped).toBe(500);
      expect(spool.peek()!.events[0]!.sessionId).toBe(`s-${s.spoolDropped}`); // the oldest kept
      expect(logs.text).toMatch(/AUDIT_SPOOL_MAX_BYTES/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
