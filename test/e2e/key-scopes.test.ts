import { startFakeAnthropic, type FakeAnthropic } from '../fakes/fake-anthropic';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai';
import { declaredRoutesOf } from '../../src/shared/http/openapi';
import { STORAGE_TARGETS } from '../helpers/databases';
import { gqlClient, gqlRequest, PROJECT_SELECTION, restClient, type Json } from '../helpers/management-clients';
import { postJson, startTestServices, type TestServices } from '../helpers/services';
import { until } from '../helpers/until';

/**
 * Key scopes (docs/keys-and-scopes.md): a project's key is `full` (traffic and management, the default)
 * or `traffic` (proxy, detect and sensor only). A traffic key gets 403 permission_denied on every
 * management route, REST and GraphQL; the scope is part of the cached key resolution, so a change
 * applies at once (the auth cache TTL here is 5 minutes: only the invalidation can make it apply). Across
 * two instances: test/e2e/multi-instance.test.ts.
 */

const SCOPE_DENIED = { error: { type: 'permission_denied', code: 'insufficient_key_scope', message: expect.stringContaining('traffic scope') } };

/** Every management REST route (management.routes.ts), with ids that exist, so an unguarded route would succeed. */
type Ids = { policy: string; spare: string; self: string; other: string };
const REST_ROUTES: Array<[method: string, path: (ids: Ids) => string, body?: unknown]> = [
  ['GET', () => '/policies/detector_types'],
  ['GET', () => '/policies/threshold_levels'],
  ['GET', () => '/policies'],
  ['POST', () => '/policies', { name: 'made by a traffic key' }],
  ['GET', (i) => `/policies/${i.policy}`],
  ['PATCH', (i) => `/policies/${i.policy}`, { name: 'renamed by a traffic key' }],
  ['DELETE', (i) => `/policies/${i.spare}`],
  ['POST', (i) => `/policies/${i.spare}/set_default`],
  ['POST', (i) => `/policies/${i.policy}/duplicate`],
  ['GET', () => '/projects'],
  ['POST', () => '/projects', { name: 'made by a traffic key' }],
  ['GET', (i) => `/projects/${i.self}`],
  // A traffic key may not widen its own scope.
  ['PATCH', (i) => `/projects/${i.self}`, { key_scope: 'full' }],
  ['DELETE', (i) => `/projects/${i.other}`],
  // Key rotation is management, even of the key's own project.
  ['POST', (i) => `/projects/${i.self}/rotate_key`],
  ['GET', () => '/events'],
  ['GET', () => '/events/sessions'],
  ['GET', () => '/management_events'],
];

/** Every root field of the GraphQL schema, each as one operation (the test checks the list is complete). */
const GQL_OPERATIONS: Record<string, (i: Ids) => string> = {
  detector_types: () => '{ detector_types { value } }',
  threshold_levels: () => '{ threshold_levels { value } }',
  policies: () => '{ policies { count } }',
  policy: (i) => `{ policy(id: "${i.policy}") { id } }`,
  projects: () => '{ projects { count } }',
  project: (i) => `{ project(id: "${i.self}") { id } }`,
  events: () => '{ events { count } }',
  sessions: () => '{ sessions { count } }',
  event_stats: () => '{ event_stats { totals { total } } }',
  detect: (i) => `{ detect(policy_id: "${i.policy}", content: "jane.doe@acme-corp.com") { blocked } }`,
  management_events: () => '{ management_events { count } }',
  createPolicy: () => 'mutation { createPolicy(input: { name: "gql traffic" }) { id } }',
  updatePolicy: (i) => `mutation { updatePolicy(id: "${i.policy}", input: { name: "gql renamed" }) { id } }`,
  deletePolicy: (i) => `mutation { deletePolicy(id: "${i.spare}") }`,
  duplicatePolicy: (i) => `mutation { duplicatePolicy(id: "${i.policy}") { id } }`,
  setDefaultPolicy: (i) => `mutation { setDefaultPolicy(id: "${i.spare}") { id } }`,
  createProject: () => 'mutation { createProject(input: { name: "gql traffic" }) { id } }',
  updateProject: (i) => `mutation { updateProject(id: "${i.self}", input: { key_scope: full }) { id } }`,
  deleteProject: (i) => `mutation { deleteProject(id: "${i.other}") }`,
  rotateProjectKey: (i) => `mutation { rotateProjectKey(id: "${i.self}") { raw_key } }`,
};

describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('key scopes on %s', (_name, target) => {
  let openai: FakeOpenAI;
  let anthropic: FakeAnthropic;
  let svc: TestServices;
  let admin: ReturnType<typeof restClient>;
  let adminGql: ReturnType<typeof gqlClient>;
  let ids: Ids;
  let trafficKey: string;

  beforeAll(async () => {
    openai = await startFakeOpenAI();
    anthropic = await startFakeAnthropic();
    svc = await startTestServices(target, {
      env: { OPENAI_BASE_URL: openai.url, OPENAI_API_KEY: 'sk-upstream', ANTHROPIC_BASE_URL: anthropic.url, AUTH_CACHE_TTL_MS: '300000' },
    });
    admin = restClient(svc.gatewayUrl, svc.apiKey);
    adminGql = gqlClient(svc.gatewayUrl, svc.apiKey);
    const policy = (await admin.get('/v1/policies/')).json.results.find((p: Json) => p.is_default).id;
    const spare = (await admin.post('/v1/policies/', { name: 'spare' })).json.id;
    const traffic = await admin.post('/v1/projects/', { name: 'traffic app', key_scope: 'traffic' });
    expect(traffic.status).toBe(201);
    const other = (await admin.post('/v1/projects/', { name: 'other app' })).json.id;
    trafficKey = traffic.json.raw_key;
    ids = { policy, spare, self: traffic.json.id, other };
  });
  afterAll(async () => {
    await svc?.dispose();
    await openai?.close();
    await anthropic?.close();
  });

  /** What the organization looks like through the full key (to prove a refused call changed nothing). */
  const snapshot = async () => ({
    policies: (await admin.get('/v1/policies/?limit=100')).json,
    projects: (await admin.get('/v1/projects/?limit=100')).json.results.map(({ last_used_at: _u, ...p }: Json) => p),
  });

  describe('on create, update and reads', () => {
    it('defaults to full, is set on create and update, and is returned by every read (REST)', async () => {
      const created = await admin.post('/v1/projects/', { name: 'scoped' });
      expect(created.json.key_scope).toBe('full');
      const t = await admin.post('/v1/projects/', { name: 'scoped traffic', key_scope: 'traffic' });
      expect(t.json).toMatchObject({ key_scope: 'traffic', raw_key: expect.stringMatching(/^svc_sk_/) });
      expect((await admin.get(`/v1/projects/${t.json.id}/`)).json.key_scope).toBe('traffic');
      expect((await admin.get('/v1/projects/?limit=100')).json.results.find((p: Json) => p.id === t.json.id).key_scope).toBe('traffic');
      const up = await admin.patch(`/v1/projects/${created.json.id}/`, { key_scope: 'traffic' });
      expect(up.status).toBe(200);
      expect(up.json.key_scope).toBe('traffic');
      // Rotation keeps the scope.
      const rotated = await admin.post(`/v1/projects/${created.json.id}/rotate_key/`);
      expect(rotated.json.key_scope).toBe('traffic');
      expect((await restClient(svc.gatewayUrl, rotated.json.raw_key).get('/v1/projects/')).status).toBe(403);
      for (const id of [created.json.id, t.json.id]) expect((await admin.del(`/v1/projects/${id}/`)).status).toBe(204);
    });

    it('is set, changed and read through GraphQL the same way', async () => {
      const c = (await adminGql.data(`mutation { createProject(input: { name: "gql scoped", key_scope: traffic }) { ${PROJECT_SELECTION} raw_key } }`)).createProject;
      expect(c.key_scope).toBe('traffic');
      expect((await adminGql.data(`{ project(id: "${c.id}") { key_scope } }`)).project.key_scope).toBe('traffic');
      expect((await restClient(svc.gatewayUrl, c.raw_key).get('/v1/policies/')).status).toBe(403);
      const u = (await adminGql.data(`mutation { updateProject(id: "${c.id}", input: { key_scope: full }) { key_scope } }`)).updateProject;
      expect(u.key_scope).toBe('full');
      expect((await restClient(svc.gatewayUrl, c.raw_key).get('/v1/policies/')).status).toBe(200);
      const d = (await adminGql.data('{ projects(limit: 100) { results { id key_scope } } }')).projects.results;
      expect(d.find((p: Json) => p.id === ids.self).key_scope).toBe('traffic');
      expect(d.find((p: Json) => p.id === c.id).key_scope).toBe('full');
      await adminGql.data(`mutation { deleteProject(id: "${c.id}") }`);
    });

    it('rejects an unknown scope with 400 (REST) and a GraphQL validation error', async () => {
      const bad = await admin.post('/v1/projects/', { name: 'x', key_scope: 'admin' });
      expect(bad.status).toBe(400);
      expect(bad.json.error).toMatchObject({ type: 'invalid_request', details: { fields: [expect.objectContaining({ path: 'key_scope' })] } });
      const badPatch = await admin.patch(`/v1/projects/${ids.other}/`, { key_scope: null });
      expect(badPatch.status).toBe(400);
      const gql = await gqlRequest(svc.gatewayUrl, svc.apiKey, 'mutation { createProject(input: { name: "x", key_scope: admin }) { id } }');
      expect(gql.status).toBe(400);
      expect(gql.json.errors[0].extensions.code).toBe('invalid_request');
    });

    it('refuses to give the calling key\'s own project the traffic scope (REST and GraphQL)', async () => {
      const me = (await admin.get('/v1/projects/?limit=100')).json.results.find((p: Json) => svc.apiKey.startsWith(p.key_prefix));
      const rest = await admin.patch(`/v1/projects/${me.id}/`, { key_scope: 'traffic' });
      expect(rest.status).toBe(403);
      expect(rest.json.error).toMatchObject({ type: 'permission_denied', code: 'cannot_modify_own_project' });
      const gql = await adminGql.error(`mutation { updateProject(id: "${me.id}", input: { key_scope: traffic }) { id } }`);
      expect(gql.extensions).toMatchObject({ code: 'permission_denied', error_code: 'cannot_modify_own_project' });
      expect((await admin.get(`/v1/projects/${me.id}/`)).json.key_scope).toBe('full');
    });
  });

  describe('a traffic key', () => {
    const cases = REST_ROUTES.flatMap(([method, path, body]) => ['/v1', '/api/v1'].map((prefix) => [`${method} ${prefix}${path({ policy: ':id', spare: ':id', self: ':id', other: ':id' })}`, method, prefix, path, body] as const));

    it.each(cases)('gets 403 permission_denied on %s, and nothing changes', async (_label, method, prefix, path, body) => {
      const before = await snapshot();
      const res = await fetch(`${svc.gatewayUrl}${prefix}${path(ids)}`, {
        method,
        headers: { authorization: `Bearer ${trafficKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual(SCOPE_DENIED);
      expect(await snapshot()).toEqual(before);
    });

    it('the REST table above holds every management route the gateway declares (both prefixes)', () => {
      // Everything under /v1 and /api/v1 but the traffic routes (a traffic key's own) and the operator's route.
      const notManagement = /^\/(api\/)?v1\/(chat\/completions|responses|embeddings|models|detect|organizations)(\/|$)/;
      const declared = declaredRoutesOf(svc.running.gatewayApp!)
        .filter((r) => r.method !== 'HEAD' && /^\/(api\/)?v1\//.test(r.url) && !notManagement.test(r.url))
        .map((r) => `${r.method} ${r.url.replace(/\/$/, '')}`);
      expect(declared.length).toBeGreaterThan(0);
      expect([...new Set(declared)].sort()).toEqual([...new Set(cases.map(([label]) => label))].sort());
    });

    it('every root field of the GraphQL schema is in the table below', async () => {
      const schema = (await adminGql.data('{ __schema { queryType { fields { name } } mutationType { fields { name } } } }')).__schema;
      const fields = [...schema.queryType.fields, ...schema.mutationType.fields].map((f: Json) => f.name).sort();
      expect(Object.keys(GQL_OPERATIONS).sort()).toEqual(fields);
    });

    it.each(Object.entries(GQL_OPERATIONS))('gets HTTP 403 with the envelope on GraphQL %s', async (_name, operation) => {
      const before = await snapshot();
      const res = await gqlRequest(svc.gatewayUrl, trafficKey, operation(ids));
      expect(res.status).toBe(403);
      expect(res.json).toEqual(SCOPE_DENIED);
      expect(await snapshot()).toEqual(before);
    });

    it('gets 403 on GraphQL over GET and on introspection too', async () => {
      const res = await fetch(`${svc.gatewayUrl}/graphql?query=${encodeURIComponent('{ __typename }')}`, { headers: { authorization: `Bearer ${trafficKey}` } });
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual(SCOPE_DENIED);
    });

    it('still works on the proxy /v1/chat/completions', async () => {
      const res = await postJson(
        `${svc.gatewayUrl}/v1/chat/completions`,
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'What is a B-tree?' }] },
        { authorization: `Bearer ${trafficKey}` },
      );
      expect(res.status).toBe(200);
      expect(res.json.choices[0].message.content).toBe('Hello from the fake upstream.');
    });

    it('still works on /v1/detect', async () => {
      const res = await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'write to jane.doe@acme-corp.com' }, { authorization: `Bearer ${trafficKey}` });
      expect(res.status).toBe(200);
      expect(res.json.categories.map((c: Json) => c.type)).toContain('pii/email');
    });

    it('still works on the sensor /v1/messages', async () => {
      const res = await postJson(
        `${svc.sensorUrl}/v1/messages`,
        { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'What is a B-tree?' }] },
        { 'x-svc-key': trafficKey, 'x-api-key': 'sk-ant-api03-upstream', 'anthropic-version': '2023-06-01' },
      );
      expect(res.status).toBe(200);
      expect(res.json.type).toBe('message');
    });

    it('its events are still visible to the organization\'s full key', async () => {
      const events = await until(async () => {
        const page = (await admin.get(`/v1/events/?project_id=${ids.self}`)).json;
        return page.count >= 2 ? page : undefined;
      });
      expect(events.results.every((e: Json) => e.project_id === ids.self)).toBe(true);
    });
  });

  describe('a scope change', () => {
    it('applies on the very next request, both ways (REST and GraphQL), despite a long auth cache TTL', async () => {
      const p = await admin.post('/v1/projects/', { name: 'switching' });
      const key = p.json.raw_key;
      const mine = restClient(svc.gatewayUrl, key);
      expect((await mine.get('/v1/projects/')).status).toBe(200); // cached as full now
      expect((await gqlRequest(svc.gatewayUrl, key, '{ threshold_levels { value } }')).status).toBe(200);

      expect((await admin.patch(`/v1/projects/${p.json.id}/`, { key_scope: 'traffic' })).json.key_scope).toBe('traffic');
      expect((await mine.get('/v1/projects/')).status).toBe(403);
      expect((await gqlRequest(svc.gatewayUrl, key, '{ threshold_levels { value } }')).status).toBe(403);
      expect((await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'hello' }, { authorization: `Bearer ${key}` })).status).toBe(200);

      await adminGql.data(`mutation { updateProject(id: "${p.json.id}", input: { key_scope: full }) { key_scope } }`);
      expect((await mine.get('/v1/projects/')).status).toBe(200);
      expect((await gqlRequest(svc.gatewayUrl, key, '{ threshold_levels { value } }')).status).toBe(200);
      await admin.del(`/v1/projects/${p.json.id}/`);
    });
  });
});
