import { STORAGE_TARGETS } from '../helpers/databases';
import { newOrganization, restClient, type Json } from '../helpers/management-clients';
import { postJson, startTestServices, type TestServices } from '../helpers/services';
import { until } from '../helpers/until';

/**
 * Issue 18, item 8, end to end: with AUDIT_RETENTION_DAYS / MANAGEMENT_AUDIT_RETENTION_DAYS set, the
 * running service deletes security events and management records past their retention by itself
 * (a short AUDIT_RETENTION_INTERVAL_MS drives it), and keeps the recent ones.
 */

const DAY_MS = 86_400_000;

describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('audit retention in the running service on %s', (_name, target) => {
  let svc: TestServices;

  beforeAll(async () => {
    svc = await startTestServices(target, {
      services: ['detection', 'gateway'],
      env: { AUDIT_RETENTION_DAYS: '30', MANAGEMENT_AUDIT_RETENTION_DAYS: '365', AUDIT_RETENTION_INTERVAL_MS: '200', AUDIT_RETENTION_BATCH_SIZE: '2' },
    });
  });
  afterAll(async () => {
    await svc?.dispose();
  });

  it('deletes what is past its retention in the background and keeps the rest', async () => {
    const org = await newOrganization(svc, 'retention-e2e');
    const rest = restClient(svc.gatewayUrl, org.rawKey);
    const storage = svc.running.storage!;
    const ago = (days: number) => new Date(Date.now() - days * DAY_MS).toISOString();

    // A real request (a fresh event) and a real management change (a fresh record).
    expect((await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'hello', direction: 'input' }, { authorization: `Bearer ${org.rawKey}` })).status).toBe(200);
    expect((await rest.post('/v1/policies/', { name: 'Kept' })).status).toBe(201);
    await until(async () => ((await rest.get('/v1/events/')).json.count === 1 ? true : undefined));

    // Old rows, as if written long ago: 5 security events at 31-35 days, management records at 400 and 300 days.
    // They are written with the current time and aged once the API has shown them: the retention job runs
    // every 200 ms, so rows written old could be deleted before the counts below are read (it happened with
    // another suite on the second core), and then the counts would not prove the API sees these rows.
    const now = new Date().toISOString();
    const aged: Array<{ table: 'security_events' | 'management_events'; id: string; days: number }> = [];
    for (let i = 0; i < 5; i++) {
      const [row] = (await storage.query(
        `INSERT INTO security_events (organization_id, project_id, kind, path, response_status, latency_ms, created_at)
         VALUES ($1, $2, 'request', '/v1/detect', 200, 1, $3) RETURNING id`,
        [org.organizationId, org.projectId, now],
      )) as Array<{ id: string }>;
      aged.push({ table: 'security_events', id: row!.id, days: 31 + i });
    }
    for (const days of [400, 300]) {
      const [row] = (await storage.query(
        `INSERT INTO management_events (organization_id, entity_type, entity_id, action, via, created_at) VALUES ($1, 'policy', $2, 'update', 'rest', $3) RETURNING id`,
        [org.organizationId, org.policyId, now],
      )) as Array<{ id: string }>;
      aged.push({ table: 'management_events', id: row!.id, days });
    }
    expect((await rest.get('/v1/events/')).json.count).toBe(6);
    expect((await rest.get('/v1/management_events/')).json.count).toBe(5); // 2 of provisioning, 1 create, 2 old
    // Aged one by one; the waits below fail if an id matched nothing (that row would never be deleted).
    for (const { table, id, days } of aged) await storage.query(`UPDATE ${table} SET created_at = $2 WHERE id = $1`, [id, ago(days)]);

    await until(async () => ((await rest.get('/v1/events/')).json.count === 1 ? true : undefined), 15_000);
    await until(async () => ((await rest.get('/v1/management_events/')).json.count === 4 ? true : undefined), 15_000);
    const events = (await rest.get('/v1/events/')).json as Json;
    expect(events.results[0].path).toBe('/v1/detect');
    expect(Date.now() - Date.parse(events.results[0].created_at)).toBeLessThan(DAY_MS);
    const trail = (await rest.get('/v1/management_events/')).json as Json;
    expect(trail.results.map((r: Json) => r.action).sort()).toEqual(['create', 'create', 'create', 'update']);
    expect(Date.now() - Date.parse(trail.results.find((r: Json) => r.action === 'update').created_at)).toBeGreaterThan(299 * DAY_MS);
    expect(svc.logs.text).toContain('audit retention: deleted records past their retention');
    expect(svc.logs.text).not.toContain('audit retention run failed');
  });
});
