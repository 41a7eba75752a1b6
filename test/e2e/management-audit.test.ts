import { hashApiKey } from '../../src/shared/api-key';
import { STORAGE_TARGETS } from '../helpers/databases';
import { gqlClient, gqlRequest, newOrganization, restClient, type Json } from '../helpers/management-clients';
import { ALERTS_CONFIGURED_ENV, startTestServices, type TestServices } from '../helpers/services';

/**
 * Issue 18, item 7: every change to a policy or project is in the management audit trail (REST
 * GET /v1/management_events/ and GraphQL management_events): who (project, key prefix), what (entity,
 * action), when, before → after, never a key or its hash; per organization only; a failed change
 * leaves no record.
 */

const EVENT_FIELDS = 'id actor { project_id key_prefix } entity_type entity_id action before after changed_fields details request_id via created_at';
const TRAIL_Q = `query($limit: Int, $offset: Int, $entity_type: ManagementEntityType, $entity_id: ID, $action: ManagementAction,
  $actor_project_id: ID, $request_id: String, $since: String, $until: String) {
  management_events(limit: $limit, offset: $offset, entity_type: $entity_type, entity_id: $entity_id, action: $action,
    actor_project_id: $actor_project_id, request_id: $request_id, since: $since, until: $until) { count results { ${EVENT_FIELDS} } } }`;

const M = {
  createPolicy: 'mutation($input: CreatePolicyInput!) { createPolicy(input: $input) { id name is_default } }',
  updatePolicy: 'mutation($id: ID!, $input: UpdatePolicyInput!) { updatePolicy(id: $id, input: $input) { id name } }',
  deletePolicy: 'mutation($id: ID!) { deletePolicy(id: $id) }',
  duplicatePolicy: 'mutation($id: ID!) { duplicatePolicy(id: $id) { id name } }',
  setDefaultPolicy: 'mutation($id: ID!) { setDefaultPolicy(id: $id) { id is_default } }',
  createProject: 'mutation($input: CreateProjectInput!) { createProject(input: $input) { id key_prefix raw_key } }',
  updateProject: 'mutation($id: ID!, $input: UpdateProjectInput!) { updateProject(id: $id, input: $input) { id policy_id } }',
  deleteProject: 'mutation($id: ID!) { deleteProject(id: $id) }',
  rotateProjectKey: 'mutation($id: ID!) { rotateProjectKey(id: $id) { id key_prefix raw_key } }',
};

const qs = (args: Record<string, unknown>) =>
  Object.entries(args)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');

/** Neither a raw key nor its hash, nor a field named after either, anywhere in a response. */
function expectNoSecrets(body: unknown, rawKeys: string[]): void {
  const text = JSON.stringify(body);
  for (const key of rawKeys) {
    expect(text).not.toContain(key);
    expect(text).not.toContain(hashApiKey(key));
  }
  expect(text).not.toMatch(/raw_key|key_hash|keyHash|rawKey/);
  expect(text).not.toMatch(/svc_sk_[A-Za-z0-9]{32,}/);
}

describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('management audit trail on %s', (_name, target) => {
  let svc: TestServices;
  let orgCount = 0;

  beforeAll(async () => {
    svc = await startTestServices(target, { services: ['detection', 'gateway'], env: ALERTS_CONFIGURED_ENV });
  });
  afterAll(async () => {
    await svc?.dispose();
  });

  const freshOrg = async () => {
    orgCount += 1;
    const org = await newOrganization(svc, `trail-${orgCount}`, 'first');
    return { org, rest: restClient(svc.gatewayUrl, org.rawKey), gql: gqlClient(svc.gatewayUrl, org.rawKey) };
  };
  type Org = Awaited<ReturnType<typeof freshOrg>>;

  const trail = async (o: Org, args: Record<string, unknown> = {}): Promise<Json> => {
    const res = await o.rest.get(`/v1/management_events/?${qs({ limit: 100, ...args })}`);
    expect(res.status).toBe(200);
    return res.json;
  };
  const gqlTrail = async (o: Org, args: Record<string, unknown> = {}): Promise<Json> => (await o.gql.data(TRAIL_Q, { limit: 100, ...args })).management_events;

  /** A REST call carrying our own X-Request-Id, so its record can be found by it. */
  const call = async (o: Org, method: string, path: string, requestId: string, body?: unknown) => {
    const res = await fetch(`${svc.gatewayUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${o.org.rawKey}`, 'x-request-id': requestId, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: (text ? JSON.parse(text) : undefined) as Json };
  };

  it('REST: every policy and project mutation is recorded with its actor, before → after, and no secret', async () => {
    const o = await freshOrg();
    const actor = { project_id: o.org.projectId, key_prefix: o.org.keyPrefix };
    const rawKeys = [o.org.rawKey];

    // Policies: create, update, duplicate, set_default (and the old default's unset_default), delete.
    const created = await call(o, 'POST', '/v1/policies/', 'req-create-policy', { name: 'Strict', deny_list: { entries: ['secret-project'], match_type: 'contains' } });
    expect(created.status).toBe(201);
    const policyId = created.json.id as string;
    expect((await call(o, 'PATCH', `/v1/policies/${policyId}/`, 'req-update-policy', { name: 'Stricter', policy_mode: 'I' })).status).toBe(200);
    const copy = await call(o, 'POST', `/v1/policies/${policyId}/duplicate/`, 'req-duplicate', undefined);
    expect(copy.status).toBe(201);
    expect((await call(o, 'POST', `/v1/policies/${policyId}/set_default/`, 'req-set-default')).status).toBe(200);
    // Already the default: nothing changes, nothing is recorded.
    expect((await call(o, 'POST', `/v1/policies/${policyId}/set_default/`, 'req-set-default-again')).status).toBe(200);
    expect((await call(o, 'DELETE', `/v1/policies/${o.org.policyId}/`, 'req-delete-policy')).status).toBe(204);

    // Projects: create, update (assign a policy), rotate_key, delete.
    const project = await call(o, 'POST', '/v1/projects/', 'req-create-project', { name: 'Billing', environment: 'staging' });
    expect(project.status).toBe(201);
    const projectId = project.json.id as string;
    rawKeys.push(project.json.raw_key);
    expect((await call(o, 'PATCH', `/v1/projects/${projectId}/`, 'req-assign', { policy_id: copy.json.id, name: 'Billing v2' })).status).toBe(200);
    const rotated = await call(o, 'POST', `/v1/projects/${projectId}/rotate_key/`, 'req-rotate');
    expect(rotated.status).toBe(200);
    rawKeys.push(rotated.json.raw_key);
    expect((await call(o, 'DELETE', `/v1/projects/${projectId}/`, 'req-delete-project')).status).toBe(204);

    const page = await trail(o);
    expectNoSecrets(page, rawKeys);
    // Newest first; one record per change, two for the set_default that moved the default.
    const sequence = [...page.results].reverse().map((r: Json) => [r.entity_type, r.action, r.request_id]);
    expect(sequence).toEqual([
      // The organization's provisioning (no key acted).
      ['policy', 'create', null],
      ['project', 'create', null],
      ['policy', 'create', 'req-create-policy'],
      ['policy', 'update', 'req-update-policy'],
      ['policy', 'duplicate', 'req-duplicate'],
      ['policy', 'set_default', 'req-set-default'],
      ['policy', 'unset_default', 'req-set-default'],
      ['policy', 'delete', 'req-delete-policy'],
      ['project', 'create', 'req-create-project'],
      ['project', 'update', 'req-assign'],
      ['project', 'rotate_key', 'req-rotate'],
      ['project', 'delete', 'req-delete-project'],
    ]);
    expect(page.count).toBe(12);
    for (const r of page.results.slice(0, 10)) {
      expect(r).toMatchObject({ actor, via: 'rest' });
      expect(Date.parse(r.created_at)).not.toBeNaN();
    }
    const byRequest = (id: string, action?: string) => page.results.find((r: Json) => r.request_id === id && (!action || r.action === action));

    expect(byRequest('req-create-policy')).toMatchObject({
      entity_id: policyId,
      before: null,
      after: { id: policyId, name: 'Strict', is_default: false, deny_list: { entries: ['secret-project'], match_type: 'contains' } },
    });
    const update = byRequest('req-update-policy');
    expect(update).toMatchObject({ before: { name: 'Strict', policy_mode: 'IO' }, after: { name: 'Stricter', policy_mode: 'I' } });
    expect(update.changed_fields).toEqual(expect.arrayContaining(['name', 'policy_mode', 'updated_at']));
    expect(update.changed_fields).not.toContain('deny_list');
    expect(byRequest('req-duplicate')).toMatchObject({ entity_id: copy.json.id, before: null, after: { name: 'Stricter (copy)' }, details: { source_policy_id: policyId } });
    expect(byRequest('req-set-default', 'set_default')).toMatchObject({
      entity_id: policyId,
      before: { is_default: false },
      after: { is_default: true },
      details: { previous_default_policy_id: o.org.policyId },
    });
    expect(byRequest('req-set-default', 'unset_default')).toMatchObject({
      entity_id: o.org.policyId,
      before: { is_default: true },
      after: { is_default: false },
      details: { new_default_policy_id: policyId },
    });
    expect(byRequest('req-delete-policy')).toMatchObject({ entity_id: o.org.policyId, before: { name: 'Default policy' }, after: null, changed_fields: expect.arrayContaining(['name', 'id']) });

    expect(byRequest('req-create-project')).toMatchObject({
      entity_id: projectId,
      before: null,
      after: { id: projectId, name: 'Billing', environment: 'staging', key_prefix: project.json.key_prefix, uses_default_policy: true },
    });
    const assign = byRequest('req-assign');
    expect(assign).toMatchObject({
      before: { name: 'Billing', policy_id: policyId, uses_default_policy: true },
      after: { name: 'Billing v2', policy_id: copy.json.id, uses_default_policy: false },
    });
    expect(assign.changed_fields).toEqual(['name', 'policy_id', 'policy_name', 'uses_default_policy']);
    const rotate = byRequest('req-rotate');
    expect(rotate).toMatchObject({ before: { key_prefix: project.json.key_prefix }, after: { key_prefix: rotated.json.key_prefix } });
    expect(rotate.changed_fields).toEqual(['key_prefix']);
    expect(byRequest('req-delete-project')).toMatchObject({ entity_id: projectId, before: { name: 'Billing v2' }, after: null });
  });

  it('GraphQL: mutations are recorded (via graphql) and the query answers exactly what REST answers', async () => {
    const o = await freshOrg();
    const rawKeys = [o.org.rawKey];
    const p = (await o.gql.data(M.createPolicy, { input: { name: 'From GraphQL' } })).createPolicy;
    await o.gql.data(M.updatePolicy, { id: p.id, input: { name: 'From GraphQL v2' } });
    const d = (await o.gql.data(M.duplicatePolicy, { id: p.id })).duplicatePolicy;
    await o.gql.data(M.setDefaultPolicy, { id: p.id });
    await o.gql.data(M.deletePolicy, { id: d.id });
    const project = (await o.gql.data(M.createProject, { input: { name: 'GQL project' } })).createProject;
    rawKeys.push(project.raw_key);
    await o.gql.data(M.updateProject, { id: project.id, input: { policy_id: p.id } });
    rawKeys.push((await o.gql.data(M.rotateProjectKey, { id: project.id })).rotateProjectKey.raw_key);
    await o.gql.data(M.deleteProject, { id: project.id });

    const page = await gqlTrail(o);
    expectNoSecrets(page, rawKeys);
    expect([...page.results].reverse().map((r: Json) => `${r.entity_type}:${r.action}`)).toEqual([
      'policy:create', // provisioning
      'project:create', // provisioning
      'policy:create',
      'policy:update',
      'policy:duplicate',
      'policy:set_default',
      'policy:unset_default',
      'policy:delete',
      'project:create',
      'project:update',
      'project:rotate_key',
      'project:delete',
    ]);
    for (const r of page.results.slice(0, 10)) {
      expect(r).toMatchObject({ via: 'graphql', actor: { project_id: o.org.projectId, key_prefix: o.org.keyPrefix } });
      expect(r.request_id).toEqual(expect.any(String));
    }
    expect(page.results.find((r: Json) => r.action === 'update' && r.entity_type === 'policy')).toMatchObject({
      entity_id: p.id,
      before: { name: 'From GraphQL' },
      after: { name: 'From GraphQL v2' },
    });
    // Parity: the same records, fields and order through REST.
    expect(await trail(o)).toEqual(page);
    expect(await trail(o, { entity_type: 'project', action: 'rotate_key' })).toEqual(await gqlTrail(o, { entity_type: 'project', action: 'rotate_key' }));
  });

  it('a failing mutation records nothing (validation, not found, refused inside the transaction, REST and GraphQL)', async () => {
    const o = await freshOrg();
    const other = await freshOrg();
    const before = (await trail(o)).count;
    const failures: Array<Promise<{ status: number }>> = [
      o.rest.post('/v1/policies/', { name: '' }), // 400 validation
      o.rest.patch('/v1/policies/00000000-0000-4000-8000-000000000000/', { name: 'x' }), // 404
      o.rest.del(`/v1/policies/${o.org.policyId}/`), // 400: the default policy (checked inside the transaction)
      o.rest.del(`/v1/projects/${o.org.projectId}/`), // 403: the calling key's own project (inside the transaction)
      o.rest.patch(`/v1/projects/${o.org.projectId}/`, { is_active: false }), // 403: deactivating itself
      o.rest.post('/v1/projects/', { name: 'p', policy_id: other.org.policyId }), // 400: another organization's policy
      o.rest.post(`/v1/projects/${other.org.projectId}/rotate_key/`), // 404: another organization's project
      o.rest.post(`/v1/policies/${other.org.policyId}/set_default/`), // 404
    ];
    const statuses = (await Promise.all(failures)).map((r) => r.status);
    expect(statuses).toEqual([400, 404, 400, 403, 403, 400, 404, 404]);
    const gqlErrors = await Promise.all([
      o.gql.error(M.deletePolicy, { id: o.org.policyId }),
      o.gql.error(M.deleteProject, { id: o.org.projectId }),
      o.gql.error(M.updatePolicy, { id: other.org.policyId, input: { name: 'hijack' } }),
    ]);
    expect(gqlErrors.map((e) => e.extensions.code)).toEqual(['invalid_request', 'permission_denied', 'not_found']);
    expect((await trail(o)).count).toBe(before);
    expect((await trail(other)).results.map((r: Json) => r.via)).toEqual(['provision', 'provision']);
    // The policies and projects are unchanged too.
    expect((await o.rest.get(`/v1/projects/${o.org.projectId}/`)).json.is_active).toBe(true);
  });

  it('organizations never see each other\'s records (REST and GraphQL, filters included)', async () => {
    const a = await freshOrg();
    const b = await freshOrg();
    const bPolicy = (await b.rest.post('/v1/policies/', { name: 'B only' })).json;
    await b.rest.patch(`/v1/policies/${bPolicy.id}/`, { name: 'B only v2' });
    const aPolicy = (await a.rest.post('/v1/policies/', { name: 'A only' })).json;

    const aPage = await trail(a);
    expect(aPage.results.map((r: Json) => r.entity_id)).toEqual([aPolicy.id, a.org.projectId, a.org.policyId]);
    expect(JSON.stringify(aPage)).not.toContain('B only');
    expect((await trail(a, { entity_id: bPolicy.id })).count).toBe(0);
    expect((await trail(a, { actor_project_id: b.org.projectId })).count).toBe(0);
    expect((await gqlTrail(a, { entity_id: bPolicy.id })).count).toBe(0);
    expect((await gqlTrail(a)).results.map((r: Json) => r.entity_id)).toEqual([aPolicy.id, a.org.projectId, a.org.policyId]);
    const bPage = await gqlTrail(b);
    expect(bPage.count).toBe(4);
    expect(JSON.stringify(bPage)).not.toContain('A only');
  });

  it('filters (entity, action, actor, request id, time) and paging; bad filters get the error envelope', async () => {
    const o = await freshOrg();
    const p1 = (await o.rest.post('/v1/policies/', { name: 'F1' })).json;
    const p2 = (await o.rest.post('/v1/policies/', { name: 'F2' })).json;
    await o.rest.patch(`/v1/policies/${p1.id}/`, { name: 'F1b' });
    const all = await trail(o);
    const mid = all.results.find((r: Json) => r.entity_id === p2.id).created_at as string;
    const proj = (await call(o, 'POST', '/v1/projects/', 'filter-req-1', { name: 'F project' })).json;
    await o.rest.patch(`/v1/projects/${proj.id}/`, { environment: 'development' });

    expect((await trail(o)).count).toBe(7); // 2 of provisioning, 5 by the key
    expect((await trail(o, { entity_type: 'policy' })).count).toBe(4);
    expect((await trail(o, { entity_type: 'project', action: 'update' })).results.map((r: Json) => r.entity_id)).toEqual([proj.id]);
    expect((await trail(o, { entity_id: p1.id })).results.map((r: Json) => r.action)).toEqual(['update', 'create']);
    expect((await trail(o, { action: 'create' })).count).toBe(5);
    expect((await trail(o, { actor_project_id: o.org.projectId })).count).toBe(5);
    expect((await trail(o, { request_id: 'filter-req-1' })).results.map((r: Json) => r.entity_id)).toEqual([proj.id]);
    const since = await trail(o, { since: mid });
    expect(since.count).toBe(4); // p2's create and everything after it
    const until = await trail(o, { until: mid });
    expect(until.results.map((r: Json) => r.entity_id)).toEqual([p1.id, o.org.projectId, o.org.policyId]);

    // Paging: newest first, stable, count before paging.
    const first = await trail(o, { limit: 3, offset: 0 });
    const second = await trail(o, { limit: 3, offset: 3 });
    const third = await trail(o, { limit: 3, offset: 6 });
    expect([first.count, second.count, third.count]).toEqual([7, 7, 7]);
    expect(third.results).toHaveLength(1);
    const ids = [...first.results, ...second.results, ...third.results].map((r: Json) => r.id);
    expect(ids).toEqual((await trail(o)).results.map((r: Json) => r.id));
    expect(new Set(ids).size).toBe(7);
    expect((await gqlTrail(o, { limit: 3, offset: 3 })).results.map((r: Json) => r.id)).toEqual(second.results.map((r: Json) => r.id));

    for (const bad of ['action=bogus', 'entity_type=org', 'entity_id=not-a-uuid', 'limit=0', 'limit=101', 'since=yesterday', 'unknown=1']) {
      const res = await o.rest.get(`/v1/management_events/?${bad}`);
      expect({ bad, status: res.status, type: res.json?.error?.type }).toEqual({ bad, status: 400, type: 'invalid_request' });
      expect(res.json.error).toEqual({ message: expect.any(String), type: 'invalid_request', code: 'invalid_request' });
    }
    const gqlBad = await gqlRequest(svc.gatewayUrl, o.org.rawKey, TRAIL_Q, { entity_id: 'not-a-uuid' });
    expect(gqlBad.json.errors[0].extensions.code).toBe('invalid_request');
    const gqlBadEnum = await gqlRequest(svc.gatewayUrl, o.org.rawKey, TRAIL_Q, { action: 'bogus' });
    expect(gqlBadEnum.status).toBe(400);
    expect(gqlBadEnum.json.errors[0].extensions.code).toBe('invalid_request');
  });

  it('provisioning records the default policy and the first project, with no actor and no key', async () => {
    const o = await freshOrg();
    const page = await trail(o);
    expectNoSecrets(page, [o.org.rawKey]);
    expect(page.results).toEqual([
      expect.objectContaining({
        entity_type: 'project',
        entity_id: o.org.projectId,
        action: 'create',
        via: 'provision',
        actor: { project_id: null, key_prefix: null },
        request_id: null,
        before: null,
        after: expect.objectContaining({ id: o.org.projectId, name: 'first', key_prefix: o.org.keyPrefix, policy_id: o.org.policyId, uses_default_policy: true }),
      }),
      expect.objectContaining({
        entity_type: 'policy',
        entity_id: o.org.policyId,
        action: 'create',
        via: 'provision',
        actor: { project_id: null, key_prefix: null },
        after: expect.objectContaining({ id: o.org.policyId, name: 'Default policy', is_default: true }),
      }),
    ]);
  });

  it('needs a valid key (REST 401 envelope, GraphQL 401), like every management route', async () => {
    const res = await fetch(`${svc.gatewayUrl}/v1/management_events/`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as Json).error.type).toBe('authentication_error');
    const gql = await gqlRequest(svc.gatewayUrl, 'svc_sk_' + 'x'.repeat(40), TRAIL_Q, {});
    expect(gql.status).toBe(401);
  });

  it('the api/v1 prefix serves the same trail', async () => {
    const o = await freshOrg();
    await o.rest.post('/v1/policies/', { name: 'Prefixed' });
    expect((await o.rest.get('/api/v1/management_events')).json).toEqual(await trail(o, { limit: 50 }));
  });
});
