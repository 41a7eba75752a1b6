import { TEST_DATABASE_URL, postgresTarget } from '../helpers/databases';
import { newOrganization, restClient } from '../helpers/management-clients';
import { postJson, startAnotherInstance, startTestServices, type TestServices } from '../helpers/services';

/**
 * Two gateway instances on one PostgreSQL: a change made through one is used by the other as soon as the
 * change notification reaches it (LISTEN/NOTIFY invalidates the other's key → policy cache). A long cache
 * TTL (300 s) proves the invalidation, not the expiry, does it.
 *
 * The notification travels asynchronously (Postgres → B's listening connection), so "B's very next request"
 * raced with it: about one run in five failed, on the code before this change too, when B's HTTP request was
 * read before the notification. Each cross-instance expectation is therefore polled for at most
 * PROPAGATION_MS (two orders of magnitude under the TTL), and the time it took is bounded, not assumed zero.
 */
const PROPAGATION_MS = 2_000;

async function eventually<T>(probe: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + PROPAGATION_MS;
  for (;;) {
    const value = await probe();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
(TEST_DATABASE_URL ? describe : describe.skip)('two gateway instances on one PostgreSQL', () => {
  let a: TestServices;
  let b: Awaited<ReturnType<typeof startAnotherInstance>>;
  beforeAll(async () => {
    a = await startTestServices(postgresTarget, { env: { AUTH_CACHE_TTL_MS: '300000' } });
    b = await startAnotherInstance(a, { services: ['gateway'], env: { AUTH_CACHE_TTL_MS: '300000' } });
  });
  afterAll(async () => {
    await b?.running.close();
    await a?.dispose();
  });

  const auth = () => ({ authorization: `Bearer ${a.apiKey}` });
  const detectOnB = (content: string) => postJson(`${b.gatewayUrl}/v1/detect`, { content }, auth());
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${a.gatewayUrl}${path}`, {
      method,
      headers: { ...auth(), 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await res.json().catch(() => undefined)) as Record<string, any>;
  };

  it('sees policy edits, set_default, key rotation and deactivation made through the other instance', async () => {
    // Warm B's cache with the current policy.
    expect((await detectOnB('orange falcon')).json.blocked).toBe(false);
    const policies = await call('GET', '/v1/policies/');
    const defaultId = policies.results.find((p: { is_default: boolean }) => p.is_default).id;

    await call('PATCH', `/v1/policies/${defaultId}/`, { deny_list: { entries: ['orange falcon'], match_type: 'contains' } });
    expect((await eventually(() => detectOnB('orange falcon'), (r) => r.json.blocked === true)).json.blocked).toBe(true);

    const other = await call('POST', '/v1/policies/', { name: 'other' });
    await call('POST', `/v1/policies/${other.id}/set_default/`);
    expect((await eventually(() => detectOnB('orange falcon'), (r) => r.json.blocked === false)).json.blocked).toBe(false);

    const me = (await call('GET', '/v1/projects/')).results[0];
    const rotated = await call('POST', `/v1/projects/${me.id}/rotate_key/`);
    expect((await eventually(() => detectOnB('hello'), (r) => r.status === 401)).status).toBe(401);
    const onA = await call('POST', '/v1/projects/', { name: 'second' });
    expect(onA.error).toMatchObject({ type: 'authentication_error' }); // the old key is dead on A too

    const withNew = { authorization: `Bearer ${rotated.raw_key}` };
    expect((await postJson(`${b.gatewayUrl}/v1/detect`, { content: 'hello' }, withNew)).status).toBe(200);
    const extra = await fetch(`${a.gatewayUrl}/v1/projects/`, {
      method: 'POST',
      headers: { ...withNew, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'extra' }),
    }).then((r) => r.json() as Promise<Record<string, any>>);
    expect((await postJson(`${b.gatewayUrl}/v1/detect`, { content: 'x' }, { authorization: `Bearer ${extra.raw_key}` })).status).toBe(200);
    await fetch(`${a.gatewayUrl}/v1/projects/${extra.id}/`, {
      method: 'PATCH',
      headers: { ...withNew, 'content-type': 'application/json' },
      body: JSON.stringify({ is_active: false }),
    });
    const deactivated = () => postJson(`${b.gatewayUrl}/v1/detect`, { content: 'x' }, { authorization: `Bearer ${extra.raw_key}` });
    expect((await eventually(deactivated, (r) => r.status === 401)).status).toBe(401);
  });

  it('sees a key scope change made through the other instance (the cached scope is invalidated)', async () => {
    const org = await newOrganization(a, 'scopes');
    const onA = restClient(a.gatewayUrl, org.rawKey);
    const p = (await onA.post('/v1/projects/', { name: 'two instances' })).json;
    const onB = restClient(b.gatewayUrl, p.raw_key);
    expect((await onB.get('/v1/policies/')).status).toBe(200); // B caches the key as full
    expect((await onA.patch(`/v1/projects/${p.id}/`, { key_scope: 'traffic' })).json.key_scope).toBe('traffic');
    expect((await eventually(() => onB.get('/v1/policies/'), (r) => r.status === 403)).status).toBe(403);
    expect((await postJson(`${b.gatewayUrl}/v1/detect`, { content: 'hello' }, { authorization: `Bearer ${p.raw_key}` })).status).toBe(200);
    await onA.patch(`/v1/projects/${p.id}/`, { key_scope: 'full' });
    expect((await eventually(() => onB.get('/v1/policies/'), (r) => r.status === 200)).status).toBe(200);
  });
});
