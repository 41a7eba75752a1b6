import { generateApiKey } from '../../src/shared/api-key';
import { postgresBehindProxy, TEST_DATABASE_URL } from '../helpers/databases';
import { gqlRequest, type Json } from '../helpers/management-clients';
import { postJson, startTestServices, type TestServices } from '../helpers/services';
import type { TcpProxy } from '../helpers/tcp-proxy';

/**
 * PostgreSQL unreachable or stalled, with the real services on port 0 and the database behind a TCP
 * proxy: every request that needs storage answers 503 service_unavailable / storage_unavailable with
 * Retry-After (never a 500), and a stalled database answers within the statement timeout, not after
 * the kernel's TCP timeouts.
 */
const onPostgres = TEST_DATABASE_URL ? describe : describe.skip;

const STATEMENT_TIMEOUT_MS = 1500;
/**
 * Wide enough that a loaded 2-core CI machine still connects while the database is up (1 s once failed
 * there with "Connection terminated due to connection timeout" before any outage was simulated).
 */
const CONNECT_TIMEOUT_MS = 2500;
/**
 * The slowest a stalled call may take: the longer of the connect and statement timeouts plus the client
 * read margin (1 s) and a wide allowance for a loaded machine. What it rules out is waiting for the
 * kernel's TCP timeouts (minutes), not a slow answer.
 */
const STALL_BOUND_MS = Math.max(STATEMENT_TIMEOUT_MS, CONNECT_TIMEOUT_MS) + 1000 + 6000;

interface Answer {
  status: number;
  retryAfter: string | null;
  json: Json;
  ms: number;
}

async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, retryAfter: res.headers.get('retry-after'), json: JSON.parse(text) as Json, ms: performance.now() - started };
}

function expectStorageUnavailable(a: Answer): void {
  expect(a.status).toBe(503);
  expect(a.retryAfter).toBe('5');
  expect(a.json).toEqual({
    error: { message: expect.any(String), type: 'service_unavailable', code: 'storage_unavailable', details: { retry_after: 5 } },
  });
}

onPostgres('PostgreSQL unreachable or stalled → 503 storage_unavailable', () => {
  let proxy: TcpProxy | undefined;
  let svc: TestServices;
  const behindProxy = postgresBehindProxy();

  beforeAll(async () => {
    svc = await startTestServices(behindProxy.target, {
      services: ['detection', 'gateway', 'sensor'],
      env: { DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS), DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS), AUTH_CACHE_TTL_MS: '300000' },
    });
    proxy = behindProxy.state.proxy;
  });
  afterAll(async () => {
    behindProxy.state.proxy?.unstall();
    if (behindProxy.state.proxy) await behindProxy.state.proxy.start().catch(() => undefined);
    await svc?.dispose();
    await behindProxy.state.proxy?.stop();
  });

  const auth = () => ({ authorization: `Bearer ${svc.apiKey}` });
  /** Storage answers (polled: the pool may be reconnecting after the previous test's outage). */
  async function untilUp(): Promise<Answer | undefined> {
    let back: Answer | undefined;
    for (let i = 0; i < 100 && back?.status !== 200; i += 1) {
      back = await call(`${svc.gatewayUrl}/v1/policies/`, { headers: auth() });
      if (back.status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    return back;
  }
  const gqlPolicies = (key: string) => gqlRequest(svc.gatewayUrl, key, '{ policies { count } }');

  it('answers 503 with Retry-After on management REST, GraphQL and uncached keys while the database is down; 200 once it is back', async () => {
    // Up: the key is resolved (and cached) and storage answers.
    expect((await untilUp())?.status).toBe(200);

    await proxy!.stop();
    expectStorageUnavailable(await call(`${svc.gatewayUrl}/v1/policies/`, { headers: auth() }));
    expectStorageUnavailable(
      await call(`${svc.gatewayUrl}/v1/policies/`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'during-outage' }),
      }),
    );
    // A key the cache has never seen needs the database: 503, not 401 and not 500.
    const unknownKey = generateApiKey();
    expectStorageUnavailable(await call(`${svc.gatewayUrl}/v1/policies/`, { headers: { authorization: `Bearer ${unknownKey}` } }));
    const detect = await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'hello' }, { authorization: `Bearer ${unknownKey}` });
    expect(detect.status).toBe(503);
    expect(detect.json).toMatchObject({ error: { type: 'service_unavailable', code: 'storage_unavailable' } });
    // The sensor's team key (X-Svc-Key): the same error in its messages-API envelope.
    const sensor = await call(`${svc.sensorUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-key': unknownKey },
      body: JSON.stringify({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(sensor.status).toBe(503);
    expect(sensor.retryAfter).toBe('5');
    expect(sensor.json).toMatchObject({ type: 'error', error: { type: 'service_unavailable', code: 'storage_unavailable' } });

    const gql = await gqlPolicies(svc.apiKey);
    expect(gql.status).toBe(503);
    expect(gql.headers.get('retry-after')).toBe('5');
    expect(gql.json.errors[0]).toMatchObject({
      extensions: { code: 'service_unavailable', error_code: 'storage_unavailable', details: { retry_after: 5 } },
    });
    expect(JSON.stringify(gql.json)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);

    // Not logged as a failure of ours (error level) but as a dependency outage (warn).
    expect(svc.logs.lines.filter((l) => l.includes('"level":50') && l.includes('request failed'))).toEqual([]);

    await proxy!.start();
    expect((await untilUp())?.status).toBe(200);
  });

  it('answers a stalled database within the statement timeout (503), REST and GraphQL, and recovers', async () => {
    expect((await untilUp())?.status).toBe(200);
    proxy!.stall();
    try {
      const answers = await Promise.all([
        call(`${svc.gatewayUrl}/v1/policies/`, { headers: auth() }),
        call(`${svc.gatewayUrl}/v1/projects/`, { headers: auth() }),
        call(`${svc.gatewayUrl}/v1/policies/`, { headers: { authorization: `Bearer ${generateApiKey()}` } }),
      ]);
      for (const a of answers) {
        expectStorageUnavailable(a);
        expect(a.ms).toBeLessThan(STALL_BOUND_MS);
      }
      const started = performance.now();
      const gql = await gqlPolicies(svc.apiKey);
      expect(performance.now() - started).toBeLessThan(STALL_BOUND_MS);
      expect(gql.status).toBe(503);
      expect(gql.json.errors[0].extensions).toMatchObject({ code: 'service_unavailable', error_code: 'storage_unavailable' });
    } finally {
      proxy!.unstall();
    }
    expect((await untilUp())?.status).toBe(200);
  });
});
