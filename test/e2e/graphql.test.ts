import { DETECTOR_CATALOG } from '../../src/shared/detector-catalog';
import { getIntrospectionQuery } from 'graphql';
import { PolicyService } from '../../src/management/policies/policy.service';
import { ProjectService } from '../../src/management/projects/project.service';
import { generateApiKey } from '../../src/shared/api-key';
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
 * The management GraphQL API at POST /graphql on real services (gRPC detection, PGlite and, with
 * TEST_DATABASE_URL, PostgreSQL): every query and mutation, auth, errors, tenancy, batching, limits.
 */
describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('GraphQL management API on %s', (_name, target) => {
  let svc: TestServices;
  let gql: ReturnType<typeof gqlClient>;

  beforeAll(async () => {
    svc = await startTestServices(target, { services: ['detection', 'gateway'], env: ALERTS_CONFIGURED_ENV });
    gql = gqlClient(svc.gatewayUrl, svc.apiKey);
  });
  afterAll(async () => {
    await svc?.dispose();
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  const createPolicy = async (input: Json): Promise<Json> =>
    (await gql.data(`mutation($input: CreatePolicyInput!) { createPolicy(input: $input) { ${POLICY_SELECTION} } }`, { input })).createPolicy;
  const createProject = async (input: Json): Promise<Json> =>
    (await gql.data(`mutation($input: CreateProjectInput!) { createProject(input: $input) { ${PROJECT_SELECTION} raw_key } }`, { input }))
      .createProject;
  const defaultPolicy = async (): Promise<Json> =>
    (await gql.data(`{ policies(is_default: true) { results { ${POLICY_SELECTION} } } }`)).policies.results[0];

  describe('authentication (same bearer key as REST)', () => {
    it.each([
      ['no Authorization header', null, 'missing_api_key'],
      ['a malformed key', 'not-a-key', 'malformed_api_key'],
      ['an unknown key', generateApiKey(), 'invalid_api_key'],
    ])('answers 401 with the spec envelope for %s', async (_label, key, code) => {
      const res = await gqlRequest(svc.gatewayUrl, key, '{ threshold_levels { value } }');
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ error: { message: expect.any(String), type: 'authentication_error', code } });
    });

    it('checks the key before parsing the body (as the REST routes do)', async () => {
      const res = await fetch(`${svc.gatewayUrl}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' });
      expect(res.status).toBe(401);
      expect(((await res.json()) as Json).error).toMatchObject({ type: 'authentication_error', code: 'missing_api_key' });
    });

    it('answers 401 on GET too, and serves queries over GET with a key', async () => {
      const url = `${svc.gatewayUrl}/graphql?query=${encodeURIComponent('{ threshold_levels { value } }')}`;
      const anonymous = await fetch(url, { headers: { 'apollo-require-preflight': 'true' } });
      expect(anonymous.status).toBe(401);
      const ok = await fetch(url, { headers: { authorization: `Bearer ${svc.apiKey}`, 'apollo-require-preflight': 'true' } });
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as Json).data.threshold_levels).toHaveLength(4);
    });

    it('refuses mutations over GET', async () => {
      const url = `${svc.gatewayUrl}/graphql?query=${encodeURIComponent('mutation { deletePolicy(id: "x") }')}`;
      const res = await fetch(url, { headers: { authorization: `Bearer ${svc.apiKey}`, 'apollo-require-preflight': 'true' } });
      expect(res.status).toBe(405);
    });
  });

  describe('queries', () => {
    it('detector_types lists the catalog (the spec\'s 24 types plus the secrets/credential addition) and threshold_levels L1-L4', async () => {
      const data = await gql.data('{ detector_types { value label category } threshold_levels { value label } }');
      expect(data.detector_types.map((d: Json) => d.value)).toEqual(DETECTOR_CATALOG.map((d) => d.value));
      expect(data.detector_types.filter((d: Json) => d.value !== 'secrets/credential')).toHaveLength(24);
      expect(data.detector_types).toContainEqual({ value: 'secrets/credential', label: 'Credential or Secret', category: 'secrets' });
      expect(data.detector_types[0]).toEqual({ value: 'prompt_attack', label: 'Prompt Attack', category: 'prompt_defense' });
      expect(data.detector_types.map((d: Json) => d.value)).toContain('pii/email');
      expect(data.threshold_levels.map((t: Json) => t.value)).toEqual(['L1', 'L2', 'L3', 'L4']);
    });

    it('policies pages and filters; policy reads one', async () => {
      const a = await createPolicy({ name: 'gql-filter-alpha', policy_mode: 'I' });
      await createPolicy({ name: 'gql-filter-beta', policy_mode: 'O' });
      const byName = (await gql.data('{ policies(name: "GQL-FILTER") { count results { name } } }')).policies;
      expect(byName).toEqual({ count: 2, results: [{ name: 'gql-filter-alpha' }, { name: 'gql-filter-beta' }] });
      const byMode = (await gql.data('{ policies(name: "gql-filter", policy_mode: I) { count results { id } } }')).policies;
      expect(byMode).toEqual({ count: 1, results: [{ id: a.id }] });
      const paged = (await gql.data('{ policies(name: "gql-filter", limit: 1, offset: 1) { count results { name } } }')).policies;
      expect(paged).toEqual({ count: 2, results: [{ name: 'gql-filter-beta' }] });
      const defaults = (await gql.data('{ policies(is_default: true) { count results { is_default } } }')).policies;
      expect(defaults).toEqual({ count: 1, results: [{ is_default: true }] });
      expect((await gql.data(`query($id: ID!) { policy(id: $id) { ${POLICY_SELECTION} } }`, { id: a.id })).policy).toEqual(a);
    });

    it('projects pages and filters; project reads one with its effective policy', async () => {
      const pol = await createPolicy({ name: 'gql-project-filter' });
      const p1 = await createProject({ name: 'gql-proj-filter-1', environment: 'staging', policy_id: pol.id });
      await createProject({ name: 'gql-proj-filter-2', environment: 'development' });
      const staging = (await gql.data('{ projects(name: "gql-proj-filter", environment: staging) { count results { id } } }')).projects;
      expect(staging).toEqual({ count: 1, results: [{ id: p1.id }] });
      const byPolicy = (await gql.data('query($p: ID) { projects(policy_id: $p) { count results { name } } }', { p: pol.id })).projects;
      expect(byPolicy).toEqual({ count: 1, results: [{ name: 'gql-proj-filter-1' }] });
      const active = (await gql.data('{ projects(name: "gql-proj-filter", is_active: true, limit: 1) { count results { name } } }')).projects;
      expect(active).toEqual({ count: 2, results: [{ name: 'gql-proj-filter-1' }] });
      const one = (await gql.data(`query($id: ID!) { project(id: $id) { ${PROJECT_SELECTION} policy { id name } } }`, { id: p1.id })).project;
      const { raw_key: _raw, ...withoutKey } = p1;
      expect(one).toEqual({ ...withoutKey, policy: { id: pol.id, name: 'gql-project-filter' } });
      expect(one.uses_default_policy).toBe(false);
    });
  });

  describe('policy mutations', () => {
    it('createPolicy applies the REST defaults and keeps every field', async () => {
      const created = await createPolicy({
        name: 'gql-full',
        input_detectors: [{ detector_type: 'pii/email', threshold: 'L3', action: 'log' }, { detector_type: 'jailbreak' }],
        deny_list: { entries: ['secret-project'], match_type: 'exact' },
        custom_detectors: [{ name: 'ticket', pattern: 'TCK-[0-9]{6}' }],
        rate_limits: { rate_limits_enabled: true, requests_per_minute: 10 },
      });
      expect(created).toMatchObject({
        name: 'gql-full',
        policy_mode: 'IO',
        is_default: false,
        input_detectors: [
          { detector_type: 'pii/email', threshold: 'L3', action: 'log' },
          { detector_type: 'jailbreak', threshold: 'L2', action: 'block' },
        ],
        output_detectors: [],
        allow_list: { entries: [], match_type: 'contains' },
        deny_list: { entries: ['secret-project'], match_type: 'exact' },
        custom_detectors: [{ name: 'ticket', pattern: 'TCK-[0-9]{6}', action: 'block' }],
        rate_limits: { rate_limits_enabled: true, requests_per_minute: 10, tokens_per_minute: 100000, burst_multiplier: 2 },
      });
    });

    it('updatePolicy changes only what is given (rate_limits merge)', async () => {
      const p = await createPolicy({ name: 'gql-upd', rate_limits: { requests_per_minute: 5 } });
      const updated = (
        await gql.data(`mutation($id: ID!, $input: UpdatePolicyInput!) { updatePolicy(id: $id, input: $input) { ${POLICY_SELECTION} } }`, {
          id: p.id,
          input: { name: 'gql-upd-2', rate_limits: { tokens_per_minute: 99 } },
        })
      ).updatePolicy;
      expect(updated).toMatchObject({ id: p.id, name: 'gql-upd-2', policy_mode: 'IO' });
      expect(updated.rate_limits).toMatchObject({ requests_per_minute: 5, tokens_per_minute: 99 });
    });

    it('duplicatePolicy copies all but id, is_default and created_at', async () => {
      const p = await createPolicy({ name: 'gql-dup', output_detectors: [{ detector_type: 'unknown_links', action: 'alert' }] });
      const copy = (await gql.data(`mutation($id: ID!) { duplicatePolicy(id: $id) { ${POLICY_SELECTION} } }`, { id: p.id })).duplicatePolicy;
      expect(copy.id).not.toBe(p.id);
      expect(copy.name).toBe('gql-dup (copy)');
      const strip = ({ id: _i, name: _n, created_at: _c, updated_at: _u, ...rest }: Json) => rest;
      expect(strip(copy)).toEqual(strip(p));
    });

    it('setDefaultPolicy moves the default; the default cannot be deleted; deletePolicy returns the id and unassigns projects', async () => {
      const previous = await defaultPolicy();
      const next = await createPolicy({ name: 'gql-next-default' });
      const set = (await gql.data('mutation($id: ID!) { setDefaultPolicy(id: $id) { id is_default } }', { id: next.id })).setDefaultPolicy;
      expect(set).toEqual({ id: next.id, is_default: true });
      expect((await defaultPolicy()).id).toBe(next.id);

      const undeletable = await gql.error('mutation($id: ID!) { deletePolicy(id: $id) }', { id: next.id });
      expect(undeletable.extensions).toEqual({ code: 'invalid_request', error_code: 'default_policy_undeletable' });
      expect(undeletable.path).toEqual(['deletePolicy']);

      const project = await createProject({ name: 'gql-on-previous', policy_id: previous.id });
      expect(project.policy_name).toBe(previous.name);
      expect((await gql.data('mutation($id: ID!) { deletePolicy(id: $id) }', { id: previous.id })).deletePolicy).toBe(previous.id);
      const after = (await gql.data('query($id: ID!) { project(id: $id) { policy_id uses_default_policy policy { id is_default } } }', { id: project.id }))
        .project;
      expect(after).toEqual({ policy_id: next.id, uses_default_policy: true, policy: { id: next.id, is_default: true } });
      const gone = await gql.error('query($id: ID!) { policy(id: $id) { id } }', { id: previous.id });
      expect(gone.extensions).toEqual({ code: 'not_found', error_code: 'not_found' });
    });
  });

  describe('project mutations', () => {
    it('createProject returns raw_key once; the key works at once', async () => {
      const p = await createProject({ name: 'gql-new' });
      expect(p).toMatchObject({ name: 'gql-new', environment: 'production', uses_default_policy: true, is_active: true, last_used_at: null });
      expect(p.raw_key).toMatch(/^svc_sk_/);
      expect(p.raw_key.startsWith(p.key_prefix)).toBe(true);
      const asNew = gqlClient(svc.gatewayUrl, p.raw_key);
      expect((await asNew.data('{ project: projects(name: "gql-new") { count } }')).project.count).toBe(1);
      const fields = (await gql.data('{ __type(name: "Project") { fields { name } } }')).__type.fields.map((f: Json) => f.name);
      expect(fields).not.toContain('raw_key');
    });

    it('updateProject assigns a policy, goes back to the default with null, and deactivates another key', async () => {
      const pol = await createPolicy({ name: 'gql-assign' });
      const p = await createProject({ name: 'gql-upd-proj' });
      const upd = `mutation($id: ID!, $input: UpdateProjectInput!) { updateProject(id: $id, input: $input) { ${PROJECT_SELECTION} policy { id } } }`;
      const assigned = (await gql.data(upd, { id: p.id, input: { policy_id: pol.id, environment: 'development', name: 'renamed' } })).updateProject;
      expect(assigned).toMatchObject({ name: 'renamed', environment: 'development', policy_id: pol.id, uses_default_policy: false, policy: { id: pol.id } });
      const back = (await gql.data(upd, { id: p.id, input: { policy_id: null } })).updateProject;
      expect(back).toMatchObject({ policy_id: (await defaultPolicy()).id, uses_default_policy: true });

      const off = (await gql.data(upd, { id: p.id, input: { is_active: false } })).updateProject;
      expect(off.is_active).toBe(false);
      const res = await gqlRequest(svc.gatewayUrl, p.raw_key, '{ threshold_levels { value } }');
      expect(res.status).toBe(401);
    });

    it('a key cannot deactivate or delete its own project (permission_denied)', async () => {
      const me = (await gql.data('{ projects(limit: 1) { results { id } } }')).projects.results[0];
      for (const op of ['mutation($id: ID!) { deleteProject(id: $id) }', 'mutation($id: ID!) { updateProject(id: $id, input: { is_active: false }) { id } }']) {
        const err = await gql.error(op, { id: me.id });
        expect(err.extensions).toEqual({ code: 'permission_denied', error_code: 'cannot_modify_own_project' });
      }
    });

    it('deleteProject returns the id and kills the key; rotateProjectKey replaces the key at once', async () => {
      const doomed = await createProject({ name: 'gql-doomed' });
      expect((await gql.data('mutation($id: ID!) { deleteProject(id: $id) }', { id: doomed.id })).deleteProject).toBe(doomed.id);
      expect((await gqlRequest(svc.gatewayUrl, doomed.raw_key, '{ threshold_levels { value } }')).status).toBe(401);

      const p = await createProject({ name: 'gql-rotate' });
      const rotated = (await gql.data(`mutation($id: ID!) { rotateProjectKey(id: $id) { ${PROJECT_SELECTION} raw_key policy { is_default } } }`, { id: p.id }))
        .rotateProjectKey;
      expect(rotated).toMatchObject({ id: p.id, name: 'gql-rotate', policy: { is_default: true } });
      expect(rotated.raw_key).not.toBe(p.raw_key);
      expect((await gqlRequest(svc.gatewayUrl, p.raw_key, '{ threshold_levels { value } }')).status).toBe(401);
      expect((await gqlRequest(svc.gatewayUrl, rotated.raw_key, '{ threshold_levels { value } }')).status).toBe(200);
    });
  });

  describe('validation errors: invalid_request with the field path (same zod schemas as REST)', () => {
    const create = (input: Json) => gql.error('mutation($input: CreatePolicyInput!) { createPolicy(input: $input) { id } }', { input });

    it.each([
      ['a detector type listed twice', { name: 'x', input_detectors: [{ detector_type: 'jailbreak' }, { detector_type: 'jailbreak' }] }, 'input_detectors.1.detector_type'],
      ['an unknown detector type', { name: 'x', output_detectors: [{ detector_type: 'pii/nope' }] }, 'output_detectors.0.detector_type'],
      ['a custom pattern RE2 cannot compile', { name: 'x', custom_detectors: [{ name: 'lookbehind', pattern: '(?<=a)b' }] }, 'custom_detectors.0.pattern'],
      ['an empty name', { name: '   ' }, 'name'],
      ['a regex allow-list entry RE2 cannot compile', { name: 'x', allow_list: { entries: ['(unclosed'], match_type: 'regex' } }, 'allow_list.entries.0'],
      ['an out-of-range rate limit', { name: 'x', rate_limits: { requests_per_minute: 0 } }, 'rate_limits.requests_per_minute'],
    ])('%s', async (_label, input, path) => {
      const err = await create(input);
      expect(err.extensions).toMatchObject({ code: 'invalid_request', error_code: 'invalid_request' });
      expect(err.extensions.fields).toEqual(expect.arrayContaining([{ path, message: expect.any(String) }]));
      expect(err.message).toContain(`${path}: `);
    });

    it('an unknown field or a wrong type is rejected by GraphQL itself, still as invalid_request naming the field', async () => {
      const unknown = await gqlRequest(svc.gatewayUrl, svc.apiKey, 'mutation($input: CreatePolicyInput!) { createPolicy(input: $input) { id } }', {
        input: { name: 'x', colour: 'red' },
      });
      expect(unknown.status).toBe(400);
      expect(unknown.json.errors[0].extensions).toEqual({ code: 'invalid_request', error_code: 'bad_user_input' });
      expect(unknown.json.errors[0].message).toContain('colour');

      const wrongEnum = await gql.error('mutation { createPolicy(input: { name: "x", policy_mode: IOX }) { id } }');
      expect(wrongEnum.extensions).toEqual({ code: 'invalid_request', error_code: 'graphql_validation_failed' });
      expect(wrongEnum.message).toContain('IOX');
    });

    it('a policy_id of another organization is invalid_request, list paging is bounded', async () => {
      const other = await newOrganization(svc, 'gql-validation-other');
      const err = await gql.error('mutation($input: CreateProjectInput!) { createProject(input: $input) { id } }', {
        input: { name: 'x', policy_id: other.policyId },
      });
      expect(err.extensions).toEqual({ code: 'invalid_request', error_code: 'invalid_policy_id' });
      expect(err.message).toContain('policy_id');
      const tooMany = await gql.error('{ projects(limit: 101) { count } }');
      expect(tooMany.extensions).toMatchObject({ code: 'invalid_request', fields: [{ path: 'limit', message: expect.any(String) }] });
    });
  });

  describe('tenancy', () => {
    it("another organization's ids are not_found, exactly like missing ones", async () => {
      const other = await newOrganization(svc, 'gql-tenancy-other');
      const them = gqlClient(svc.gatewayUrl, other.rawKey);
      const mine = await createPolicy({ name: 'gql-ours-only' });
      const myProject = await createProject({ name: 'gql-ours-project' });
      expect((await them.data('{ policies { count } projects { count } }'))).toEqual({ policies: { count: 1 }, projects: { count: 1 } });
      const ops: Array<[string, string]> = [
        ['query($id: ID!) { policy(id: $id) { id } }', mine.id],
        ['mutation($id: ID!) { updatePolicy(id: $id, input: { name: "hijack" }) { id } }', mine.id],
        ['mutation($id: ID!) { deletePolicy(id: $id) }', mine.id],
        ['mutation($id: ID!) { duplicatePolicy(id: $id) { id } }', mine.id],
        ['mutation($id: ID!) { setDefaultPolicy(id: $id) { id } }', mine.id],
        ['query($id: ID!) { project(id: $id) { id } }', myProject.id],
        ['mutation($id: ID!) { updateProject(id: $id, input: { name: "hijack" }) { id } }', myProject.id],
        ['mutation($id: ID!) { deleteProject(id: $id) }', myProject.id],
        ['mutation($id: ID!) { rotateProjectKey(id: $id) { id } }', myProject.id],
        ['query($id: ID!) { policy(id: $id) { id } }', '00000000-0000-4000-8000-000000000000'],
        ['query($id: ID!) { project(id: $id) { id } }', 'not-a-uuid'],
      ];
      for (const [op, id] of ops) {
        const err = await them.error(op, { id });
        expect(err.extensions).toEqual({ code: 'not_found', error_code: 'not_found' });
      }
      expect((await gql.data('query($id: ID!) { policy(id: $id) { name } }', { id: mine.id })).policy.name).toBe('gql-ours-only');
    });
  });

  describe('no N+1: projects → policy goes through one batched lookup', () => {
    it('20 projects on 4 policies: one getMany call, no per-project policy read', async () => {
      const org = await newOrganization(svc, 'gql-batching', 'batch-0');
      const client = gqlClient(svc.gatewayUrl, org.rawKey);
      const rest = restClient(svc.gatewayUrl, org.rawKey);
      const policyIds: string[] = [];
      for (let i = 0; i < 3; i += 1) policyIds.push((await rest.post('/v1/policies/', { name: `batch-policy-${i}` })).json.id);
      for (let i = 1; i < 20; i += 1) {
        const res = await rest.post('/v1/projects/', { name: `batch-${i}`, ...(i % 4 === 0 ? {} : { policy_id: policyIds[i % 3] }) });
        expect(res.status).toBe(201);
      }
      const getMany = jest.spyOn(PolicyService.prototype, 'getMany');
      const get = jest.spyOn(PolicyService.prototype, 'get');
      const projectGet = jest.spyOn(ProjectService.prototype, 'get');
      const data = await client.data('{ projects(limit: 100) { count results { name policy_id policy { id name rate_limits { requests_per_minute } } } } }');
      expect(data.projects.count).toBe(20);
      for (const p of data.projects.results) expect(p.policy.id).toBe(p.policy_id);
      expect(new Set(data.projects.results.map((p: Json) => p.policy.id)).size).toBe(4);
      expect(getMany).toHaveBeenCalledTimes(1);
      expect(new Set(getMany.mock.calls[0]![1])).toEqual(new Set(data.projects.results.map((p: Json) => p.policy_id)));
      expect(get).not.toHaveBeenCalled();
      expect(projectGet).not.toHaveBeenCalled();
    });
  });

  describe('limits and introspection', () => {
    it('serves the standard introspection query', async () => {
      const data = await gql.data(getIntrospectionQuery());
      const names = data.__schema.types.map((t: Json) => t.name);
      expect(names).toEqual(expect.arrayContaining(['Policy', 'Project', 'CreatedProject', 'CreatePolicyInput', 'PolicyMode']));
      expect(data.__schema.mutationType.name).toBe('Mutation');
    });

    it('rejects a query nested deeper than 8 levels', async () => {
      const deep = '{ __type(name: "Policy") { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } }';
      const res = await gqlRequest(svc.gatewayUrl, svc.apiKey, deep);
      expect(res.status).toBe(400);
      expect(res.json.errors[0].extensions.code).toBe('invalid_request');
      expect(res.json.errors[0].message).toMatch(/depth limit of 8/);
      expect(res.json.data).toBeUndefined();
    });

    it('rejects more than 15 aliases', async () => {
      const aliases = Array.from({ length: 16 }, (_, i) => `a${i}: threshold_levels { value }`).join(' ');
      const res = await gqlRequest(svc.gatewayUrl, svc.apiKey, `{ ${aliases} }`);
      expect(res.status).toBe(400);
      expect(res.json.errors[0].extensions.code).toBe('invalid_request');
      expect(res.json.errors[0].message).toMatch(/Aliases limit of 15/);
    });

    it('rejects an over-costly query and an oversized document', async () => {
      const fragment = `fragment P on Policy { ${POLICY_SELECTION} }`;
      const spreads = Array.from({ length: 15 }, (_, i) => `p${i}: projects { results { policy { ...P } } }`).join(' ');
      const costly = await gqlRequest(svc.gatewayUrl, svc.apiKey, `{ ${spreads} } ${fragment}`);
      expect(costly.status).toBe(400);
      expect(costly.json.errors.map((e: Json) => e.message).join(' ')).toMatch(/Cost limit of 5000/);

      const huge = `{ ${Array.from({ length: 1100 }, () => 'threshold_levels { value }').join(' ')} }`;
      const tokens = await gqlRequest(svc.gatewayUrl, svc.apiKey, huge);
      expect(tokens.status).toBe(400);
      expect(tokens.json.errors[0].extensions).toEqual({ code: 'invalid_request', error_code: 'graphql_parse_failed' });
      expect(tokens.json.errors[0].message).toMatch(/2000 tokens/);
    });

    it('hides field suggestions', async () => {
      const err = await gql.error('{ policies { results { nam } } }');
      expect(err.extensions.code).toBe('invalid_request');
      expect(err.message).not.toMatch(/Did you mean/);
    });
  });

  describe('unexpected errors', () => {
    it('are masked as internal_error and logged with the request id', async () => {
      jest.spyOn(PolicyService.prototype, 'list').mockRejectedValueOnce(new Error('connection to 10.0.0.7 lost: secret detail'));
      const res = await gqlRequest(svc.gatewayUrl, svc.apiKey, '{ policies { count } }', undefined, { 'x-request-id': 'gql-masking-1' });
      expect(res.status).toBe(200);
      expect(res.json.errors).toEqual([
        { message: 'Internal server error', locations: expect.any(Array), path: ['policies'], extensions: { code: 'internal_error', error_code: 'internal_error' } },
      ]);
      expect(JSON.stringify(res.json)).not.toContain('secret');
      const line = svc.logs.lines.find((l) => l.includes('graphql operation failed') && l.includes('gql-masking-1'));
      expect(line).toBeDefined();
    });
  });
});
