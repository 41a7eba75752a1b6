import { generateApiKey } from '../../src/shared/api-key';
import { openStorage } from '../../src/storage/data-source';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/fake-anthropic';
import { STORAGE_TARGETS } from '../helpers/databases';
import { postJson, startTestServices, type TestServices } from '../helpers/services';

type Json = Record<string, any>;

const body = (content: string) => ({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content }] });

describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('audit events on %s', (_name, target) => {
  let upstream: FakeAnthropic;
  beforeAll(async () => {
    upstream = await startFakeAnthropic();
  });
  afterAll(async () => {
    await upstream.close();
  });

  it('N concurrent requests then a graceful shutdown leave exactly N events, none with secrets or content', async () => {
    const svc = await startTestServices(target, { env: { ANTHROPIC_BASE_URL: upstream.url } });
    let closed = false;
    try {
      const session = '5f0c2a57-2a7e-4d0e-9a51-7c8f5b8b1e01';
      const sensor = (content: string, key = svc.apiKey) =>
        postJson(`${svc.sensorUrl}/v1/messages`, body(content), {
          'x-svc-key': key,
          'x-agent-session-id': session,
          authorization: 'Bearer upstream-secret-token',
          'anthropic-version': '2023-06-01',
        });
      upstream.delayMs = 30;
      const calls = [
        ...Array.from({ length: 30 }, (_, i) => sensor(`question ${i} from dev${i}@acme-corp.com`)),
        ...Array.from({ length: 10 }, () => postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'hello' }, { authorization: `Bearer ${svc.apiKey}` })),
        ...Array.from({ length: 5 }, () => sensor('hi', generateApiKey())),
      ];
      const results = await Promise.all(calls);
      // Counted per status, so a failure names the odd answers (status and body), not only a length.
      const odd = results.filter((r) => r.status !== 200 && r.status !== 401).map((r) => `${r.status} ${r.text.slice(0, 300)}`);
      expect(odd).toEqual([]);
      expect(results.filter((r) => r.status === 200)).toHaveLength(40);
      expect(results.filter((r) => r.status === 401)).toHaveLength(5);
      await svc.running.close();
      closed = true;

      const storage = await openStorage({ databaseUrl: svc.databaseUrl, dataDir: svc.dataDir });
      try {
        const rows = await storage.query<Json>('SELECT * FROM security_events ORDER BY created_at');
        expect(rows).toHaveLength(45);
        const sensorRows = rows.filter((r) => r.path === '/v1/messages' && r.kind === 'request');
        expect(sensorRows).toHaveLength(30);
        for (const r of sensorRows) {
          expect(r).toMatchObject({ session_id: session, model: 'claude-sonnet-4-5', response_status: 200, blocked: false });
          expect(r.input_tokens).toBeGreaterThan(3);
          // `question ${i} from dev${i}@acme-corp.com`: the address starts after "question N from ".
          expect(r.findings).toEqual([
            {
              type: 'pii/email',
              confidence: expect.any(Number),
              action: 'log',
              matches: [{ path: 'messages[0].content', start: expect.any(Number), end: expect.any(Number), signal: 'signature:pii/email', score: expect.any(Number) }],
            },
          ]);
          // The span is `dev${i}@acme-corp.com`, so its length gives i's digit count and thereby its start.
          const [m] = r.findings[0].matches;
          const digits = m.end - m.start - 'dev@acme-corp.com'.length;
          expect(digits === 1 || digits === 2).toBe(true);
          expect(m.start).toBe('question '.length + digits + ' from '.length);
          expect(Number(r.latency_ms)).toBeGreaterThan(0);
        }
        const failed = rows.filter((r) => r.kind === 'auth_failed');
        expect(failed).toHaveLength(5);
        for (const r of failed) expect(r).toMatchObject({ organization_id: null, project_id: null, response_status: 401, path: '/v1/messages' });
        expect(rows.filter((r) => r.path === '/v1/detect')).toHaveLength(10);
        const dump = JSON.stringify(rows);
        expect(dump).not.toContain('upstream-secret-token');
        expect(dump).not.toContain(svc.apiKey);
        expect(dump).not.toContain('acme-corp.com');
        expect(dump).not.toContain('question');
      } finally {
        await storage.close();
      }
    } finally {
      upstream.delayMs = 0;
      if (!closed) await svc.running.close();
      await svc.dispose().catch(() => undefined);
    }
  }, 60000);

  describe('querying', () => {
    let svc: TestServices;
    const auth = () => ({ authorization: `Bearer ${svc.apiKey}` });
    const get = async (path: string) => {
      const res = await fetch(`${svc.gatewayUrl}${path}`, { headers: auth() });
      return { status: res.status, json: (await res.json()) as Json };
    };
    beforeAll(async () => {
      svc = await startTestServices(target, { env: { ANTHROPIC_BASE_URL: upstream.url } });
      const send = (session: string, model: string, content: string) =>
        postJson(`${svc.sensorUrl}/v1/messages`, { ...body(content), model }, { 'x-svc-key': svc.apiKey, 'x-agent-session-id': session, 'anthropic-version': '2023-06-01' });
      await svc.running.storage!.query(`UPDATE policies SET deny_list = '{"entries": ["forbidden"], "match_type": "contains"}', updated_at = now()`);
      await svc.running.storage!.query(`SELECT 1`);
      for (const [s, m, c] of [
        ['session-a', 'model-1', 'one'],
        ['session-a', 'model-2', 'two'],
        ['session-a', 'model-2', 'a forbidden word'],
        ['session-b', 'model-1', 'three'],
      ] as const) {
        await new Promise((r) => setTimeout(r, 5));
        await send(s, m, c);
      }
      await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'x' }, auth());
      await svc.running.audit!.flush();
    });
    afterAll(async () => {
      await svc?.dispose();
    });

    it('lists events newest first with filters and paging', async () => {
      const all = await get('/v1/events/');
      expect(all.status).toBe(200);
      expect(all.json.count).toBe(5);
      expect(Object.keys(all.json.results[0]).sort()).toEqual(
        ['blocked', 'created_at', 'decision', 'fail_reason', 'findings', 'id', 'input_tokens', 'latency_ms', 'model', 'path', 'project_id', 'provider', 'request_id', 'response_status', 'session_id', 'unscanned_content', 'upstream_attempts'].sort(),
      );
      expect(all.json.results[0].path).toBe('/v1/detect');
      expect((await get('/v1/events/?path=/v1/messages')).json.count).toBe(4);
      expect((await get('/api/v1/events/?session_id=session-a')).json.count).toBe(3);
      const blocked = await get('/v1/events/?blocked=true');
      expect(blocked.json.count).toBe(1);
      expect(blocked.json.results[0]).toMatchObject({
        response_status: 403,
        blocked: true,
        findings: [{ type: 'deny_list', confidence: 1, action: 'block', matches: [{ path: 'messages[0].content', start: 2, end: 11, signal: 'deny_list', score: 1 }] }],
      });
      const page = await get('/v1/events/?limit=2&offset=1');
      expect(page.json.results).toHaveLength(2);
      expect(page.json.results[0].id).toBe(all.json.results[1].id);
      const future = await get(`/v1/events/?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
      expect(future.json.count).toBe(0);
      const projectId = all.json.results[0].project_id;
      expect((await get(`/v1/events/?project_id=${projectId}`)).json.count).toBe(5);
      expect((await get('/v1/events/?since=yesterday')).status).toBe(400);
    });

    it('groups events by session', async () => {
      const res = await get('/v1/events/sessions/');
      expect(res.status).toBe(200);
      expect(res.json.count).toBe(2);
      const a = res.json.results.find((s: Json) => s.session_id === 'session-a');
      expect(a).toMatchObject({ count: 3, blocked_count: 1, models: ['model-1', 'model-2'] });
      expect(Date.parse(a.first_seen)).toBeLessThanOrEqual(Date.parse(a.last_seen));
      expect(res.json.results.find((s: Json) => s.session_id === 'session-b')).toMatchObject({ count: 1, blocked_count: 0, models: ['model-1'] });
    });

    // The speed of counting such runs is measured by `npm run bench:adversarial`.
    it('counts tokens of hostile texts (long unbroken runs, special-token strings)', async () => {
      const long = await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'a'.repeat(300_000) }, auth());
      const special = await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'before <|endoftext|> after <|im_start|>system' }, auth());
      expect(long.status).toBe(200);
      expect(special.status).toBe(200);
      await svc.running.audit!.flush();
      const rows = await svc.running.storage!.query<{ input_tokens: number }>(
        `SELECT input_tokens FROM security_events WHERE path = '/v1/detect' AND input_tokens IS NOT NULL ORDER BY created_at DESC LIMIT 2`,
      );
      expect(rows).toHaveLength(2);
      for (const r of rows) expect(r.input_tokens).toBeGreaterThan(3);
    });

    it('another organization sees none of these events', async () => {
      const { provisionOrganization } = await import('../../src/storage/provision');
      const other = await svc.running.storage!.dataSource.transaction((m) =>
        provisionOrganization(m, { organizationName: 'Other', projectName: 'p', environment: 'production' }),
      );
      const res = await fetch(`${svc.gatewayUrl}/v1/events/`, { headers: { authorization: `Bearer ${other.rawKey}` } });
      expect(((await res.json()) as Json).count).toBe(0);
    });
  });
});
