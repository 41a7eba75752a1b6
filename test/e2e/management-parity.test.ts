import { DETECTOR_CATALOG } from '../../src/shared/detector-catalog';
import type { ProvisionResult } from '../../src/storage/provision';
import { STORAGE_TARGETS } from '../helpers/databases';
import {
  gqlClient,
  gqlRequest,
  newOrganization,
  POLICY_SELECTION,
  PROJECT_SELECTION,
  restClient,
  type Json,
} from '../helpers/management-clients';
import { ALERTS_CONFIGURED_ENV, startTestServices, type TestServices } from '../helpers/services';

/**
 * REST / GraphQL parity: every management operation is performed through REST in one fresh
 * organization and through GraphQL in an identical twin organization, and the results are compared
 * field by field. Ids are replaced by labels (so `policy_id` must point at the corresponding policy on
 * both sides); timestamps, key prefixes and raw keys differ by nature and are checked separately.
 */

const VOLATILE = new Set(['created_at', 'updated_at', 'last_used_at', 'key_prefix', 'raw_key']);

interface Side {
  org: ProvisionResult;
  labels: Map<string, string>;
  rest: ReturnType<typeof restClient>;
  gql: ReturnType<typeof gqlClient>;
}

function normalize(value: unknown, labels: Map<string, string>): unknown {
  if (typeof value === 'string') return labels.get(value) ?? value;
  if (Array.isArray(value)) return value.map((v) => normalize(v, labels));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !VOLATILE.has(k))
        .map(([k, v]) => [k, normalize(v, labels)]),
    );
  }
  return value;
}

/** REST error envelope and GraphQL error, in one comparable shape. */
const restError = (body: Json) => ({
  code: body.error.type,
  error_code: body.error.code,
  message: body.error.message,
  fields: body.error.details?.fields,
});
const gqlError = (err: Json) => ({ code: err.extensions.code, error_code: err.extensions.error_code, message: err.message, fields: err.extensions.fields });

const Q = {
  policies: `query($limit: Int, $offset: Int, $name: String, $is_default: Boolean, $policy_mode: PolicyMode) {
    policies(limit: $limit, offset: $offset, name: $name, is_default: $is_default, policy_mode: $policy_mode) { count results { ${POLICY_SELECTION} } } }`,
  policy: `query($id: ID!) { policy(id: $id) { ${POLICY_SELECTION} } }`,
  createPolicy: `mutation($input: CreatePolicyInput!) { createPolicy(input: $input) { ${POLICY_SELECTION} } }`,
  updatePolicy: `mutation($id: ID!, $input: UpdatePolicyInput!) { updatePolicy(id: $id, input: $input) { ${POLICY_SELECTION} } }`,
  deletePolicy: 'mutation($id: ID!) { deletePolicy(id: $id) }',
  duplicatePolicy: `mutation($id: ID!) { duplicatePolicy(id: $id) { ${POLICY_SELECTION} } }`,
  setDefaultPolicy: `mutation($id: ID!) { setDefaultPolicy(id: $id) { ${POLICY_SELECTION} } }`,
  projects: `query($limit: Int, $offset: Int, $name: String, $environment: Environment, $is_active: Boolean, $policy_id: ID) {
    projects(limit: $limit, offset: $offset, name: $name, environment: $environment, is_active: $is_active, policy_id: $policy_id) {
      count results { ${PROJECT_SELECTION} } } }`,
  project: `query($id: ID!) { project(id: $id) { ${PROJECT_SELECTION} } }`,
  createProject: `mutation($input: CreateProjectInput!) { createProject(input: $input) { ${PROJECT_SELECTION} raw_key } }`,
  updateProject: `mutation($id: ID!, $input: UpdateProjectInput!) { updateProject(id: $id, input: $input) { ${PROJECT_SELECTION} } }`,
  deleteProject: 'mutation($id: ID!) { deleteProject(id: $id) }',
  rotateProjectKey: `mutation($id: ID!) { rotateProjectKey(id: $id) { ${PROJECT_SELECTION} raw_key } }`,
};

const FULL_POLICY = {
  name: 'Parity full',
  policy_mode: 'I',
  input_detectors: [
    { detector_type: 'prompt_attack', threshold: 'L1', action: 'block' },
    { detector_type: 'pii/email', action: 'alert' },
    { detector_type: 'moderated_content/hate' },
  ],
  output_detectors: [{ detector_type: 'unknown_links', threshold: 'L4', action: 'log' }],
  allow_list: { entries: ['example.com'], match_type: 'contains' },
  deny_list: { entries: ['^internal-[0-9]+$'], match_type: 'regex' },
  custom_detectors: [{ name: 'ticket-id', pattern: 'TCK-[0-9]{6}', action: 'alert' }],
  rate_limits: { rate_limits_enabled: true, requests_per_minute: 30, burst_multiplier: 1.5 },
};

describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('REST / GraphQL parity on %s', (_name, target) => {
  let svc: TestServices;
  let R: Side;
  let G: Side;
  let twinCount = 0;

  beforeAll(async () => {
    svc = await startTestServices(target, { services: ['detection', 'gateway'], env: ALERTS_CONFIGURED_ENV });
  });
  afterAll(async () => {
    await svc?.dispose();
  });

  /** Two identical fresh organizations: R is driven through REST, G through GraphQL. */
  beforeEach(async () => {
    twinCount += 1;
    const side = async (label: string): Promise<Side> => {
      const org = await newOrganization(svc, `parity-${label}-${twinCount}`, 'first');
      return {
        org,
        labels: new Map([
          [org.policyId, '<default policy>'],
          [org.projectId, '<first project>'],
        ]),
        rest: restClient(svc.gatewayUrl, org.rawKey),
        gql: gqlClient(svc.gatewayUrl, org.rawKey),
      };
    };
    R = await side('rest');
    G = await side('graphql');
  });

  /** Checks the status of a REST call and returns its body. */
  const ok = async (call: Promise<{ status: number; json: Json }>, status = 200): Promise<Json> => {
    const res = await call;
    expect({ status: res.status, body: res.json }).toMatchObject({ status });
    return res.json;
  };

  /**
   * Runs one operation both ways and compares the normalized results; returns [rest, graphql]. An
   * operation that creates an object names it: both new ids get that label.
   */
  const same = async (rest: Promise<Json> | Json, graphql: Promise<Json> | Json, created?: string): Promise<[Json, Json]> => {
    const [a, b] = [await rest, await graphql];
    if (created) {
      R.labels.set(a.id, created);
      G.labels.set(b.id, created);
    }
    expect(normalize(b, G.labels)).toEqual(normalize(a, R.labels));
    return [a, b];
  };

  it('detector_types and threshold_levels', async () => {
    const [types] = await same(
      ok(R.rest.get('/v1/policies/detector_types/')).then((b) => b.detector_types),
      G.gql.data('{ detector_types { value label category } }').then((d) => d.detector_types),
    );
    expect((types as Array<{ value: string }>).map((t) => t.value)).toEqual(DETECTOR_CATALOG.map((d) => d.value)); // the spec's 24 + secrets/credential
    const [levels] = await same(
      ok(R.rest.get('/v1/policies/threshold_levels/')).then((b) => b.threshold_levels),
      G.gql.data('{ threshold_levels { value label } }').then((d) => d.threshold_levels),
    );
    expect(levels).toHaveLength(4);
  });

  it('policies: create, get, list (filters, paging), update, duplicate, set_default, delete', async () => {
    const [rc, gc] = await same(
      ok(R.rest.post('/v1/policies/', FULL_POLICY), 201),
      G.gql.data(Q.createPolicy, { input: FULL_POLICY }).then((d) => d.createPolicy),
      '<full>',
    );
    const [rm, gm] = await same(
      ok(R.rest.post('/v1/policies/', { name: 'Parity minimal' }), 201),
      G.gql.data(Q.createPolicy, { input: { name: 'Parity minimal' } }).then((d) => d.createPolicy),
      '<minimal>',
    );

    await same(ok(R.rest.get(`/v1/policies/${rc.id}/`)), G.gql.data(Q.policy, { id: gc.id }).then((d) => d.policy));
    await same(ok(R.rest.get('/v1/policies/')), G.gql.data(Q.policies).then((d) => d.policies));
    for (const [query, vars] of [
      ['?is_default=true', { is_default: true }],
      ['?is_default=false&policy_mode=I', { is_default: false, policy_mode: 'I' }],
      ['?name=parity', { name: 'parity' }],
      ['?limit=1&offset=1', { limit: 1, offset: 1 }],
    ] as const) {
      const [page] = await same(ok(R.rest.get(`/v1/policies/${query}`)), G.gql.data(Q.policies, vars).then((d) => d.policies));
      expect(page.results.length).toBeGreaterThan(0);
    }

    const patch = { name: 'Parity full v2', output_detectors: [], rate_limits: { tokens_per_minute: 500 } };
    const [updated] = await same(
      ok(R.rest.patch(`/v1/policies/${rc.id}/`, patch)),
      G.gql.data(Q.updatePolicy, { id: gc.id, input: patch }).then((d) => d.updatePolicy),
    );
    expect(updated.rate_limits).toMatchObject({ rate_limits_enabled: true, requests_per_minute: 30, tokens_per_minute: 500 });

    const [rd, gd] = await same(
      ok(R.rest.post(`/v1/policies/${rc.id}/duplicate/`), 201),
      G.gql.data(Q.duplicatePolicy, { id: gc.id }).then((d) => d.duplicatePolicy),
      '<copy>',
    );
    expect(rd.name).toBe('Parity full v2 (copy)');

    const [def] = await same(
      ok(R.rest.post(`/v1/policies/${rm.id}/set_default/`)),
      G.gql.data(Q.setDefaultPolicy, { id: gm.id }).then((d) => d.setDefaultPolicy),
    );
    expect(def.is_default).toBe(true);
    await same(ok(R.rest.get('/v1/policies/?is_default=true')), G.gql.data(Q.policies, { is_default: true }).then((d) => d.policies));

    // delete: REST 204 without a body, GraphQL the deleted id; afterwards both read not_found.
    const restDelete = await R.rest.del(`/v1/policies/${R.org.policyId}/`);
    expect(restDelete).toEqual({ status: 204, json: undefined });
    const deleted = (await G.gql.data(Q.deletePolicy, { id: G.org.policyId })).deletePolicy;
    expect(deleted).toBe(G.org.policyId);
    await same(ok(R.rest.get('/v1/policies/')), G.gql.data(Q.policies).then((d) => d.policies));
    await same(
      R.rest.get(`/v1/policies/${R.org.policyId}/`).then((r) => (expect(r.status).toBe(404), restError(r.json))),
      G.gql.error(Q.policy, { id: G.org.policyId }).then(gqlError),
    );
    // The first project had no policy: it now shows the new default on both sides.
    await same(ok(R.rest.get(`/v1/projects/${R.org.projectId}/`)), G.gql.data(Q.project, { id: G.org.projectId }).then((d) => d.project));
  });

  it('projects: create, get, list (filters, paging), update, rotate_key, delete', async () => {
    const [rp, gp] = await same(
      ok(R.rest.post('/v1/policies/', { name: 'Parity assigned' }), 201),
      G.gql.data(Q.createPolicy, { input: { name: 'Parity assigned' } }).then((d) => d.createPolicy),
      '<assigned policy>',
    );

    const assignedR = { name: 'Assigned', environment: 'staging', policy_id: rp.id, key_scope: 'traffic' };
    const assignedG = { ...assignedR, policy_id: gp.id };
    const [ra, ga] = await same(
      ok(R.rest.post('/v1/projects/', assignedR), 201),
      G.gql.data(Q.createProject, { input: assignedG }).then((d) => d.createProject),
      '<assigned project>',
    );
    const [rb, gb] = await same(
      ok(R.rest.post('/v1/projects/', { name: 'Defaulted' }), 201),
      G.gql.data(Q.createProject, { input: { name: 'Defaulted' } }).then((d) => d.createProject),
      '<defaulted project>',
    );
    expect([ra.key_scope, rb.key_scope]).toEqual(['traffic', 'full']);
    for (const created of [ra, ga, rb, gb]) {
      expect(created.raw_key).toMatch(/^svc_sk_/);
      expect(created.raw_key.startsWith(created.key_prefix)).toBe(true);
    }

    await same(ok(R.rest.get(`/v1/projects/${ra.id}/`)), G.gql.data(Q.project, { id: ga.id }).then((d) => d.project));
    await same(ok(R.rest.get('/v1/projects/')), G.gql.data(Q.projects).then((d) => d.projects));
    for (const [query, gv] of [
      ['?environment=staging', { environment: 'staging' }],
      [`?policy_id=${rp.id}`, { policy_id: gp.id }],
      ['?name=default&is_active=true', { name: 'default', is_active: true }],
      ['?limit=2&offset=1', { limit: 2, offset: 1 }],
    ] as const) {
      const [page] = await same(ok(R.rest.get(`/v1/projects/${query}`)), G.gql.data(Q.projects, gv).then((d) => d.projects));
      expect(page.results.length).toBeGreaterThan(0);
    }

    const [moved] = await same(
      ok(R.rest.patch(`/v1/projects/${ra.id}/`, { name: 'Moved', environment: 'development', policy_id: null, key_scope: 'full' })),
      G.gql.data(Q.updateProject, { id: ga.id, input: { name: 'Moved', environment: 'development', policy_id: null, key_scope: 'full' } }).then((d) => d.updateProject),
    );
    expect(moved).toMatchObject({ uses_default_policy: true, policy_id: R.org.policyId, key_scope: 'full' });
    const [off] = await same(
      ok(R.rest.patch(`/v1/projects/${rb.id}/`, { is_active: false })),
      G.gql.data(Q.updateProject, { id: gb.id, input: { is_active: false } }).then((d) => d.updateProject),
    );
    expect(off.is_active).toBe(false);
    await same(ok(R.rest.get('/v1/projects/?is_active=false')), G.gql.data(Q.projects, { is_active: false }).then((d) => d.projects));

    const [rr, gr] = await same(
      ok(R.rest.post(`/v1/projects/${ra.id}/rotate_key/`)),
      G.gql.data(Q.rotateProjectKey, { id: ga.id }).then((d) => d.rotateProjectKey),
    );
    for (const [before, after] of [[ra, rr], [ga, gr]] as const) {
      expect(after.raw_key).not.toBe(before.raw_key);
      expect((await gqlRequest(svc.gatewayUrl, before.raw_key, '{ threshold_levels { value } }')).status).toBe(401);
      expect((await restClient(svc.gatewayUrl, after.raw_key).get('/v1/projects/')).status).toBe(200);
    }

    expect(await R.rest.del(`/v1/projects/${ra.id}/`)).toEqual({ status: 204, json: undefined });
    expect((await G.gql.data(Q.deleteProject, { id: ga.id })).deleteProject).toBe(ga.id);
    await same(ok(R.rest.get('/v1/projects/')), G.gql.data(Q.projects).then((d) => d.projects));
    await same(
      R.rest.get(`/v1/projects/${ra.id}/`).then((r) => (expect(r.status).toBe(404), restError(r.json))),
      G.gql.error(Q.project, { id: ga.id }).then(gqlError),
    );
  });

  describe('errors: same type, code, message and field paths', () => {
    const createBoth = (body: Json) =>
      same(
        R.rest.post('/v1/policies/', body).then((r) => (expect(r.status).toBe(400), restError(r.json))),
        G.gql.error(Q.createPolicy, { input: body }).then(gqlError),
      );

    it.each([
      ['a detector type listed twice', { name: 'x', input_detectors: [{ detector_type: 'jailbreak' }, { detector_type: 'jailbreak', action: 'log' }] }],
      ['an unknown detector type', { name: 'x', input_detectors: [{ detector_type: 'pii/nope' }] }],
      ['a custom pattern RE2 cannot compile', { name: 'x', custom_detectors: [{ name: 'bad', pattern: '(?<=a)b' }] }],
      ['an empty name', { name: '' }],
      ['an out-of-range rate limit', { name: 'x', rate_limits: { burst_multiplier: 1000 } }],
      ['a too long entry', { name: 'x', deny_list: { entries: ['y'.repeat(1025)] } }],
    ])('%s', async (_label, body) => {
      const [err] = await createBoth(body);
      expect(err.code).toBe('invalid_request');
      expect(err.fields?.length).toBeGreaterThan(0);
    });

    it('not_found, default undeletable, permission_denied on the own project, a policy_id of another organization', async () => {
      const missing = '00000000-0000-4000-8000-000000000000';
      const cases: Array<[Promise<{ status: number; json: Json }>, Promise<Json>, number]> = [
        [R.rest.patch(`/v1/policies/${missing}/`, { name: 'x' }), G.gql.error(Q.updatePolicy, { id: missing, input: { name: 'x' } }), 404],
        [R.rest.post(`/v1/policies/${missing}/duplicate/`), G.gql.error(Q.duplicatePolicy, { id: missing }), 404],
        [R.rest.post(`/v1/projects/${missing}/rotate_key/`), G.gql.error(Q.rotateProjectKey, { id: missing }), 404],
        [R.rest.del(`/v1/policies/${R.org.policyId}/`), G.gql.error(Q.deletePolicy, { id: G.org.policyId }), 400],
        [R.rest.del(`/v1/projects/${R.org.projectId}/`), G.gql.error(Q.deleteProject, { id: G.org.projectId }), 403],
        [
          R.rest.patch(`/v1/projects/${R.org.projectId}/`, { is_active: false }),
          G.gql.error(Q.updateProject, { id: G.org.projectId, input: { is_active: false } }),
          403,
        ],
        // Each side names the other's default policy.
        [R.rest.post('/v1/projects/', { name: 'x', policy_id: G.org.policyId }), G.gql.error(Q.createProject, { input: { name: 'x', policy_id: R.org.policyId } }), 400],
      ];
      for (const [rest, graphql, status] of cases) {
        const res = await rest;
        expect(res.status).toBe(status);
        await same(restError(res.json), graphql.then(gqlError));
      }
    });
  });
});
