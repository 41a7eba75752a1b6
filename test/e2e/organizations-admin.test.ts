import { generateApiKey } from '../../src/shared/api-key';
import { ConfigError, loadConfig } from '../../src/shared/config';
import { STORAGE_TARGETS, pgliteTarget } from '../helpers/databases';
import { restClient, type Json } from '../helpers/management-clients';
import { postJson, startTestServices, type TestServices } from '../helpers/services';

/**
 * POST /v1/organizations (docs/keys-and-scopes.md): creating an organization while the server runs,
 * authorised by the operator credential ADMIN_API_KEY only. Project keys, of either scope, get 403.
 */

const ADMIN_API_KEY = 'op_4c0e3b1d9a7f42e8b6d5c3a1f0e9d8c7b6a5f4e3';

describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('POST /v1/organizations on %s', (_name, target) => {
  let svc: TestServices;
  let trafficKey: string;
  beforeAll(async () => {
    svc = await startTestServices(target, { env: { ADMIN_API_KEY } });
    trafficKey = (await restClient(svc.gatewayUrl, svc.apiKey).post('/v1/projects/', { name: 'traffic', key_scope: 'traffic' })).json.raw_key;
  });
  afterAll(async () => {
    await svc?.dispose();
  });

  const create = (body: unknown, headers: Record<string, string>) => postJson(`${svc.gatewayUrl}/v1/organizations`, body, headers);
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  const organizationCount = async () => Number((await svc.running.storage!.query<{ n: number }>('SELECT count(*)::int AS n FROM organizations'))[0]!.n);

  it.each([
    ['no Authorization header', {}, 401, 'authentication_error', 'missing_api_key'],
    ['a malformed Authorization header', { authorization: ADMIN_API_KEY }, 401, 'authentication_error', 'malformed_api_key'],
    ['a wrong operator credential', bearer(`${ADMIN_API_KEY.slice(0, -1)}0`), 401, 'authentication_error', 'invalid_admin_key'],
    ['an unknown project-style key', bearer(generateApiKey()), 401, 'authentication_error', 'invalid_api_key'],
  ] as const)('answers %s with 401 and creates nothing', async (_label, headers, status, type, code) => {
    const before = await organizationCount();
    const res = await create({ name: 'Nope' }, headers);
    expect(res.status).toBe(status);
    expect(res.json).toEqual({ error: { type, code, message: expect.any(String) } });
    expect(await organizationCount()).toBe(before);
  });

  it('refuses project keys, full and traffic, with 403 permission_denied', async () => {
    const before = await organizationCount();
    for (const key of [svc.apiKey, trafficKey]) {
      const res = await create({ name: 'Nope' }, bearer(key));
      expect(res.status).toBe(403);
      expect(res.json).toEqual({ error: { type: 'permission_denied', code: 'operator_credential_required', message: expect.stringContaining('ADMIN_API_KEY') } });
    }
    expect(await organizationCount()).toBe(before);
  });

  it('creates an organization with its default policy and first project, whose key is shown once and works at once', async () => {
    const res = await create({ name: 'Acme', project_name: 'Acme web', environment: 'staging' }, bearer(ADMIN_API_KEY));
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Acme',
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
      default_policy_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      project: {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'Acme web',
        key_prefix: res.json.project.raw_key.slice(0, 13),
        environment: 'staging',
        policy_id: res.json.default_policy_id,
        policy_name: 'Default policy',
        uses_default_policy: true,
        key_scope: 'full',
        is_active: true,
        created_at: expect.any(String),
        last_used_at: null,
        raw_key: expect.stringMatching(/^svc_sk_[A-Za-z0-9]{40}$/),
      },
    });
    // The new organization's key manages its own organization only.
    const acme = restClient(svc.gatewayUrl, res.json.project.raw_key);
    const projects = await acme.get('/v1/projects/');
    expect(projects.status).toBe(200);
    expect(projects.json.results.map((p: Json) => p.id)).toEqual([res.json.project.id]);
    const policies = await acme.get('/v1/policies/');
    expect(policies.json.results.map((p: Json) => [p.id, p.is_default])).toEqual([[res.json.default_policy_id, true]]);
    expect((await restClient(svc.gatewayUrl, svc.apiKey).get(`/v1/projects/${res.json.project.id}/`)).status).toBe(404);
    expect((await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'hello' }, bearer(res.json.project.raw_key))).status).toBe(200);
    // The raw key is never stored or shown again.
    expect((await acme.get(`/v1/projects/${res.json.project.id}/`)).json).not.toHaveProperty('raw_key');
    expect(svc.logs.text).not.toContain(res.json.project.raw_key);
    expect(svc.logs.text).not.toContain(ADMIN_API_KEY);
  });

  it('defaults like create-org: "<name> project", production; also under /api/v1 and with a trailing slash', async () => {
    const res = await postJson(`${svc.gatewayUrl}/api/v1/organizations/`, { name: 'Globex' }, bearer(ADMIN_API_KEY));
    expect(res.status).toBe(201);
    expect(res.json.project).toMatchObject({ name: 'Globex project', environment: 'production' });
  });

  it.each([
    ['no name', {}, 'name'],
    ['an empty name', { name: '  ' }, 'name'],
    ['an unknown environment', { name: 'X', environment: 'prod' }, 'environment'],
    ['an unknown field', { name: 'X', owner: 'me' }, ''],
  ])('answers 400 invalid_request for %s', async (_label, body, path) => {
    const before = await organizationCount();
    const res = await create(body, bearer(ADMIN_API_KEY));
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ type: 'invalid_request' });
    if (path) expect(res.json.error.details.fields).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    expect(await organizationCount()).toBe(before);
  });
});

