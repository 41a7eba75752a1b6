import { provisionOrganization } from '../../src/storage/provision';
import { STORAGE_TARGETS } from '../helpers/databases';
import { startTestServices, type TestServices } from '../helpers/services';

type Json = Record<string, any>;

/** A tiny REST client bound to one key. */
function client(base: string, key: string) {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: (text ? JSON.parse(text) : undefined) as Json, headers: res.headers };
  };
  return {
    get: (p: string) => call('GET', p),
    post: (p: string, b?: unknown) => call('POST', p, b),
    patch: (p: string, b: unknown) => call('PATCH', p, b),
    del: (p: string) => call('DELETE', p),
    detect: (content: string) => call('POST', '/v1/detect', { content }),
  };
}

const SPEC_TYPES = [
  ['prompt_attack', 'Prompt Attack', 'prompt_defense'],
  ['jailbreak', 'Jailbreak Detection', 'prompt_defense'],
  ['pii/email', 'Email Address', 'data_leakage_prevention'],
  ['pii/credit_card', 'Credit Card', 'data_leakage_prevention'],
  ['pii/us_social_security_number', 'US Social Security Number', 'data_leakage_prevention'],
  ['pii/phone_number', 'Phone Number', 'data_leakage_prevention'],
  ['pii/ip_address', 'IP Address', 'data_leakage_prevention'],
  ['pii/iban_code', 'IBAN Code', 'data_leakage_prevention'],
  ['pii/address', 'Physical Address', 'data_leakage_prevention'],
  ['pii/name', 'Personal Name', 'data_leakage_prevention'],
  ['moderated_content/harassment', 'Harassment', 'content_moderation'],
  ['moderated_content/harassment_threatening', 'Threatening Harassment', 'content_moderation'],
  ['moderated_content/hate', 'Hate Speech', 'content_moderation'],
  ['moderated_content/hate_threatening', 'Threatening Hate Speech', 'content_moderation'],
  ['moderated_content/sexual', 'Sexual Content', 'content_moderation'],
  ['moderated_content/sexual_minors', 'Sexual Content (Minors)', 'content_moderation'],
  ['moderated_content/violence', 'Violence', 'content_moderation'],
  ['moderated_content/violence_graphic', 'Graphic Violence', 'content_moderation'],
  ['moderated_content/self_harm', 'Self Harm', 'content_moderation'],
  ['moderated_content/self_harm_intent', 'Self Harm Intent', 'content_moderation'],
  ['moderated_content/self_harm_instructions', 'Self Harm Instructions', 'content_moderation'],
  ['moderated_content/illicit', 'Illicit Activities', 'content_moderation'],
  ['moderated_content/illicit_violent', 'Violent Illicit Activities', 'content_moderation'],
  ['unknown_links', 'Unknown Links', 'malicious_links'],
];

const POLICY_FIELDS = [
  'id', 'name', 'policy_mode', 'is_default', 'input_detectors', 'output_detectors', 'allow_list', 'deny_list',
  'custom_detectors', 'pii_regions', 'unscannable', 'effective_unscannable', 'rate_limits', 'created_at', 'updated_at',
].sort();
const PROJECT_FIELDS = [
  'id', 'name', 'key_prefix', 'environment', 'policy_id', 'policy_name', 'uses_default_policy', 'key_scope', 'is_active', 'created_at', 'last_used_at',
].sort();

describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('management REST on %s', (_name, target) => {
  let svc: TestServices;
  let api: ReturnType<typeof client>;
  let defaultPolicyId: string;
  beforeAll(async () => {
    svc = await startTestServices(target);
    api = client(svc.gatewayUrl, svc.apiKey);
    const list = await api.get('/v1/policies/');
    defaultPolicyId = list.json.results.find((p: Json) => p.is_default).id;
  });
  afterAll(async () => {
    await svc?.dispose();
  });

  const newPolicy = async (over: Json = {}) => {
    const res = await api.post('/v1/policies/', { name: `p-${Math.random().toString(36).slice(2, 8)}`, ...over });
    expect(res.status).toBe(201);
    return res.json;
  };

  describe('routes on both prefixes and both slash forms', () => {
    it.each(['/v1', '/api/v1'])('%s: every policy route', async (prefix) => {
      for (const slash of ['/', '']) {
        const list = await api.get(`${prefix}/policies${slash}`);
        expect(list.status).toBe(200);
        expect(list.json.count).toBeGreaterThanOrEqual(1);
        expect(Object.keys(list.json.results[0]).sort()).toEqual(POLICY_FIELDS);

        const created = await api.post(`${prefix}/policies${slash}`, {
          name: 'Strict',
          policy_mode: 'I',
          input_detectors: [{ detector_type: 'pii/email', threshold: 'L1', action: 'block' }],
          output_detectors: [],
          allow_list: { entries: ['internal.example'], match_type: 'contains' },
          deny_list: { entries: ['project aurora'], match_type: 'exact' },
        });
        expect(created.status).toBe(201);
        expect(created.json).toMatchObject({
          name: 'Strict',
          policy_mode: 'I',
          is_default: false,
          input_detectors: [{ detector_type: 'pii/email', threshold: 'L1', action: 'block' }],
          deny_list: { entries: ['project aurora'], match_type: 'exact' },
          custom_detectors: [],
          rate_limits: {
            rate_limits_enabled: false,
            requests_per_minute: 60,
            tokens_per_minute: 100000,
            max_input_tokens: 8192,
            max_input_characters: 64000,
            max_output_tokens: 4096,
            burst_multiplier: 2,
            cost_limit_per_day_cents: 0,
          },
        });
        const id = created.json.id;
        expect((await api.get(`${prefix}/policies/${id}${slash}`)).json).toEqual(created.json);
        const patched = await api.patch(`${prefix}/policies/${id}${slash}`, { name: 'Stricter', rate_limits: { requests_per_minute: 10 } });
        expect(patched.status).toBe(200);
        expect(patched.json).toMatchObject({ name: 'Stricter', policy_mode: 'I', rate_limits: { requests_per_minute: 10, tokens_per_minute: 100000 } });
        const dup = await api.post(`${prefix}/policies/${id}/duplicate${slash}`);
        expect(dup.status).toBe(201);
        expect(dup.json).toMatchObject({ ...patched.json, id: expect.any(String), name: 'Stricter (copy)', is_default: false, created_at: expect.any(String), updated_at: expect.any(String) });
        expect(dup.json.id).not.toBe(id);
        const def = await api.post(`${prefix}/policies/${dup.json.id}/set_default${slash}`);
        expect(def.status).toBe(200);
        expect(def.json).toMatchObject({ id: dup.json.id, is_default: true });
        expect((await api.post(`${prefix}/policies/${defaultPolicyId}/set_default${slash}`)).status).toBe(200);
        expect((await api.del(`${prefix}/policies/${dup.json.id}${slash}`)).status).toBe(204);
        const gone = await api.del(`${prefix}/policies/${id}${slash}`);
        expect(gone.status).toBe(204);
        expect((await api.get(`${prefix}/policies/${id}${slash}`)).status).toBe(404);
      }
    });

    it.each(['/v1', '/api/v1'])('%s: every project route', async (prefix) => {
      for (const slash of ['/', '']) {
        const list = await api.get(`${prefix}/projects${slash}`);
        expect(list.status).toBe(200);
        expect(Object.keys(list.json.results[0]).sort()).toEqual(PROJECT_FIELDS);
        expect(list.json.results[0]).not.toHaveProperty('raw_key');

        const created = await api.post(`${prefix}/projects${slash}`, { name: 'App', environment: 'development' });
        expect(created.status).toBe(201);
        expect(created.json).toMatchObject({
          name: 'App',
          environment: 'development',
          policy_id: defaultPolicyId,
          policy_name: 'Default policy',
          uses_default_policy: true,
          key_scope: 'full',
          is_active: true,
          last_used_at: null,
          raw_key: expect.stringMatching(/^svc_sk_[A-Za-z0-9]{40}$/),
        });
        expect(created.json.key_prefix).toBe(created.json.raw_key.slice(0, 13));
        const id = created.json.id;
        const read = await api.get(`${prefix}/projects/${id}${slash}`);
        expect(read.status).toBe(200);
        expect(read.json).not.toHaveProperty('raw_key');
        const patched = await api.patch(`${prefix}/projects/${id}${slash}`, { name: 'App 2', environment: 'staging' });
        expect(patched.json).toMatchObject({ name: 'App 2', environment: 'staging' });
        const rotated = await api.post(`${prefix}/projects/${id}/rotate_key${slash}`);
        expect(rotated.status).toBe(200);
        expect(rotated.json.raw_key).not.toBe(created.json.raw_key);
        expect((await api.del(`${prefix}/projects/${id}${slash}`)).status).toBe(204);
        expect((await api.get(`${prefix}/projects/${id}${slash}`)).status).toBe(404);
      }
    });

    it('detector_types lists the spec catalog and threshold_levels lists L1–L4', async () => {
      for (const prefix of ['/v1', '/api/v1']) {
        const types = await api.get(`${prefix}/policies/detector_types/`);
        expect(types.status).toBe(200);
        for (const [value, label, category] of SPEC_TYPES) {
          expect(types.json.detector_types).toContainEqual({ value, label, category });
        }
        const levels = await api.get(`${prefix}/policies/threshold_levels`);
        expect(levels.json).toEqual({
          threshold_levels: [
            { value: 'L1', label: 'Confident' },
            { value: 'L2', label: 'Very Likely' },
            { value: 'L3', label: 'Likely' },
            { value: 'L4', label: 'Less Likely' },
          ],
        });
      }
    });

    it('management routes require a key', async () => {
      const res = await fetch(`${svc.gatewayUrl}/api/v1/policies/`);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: { type: 'authentication_error' } });
    });
  });

  describe('validation', () => {
    it.each([
      ['a detector type listed twice', { name: 'x', input_detectors: [{ detector_type: 'pii/email' }, { detector_type: 'pii/email', action: 'log' }] }, /input_detectors\.1\.detector_type: "pii\/email" is already listed/],
      ['an unknown detector type', { name: 'x', input_detectors: [{ detector_type: 'pii/dna' }] }, /input_detectors\.0\.detector_type/],
      ['an unknown field', { name: 'x', colour: 'red' }, /colour/],
      ['a wrong type', { name: 'x', policy_mode: 3 }, /policy_mode/],
      ['an unknown policy_mode', { name: 'x', policy_mode: 'IOX' }, /policy_mode/],
      ['an unknown threshold', { name: 'x', output_detectors: [{ detector_type: 'pii/email', threshold: 'L5' }] }, /output_detectors\.0\.threshold/],
      ['an unknown action', { name: 'x', output_detectors: [{ detector_type: 'pii/email', action: 'quarantine' }] }, /output_detectors\.0\.action/],
      ['an empty name', { name: '   ' }, /name: must not be empty/],
      ['a missing name', {}, /name/],
      ['a name too long', { name: 'n'.repeat(201) }, /name: must be at most 200/],
      ['a custom pattern RE2 cannot compile', { name: 'x', custom_detectors: [{ name: 'emp', pattern: '(?<=EMP)\\d+' }] }, /custom_detectors\.0\.pattern: not a valid RE2 pattern/],
      ['an unbalanced custom pattern', { name: 'x', custom_detectors: [{ name: 'emp', pattern: '(EMP' }] }, /custom_detectors\.0\.pattern/],
      ['a custom pattern that is too long', { name: 'x', custom_detectors: [{ name: 'big', pattern: 'a'.repeat(1025) }] }, /custom_detectors\.0\.pattern/],
      ['an invalid regex list entry', { name: 'x', deny_list: { entries: ['(a'], match_type: 'regex' } }, /deny_list\.entries\.0: not a valid RE2 pattern/],
      ['an unknown match_type', { name: 'x', allow_list: { entries: [], match_type: 'glob' } }, /allow_list\.match_type/],
      ['too many list entries', { name: 'x', deny_list: { entries: Array.from({ length: 1001 }, (_, i) => `e${i}`) } }, /deny_list\.entries/],
      ['a negative rate limit', { name: 'x', rate_limits: { requests_per_minute: -1 } }, /rate_limits\.requests_per_minute/],
      ['a non-boolean switch', { name: 'x', rate_limits: { rate_limits_enabled: 'yes' } }, /rate_limits\.rate_limits_enabled/],
    ])('policy with %s → 400 naming the field', async (_label, body, message) => {
      const res = await api.post('/v1/policies/', body);
      expect(res.status).toBe(400);
      expect(res.json.error.type).toBe('invalid_request');
      expect(res.json.error.message).toMatch(message);
    });

    it('PATCH validates too, and is_default cannot be patched (use set_default)', async () => {
      const p = await newPolicy();
      const bad = await api.patch(`/v1/policies/${p.id}/`, { input_detectors: [{ detector_type: 'jailbreak' }, { detector_type: 'jailbreak' }] });
      expect(bad.status).toBe(400);
      const def = await api.patch(`/v1/policies/${p.id}/`, { is_default: true });
      expect(def.status).toBe(400);
      expect(def.json.error.message).toMatch(/is_default/);
    });

    it.each([
      ['an unknown environment', { name: 'x', environment: 'qa' }, /environment/],
      ['an empty name', { name: '' }, /name: must not be empty/],
      ['a malformed policy_id', { name: 'x', policy_id: 'not-a-uuid' }, /policy_id: must be a UUID/],
      ['an unknown policy_id', { name: 'x', policy_id: '00000000-0000-4000-8000-000000000000' }, /policy_id: no policy with this id in your organization/],
      ['an unknown field', { name: 'x', raw_key: 'svc_sk_mine' }, /raw_key/],
    ])('project with %s → 400 naming the field', async (_label, body, message) => {
      const res = await api.post('/v1/projects/', body);
      expect(res.status).toBe(400);
      expect(res.json.error).toMatchObject({ type: 'invalid_request' });
      expect(res.json.error.message).toMatch(message);
    });

    it.each([['?limit=0'], ['?limit=101'], ['?offset=-1'], ['?is_default=maybe'], ['?colour=red']])('bad list query %s → 400', async (q) => {
      const res = await api.get(`/v1/policies/${q}`);
      expect(res.status).toBe(400);
      expect(res.json.error.type).toBe('invalid_request');
    });

    it('a non-UUID id answers 404 like a missing one', async () => {
      expect((await api.get('/v1/policies/not-a-uuid/')).status).toBe(404);
      expect((await api.get('/v1/projects/00000000-0000-4000-8000-000000000000/')).json.error).toMatchObject({ type: 'not_found' });
    });
  });

  describe('paging and filters', () => {
    it('pages policies with limit/offset and filters by name, is_default and policy_mode', async () => {
      for (let i = 0; i < 3; i++) await newPolicy({ name: `paging-${i}`, policy_mode: 'O' });
      const all = await api.get('/v1/policies/?name=paging-');
      expect(all.json.count).toBe(3);
      const page = await api.get('/v1/policies/?name=paging-&limit=2&offset=1');
      expect(page.json.count).toBe(3);
      expect(page.json.results.map((p: Json) => p.name)).toEqual(['paging-1', 'paging-2']);
      expect((await api.get('/v1/policies/?is_default=true')).json.results.map((p: Json) => p.id)).toEqual([defaultPolicyId]);
      const modes = (await api.get('/v1/policies/?policy_mode=O&name=paging')).json.results.map((p: Json) => p.policy_mode);
      expect(new Set(modes)).toEqual(new Set(['O']));
      expect((await api.get('/v1/policies/?name=%25')).json.count).toBe(0); // LIKE wildcards are literal
    });

    it('filters projects by environment, is_active and policy_id', async () => {
      const p = await newPolicy();
      const a = await api.post('/v1/projects/', { name: 'filter-a', environment: 'staging', policy_id: p.id });
      await api.post('/v1/projects/', { name: 'filter-b', environment: 'staging' });
      expect((await api.get(`/v1/projects/?policy_id=${p.id}`)).json.results.map((x: Json) => x.id)).toEqual([a.json.id]);
      expect((await api.get('/v1/projects/?environment=staging&name=filter-')).json.count).toBe(2);
      await api.patch(`/v1/projects/${a.json.id}/`, { is_active: false });
      expect((await api.get('/v1/projects/?is_active=false&name=filter-')).json.results.map((x: Json) => x.name)).toEqual(['filter-a']);
    });
  });

  describe('semantics', () => {
    it('keeps exactly one default policy under concurrent set_default calls', async () => {
      const ps = await Promise.all(Array.from({ length: 6 }, () => newPolicy()));
      const answers = await Promise.all(ps.map((p) => api.post(`/v1/policies/${p.id}/set_default/`)));
      expect(answers.map((a) => a.status)).toEqual(ps.map(() => 200));
      const defaults = (await api.get('/v1/policies/?is_default=true')).json;
      expect(defaults.count).toBe(1);
      expect(ps.map((p) => p.id)).toContain(defaults.results[0].id);
      await api.post(`/v1/policies/${defaultPolicyId}/set_default/`);
      expect((await api.get('/v1/policies/?is_default=true')).json.results[0].id).toBe(defaultPolicyId);
    });

    it('refuses to delete the default policy with a clear reason', async () => {
      const res = await api.del(`/v1/policies/${defaultPolicyId}/`);
      expect(res.status).toBe(400);
      expect(res.json.error).toMatchObject({ type: 'invalid_request', code: 'default_policy_undeletable' });
      expect(res.json.error.message).toMatch(/set_default/);
    });

    it('a policy change applies to the next request, and deleting a policy falls back to the default', async () => {
      const strict = await newPolicy({ deny_list: { entries: ['blue falcon'], match_type: 'contains' } });
      const proj = await api.post('/v1/projects/', { name: 'linked', policy_id: strict.id });
      const linked = client(svc.gatewayUrl, proj.json.raw_key);
      expect((await linked.detect('the blue falcon flies')).json.blocked).toBe(true);

      await api.patch(`/v1/policies/${strict.id}/`, { deny_list: { entries: ['red falcon'], match_type: 'contains' } });
      expect((await linked.detect('the blue falcon flies')).json.blocked).toBe(false);
      expect((await linked.detect('the red falcon flies')).json.blocked).toBe(true);

      await api.del(`/v1/policies/${strict.id}/`);
      const after = await api.get(`/v1/projects/${proj.json.id}/`);
      expect(after.json).toMatchObject({ policy_id: defaultPolicyId, policy_name: 'Default policy', uses_default_policy: true });
      expect((await linked.detect('the red falcon flies')).json.blocked).toBe(false);

      // set_default applies at once to projects without an assigned policy.
      const other = await newPolicy({ deny_list: { entries: ['green falcon'], match_type: 'contains' } });
      await api.post(`/v1/policies/${other.id}/set_default/`);
      expect((await linked.detect('a green falcon')).json.blocked).toBe(true);
      await api.post(`/v1/policies/${defaultPolicyId}/set_default/`);
      expect((await linked.detect('a green falcon')).json.blocked).toBe(false);
    });

    it('PATCH policy_id assigns, and null returns the project to the default', async () => {
      const p = await newPolicy({ name: 'assigned' });
      const proj = await api.post('/v1/projects/', { name: 'assign-me' });
      const set = await api.patch(`/v1/projects/${proj.json.id}/`, { policy_id: p.id });
      expect(set.json).toMatchObject({ policy_id: p.id, policy_name: 'assigned', uses_default_policy: false });
      const back = await api.patch(`/v1/projects/${proj.json.id}/`, { policy_id: null });
      expect(back.json).toMatchObject({ policy_id: defaultPolicyId, uses_default_policy: true });
    });

    it('deactivation, reactivation and rotation take effect on the very next request', async () => {
      const proj = await api.post('/v1/projects/', { name: 'lifecycle' });
      const key = proj.json.raw_key;
      const c = client(svc.gatewayUrl, key);
      expect((await c.detect('hello')).status).toBe(200);
      await api.patch(`/v1/projects/${proj.json.id}/`, { is_active: false });
      expect((await c.detect('hello')).status).toBe(401);
      await api.patch(`/v1/projects/${proj.json.id}/`, { is_active: true });
      expect((await c.detect('hello')).status).toBe(200);

      const rotated = await api.post(`/v1/projects/${proj.json.id}/rotate_key/`);
      expect((await c.detect('hello')).status).toBe(401);
      expect((await client(svc.gatewayUrl, rotated.json.raw_key).detect('hello')).status).toBe(200);

      await api.del(`/v1/projects/${proj.json.id}/`);
      expect((await client(svc.gatewayUrl, rotated.json.raw_key).detect('hello')).status).toBe(401);
    });

    it('a key may not delete or deactivate its own project (403 permission_denied)', async () => {
      const me = (await api.get('/v1/projects/')).json.results.find((p: Json) => svc.apiKey.startsWith(p.key_prefix));
      const del = await api.del(`/v1/projects/${me.id}/`);
      expect(del.status).toBe(403);
      expect(del.json.error).toMatchObject({ type: 'permission_denied', code: 'cannot_modify_own_project' });
      const off = await api.patch(`/v1/projects/${me.id}/`, { is_active: false });
      expect(off.status).toBe(403);
      expect((await api.detect('still works')).status).toBe(200);
    });
  });

  describe('tenancy', () => {
    it('another organization sees none of ours and gets 404 for our ids', async () => {
      const other = await svc.running.storage!.dataSource.transaction((m) =>
        provisionOrganization(m, { organizationName: 'Other', projectName: 'theirs', environment: 'production' }),
      );
      const them = client(svc.gatewayUrl, other.rawKey);
      const mine = await newPolicy({ name: 'ours-only' });
      const myProject = (await api.get('/v1/projects/')).json.results[0];

      const theirPolicies = (await them.get('/v1/policies/')).json;
      expect(theirPolicies.count).toBe(1);
      expect(theirPolicies.results[0].id).toBe(other.policyId);
      expect((await them.get('/v1/projects/')).json.results.map((p: Json) => p.id)).toEqual([other.projectId]);

      for (const res of [
        await them.get(`/v1/policies/${mine.id}/`),
        await them.patch(`/v1/policies/${mine.id}/`, { name: 'hijacked' }),
        await them.del(`/v1/policies/${mine.id}/`),
        await them.post(`/v1/policies/${mine.id}/set_default/`),
        await them.post(`/v1/policies/${mine.id}/duplicate/`),
        await them.get(`/v1/projects/${myProject.id}/`),
        await them.patch(`/v1/projects/${myProject.id}/`, { is_active: false }),
        await them.del(`/v1/projects/${myProject.id}/`),
        await them.post(`/v1/projects/${myProject.id}/rotate_key/`),
      ]) {
        expect(res.status).toBe(404);
        expect(res.json.error).toMatchObject({ type: 'not_found' });
      }
      // Our policy id is not assignable from their organization.
      const assign = await them.post('/v1/projects/', { name: 'sneaky', policy_id: mine.id });
      expect(assign.status).toBe(400);
      expect(assign.json.error.message).toMatch(/policy_id/);
      expect((await api.get(`/v1/policies/${mine.id}/`)).json.name).toBe('ours-only');
      expect((await api.detect('ok')).status).toBe(200);
    });
  });
});