describe('POST /v1/organizations without ADMIN_API_KEY', () => {
  let svc: TestServices;
  beforeAll(async () => {
    svc = await startTestServices(pgliteTarget, { services: ['gateway', 'detection'] });
  });
  afterAll(async () => {
    await svc?.dispose();
  });

  it.each([
    ['no key', {}],
    ['a project key', { authorization: 'Bearer KEY' }],
    ['some operator-looking credential', { authorization: `Bearer ${ADMIN_API_KEY}` }],
  ])('answers 403 admin_api_disabled to %s', async (_label, headers) => {
    const h = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v.replace('KEY', svc.apiKey)]));
    const res = await postJson(`${svc.gatewayUrl}/v1/organizations`, { name: 'Nope' }, h);
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ error: { type: 'permission_denied', code: 'admin_api_disabled', message: expect.stringContaining('ADMIN_API_KEY') } });
  });
});

describe('POST /v1/organizations under the failed-authentication limit', () => {
  let svc: TestServices;
  beforeAll(async () => {
    svc = await startTestServices(pgliteTarget, { services: ['gateway', 'detection'], env: { ADMIN_API_KEY, AUTH_FAILURES_PER_MINUTE: '3' } });
  });
  afterAll(async () => {
    await svc?.dispose();
  });

  it('counts wrong operator credentials against the client address (429 once over AUTH_FAILURES_PER_MINUTE)', async () => {
    const wrong = { authorization: `Bearer ${'x'.repeat(40)}` };
    for (let i = 0; i < 3; i += 1) expect((await postJson(`${svc.gatewayUrl}/v1/organizations`, { name: 'Nope' }, wrong)).status).toBe(401);
    const res = await postJson(`${svc.gatewayUrl}/v1/organizations`, { name: 'Nope' }, wrong);
    expect(res.status).toBe(429);
    expect(res.json.error).toMatchObject({ type: 'rate_limit' });
  });
});

describe('ADMIN_API_KEY setting', () => {
  it.each([
    ['shorter than 32 characters', 'short-operator-secret'],
    ['in the form of a project key', generateApiKey()],
    ['with a space', `${'a'.repeat(20)} ${'b'.repeat(20)}`],
  ])('is refused at start-up when %s, without echoing it', (_label, value) => {
    let error: unknown;
    try {
      loadConfig({ ADMIN_API_KEY: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain('ADMIN_API_KEY');
    expect((error as ConfigError).message).not.toContain(value);
  });

  it('is optional (empty = unset)', () => {
    expect(loadConfig({ ADMIN_API_KEY: '' }).ADMIN_API_KEY).toBeUndefined();
    expect(loadConfig({ ADMIN_API_KEY }).ADMIN_API_KEY).toBe(ADMIN_API_KEY);
  });
});
