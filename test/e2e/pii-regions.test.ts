import { DEFAULT_PII_REGIONS } from '../../src/shared/policy';
import { STORAGE_TARGETS } from '../helpers/databases';
import { gqlClient, restClient, type Json } from '../helpers/management-clients';
import { postJson, startTestServices, type TestServices } from '../helpers/services';

/**
 * pii_regions end to end: a policy created over REST with a region list, a project using it, and
 * /v1/detect (gateway → gRPC → detection) reading national phone numbers of those regions only; the
 * field read back over REST and GraphQL, kept by duplicate, and rejected with a clear 400 when invalid.
 */
describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('pii_regions on %s', (_name, target) => {
  let svc: TestServices;
  let api: ReturnType<typeof restClient>;
  beforeAll(async () => {
    svc = await startTestServices(target);
    api = restClient(svc.gatewayUrl, svc.apiKey);
  });
  afterAll(async () => {
    await svc?.dispose();
  });

  const FRENCH_MOBILE = 'Vous pouvez me joindre au 06 12 34 56 78 demain.';
  const UK_LANDLINE = 'Ring me on 020 7946 0958 after lunch.';

  async function projectWith(policy: Json): Promise<(content: string) => Promise<Json>> {
    const created = await api.post('/v1/policies/', policy);
    expect(created.status).toBe(201);
    const project = await api.post('/v1/projects/', { name: `p-${created.json.id.slice(0, 8)}`, environment: 'development', policy_id: created.json.id });
    expect(project.status).toBe(201);
    const key = project.json.raw_key as string;
    return async (content: string) => {
      const res = await postJson(`${svc.gatewayUrl}/v1/detect`, { content, direction: 'input' }, { authorization: `Bearer ${key}` });
      expect(res.status).toBe(200);
      return res.json as Json;
    };
  }

  const phoneTypes = (r: Json) => (r.categories as Json[]).map((c) => c.type).filter((t) => t === 'pii/phone_number');

  it('detect reads national numbers of the policy regions only, and follows an update', async () => {
    const name = `fr-only-${Date.now()}`;
    const detect = await projectWith({
      name,
      input_detectors: [{ detector_type: 'pii/phone_number', threshold: 'L2', action: 'block' }],
      pii_regions: ['FR'],
    });
    expect(phoneTypes(await detect(FRENCH_MOBILE))).toEqual(['pii/phone_number']);
    expect(phoneTypes(await detect(UK_LANDLINE))).toEqual([]);
    // "+CC" numbers are read whatever the regions.
    expect(phoneTypes(await detect('Call +44 20 7946 0958 please.'))).toEqual(['pii/phone_number']);

    const policies = await api.get(`/v1/policies/?name=${name}`);
    const id = policies.json.results[0].id as string;
    const patched = await api.patch(`/v1/policies/${id}/`, { pii_regions: ['GB'] });
    expect(patched.status).toBe(200);
    expect(patched.json.pii_regions).toEqual(['GB']);
    // The gateway's policy cache follows the change (its cache key is the policy's update time).
    let uk: string[] = [];
    for (let i = 0; i < 50 && uk.length === 0; i++) {
      uk = phoneTypes(await detect(UK_LANDLINE));
      if (uk.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(uk).toEqual(['pii/phone_number']);
    expect(phoneTypes(await detect(FRENCH_MOBILE))).toEqual([]);
  });

  it('reads the field back (REST and GraphQL), defaults it, and keeps it on duplicate', async () => {
    const created = await api.post('/v1/policies/', { name: `regions-${Date.now()}`, pii_regions: ['DE', 'AT', 'CH'] });
    expect(created.status).toBe(201);
    expect(created.json.pii_regions).toEqual(['DE', 'AT', 'CH']);
    const read = await api.get(`/v1/policies/${created.json.id}/`);
    expect(read.json.pii_regions).toEqual(['DE', 'AT', 'CH']);
    const copy = await api.post(`/v1/policies/${created.json.id}/duplicate/`);
    expect(copy.status).toBe(201);
    expect(copy.json.pii_regions).toEqual(['DE', 'AT', 'CH']);
    const gql = gqlClient(svc.gatewayUrl, svc.apiKey);
    const data = await gql.data('query($id: ID!) { policy(id: $id) { pii_regions } }', { id: created.json.id });
    expect(data.policy.pii_regions).toEqual(['DE', 'AT', 'CH']);
    const viaGql = await gql.data('mutation($i: CreatePolicyInput!) { createPolicy(input: $i) { pii_regions } }', {
      i: { name: `gql-${Date.now()}`, pii_regions: ['JP'] },
    });
    expect(viaGql.createPolicy.pii_regions).toEqual(['JP']);
    const plain = await api.post('/v1/policies/', { name: `default-regions-${Date.now()}` });
    expect(plain.json.pii_regions).toEqual([...DEFAULT_PII_REGIONS]);
    // The bootstrap organization's default policy (migrated / provisioned) has the default list too.
    const list = await api.get('/v1/policies/?is_default=true');
    expect(list.json.results[0].pii_regions).toEqual([...DEFAULT_PII_REGIONS]);
  });

  it.each([
    ['a lower-case code', ['fr'], 'pii_regions.0', /"fr" is not an ISO 3166-1 alpha-2 region code \(codes are upper case: "FR"\)/],
    ['an unknown code', ['XX'], 'pii_regions.0', /"XX" is not an ISO 3166-1 alpha-2 region code with a telephone numbering plan/],
    ['a code listed twice', ['FR', 'FR'], 'pii_regions.1', /"FR" is listed twice/],
    ['an empty list', [], 'pii_regions', /at least one region/],
    ['a non-string', [33], 'pii_regions.0', /expected string/],
  ])('rejects %s with 400 invalid_request in the envelope', async (_label, regions, path, why) => {
    for (const send of [(b: Json) => api.post('/v1/policies/', b), async (b: Json) => api.patch(`/v1/policies/${(await api.get('/v1/policies/')).json.results[0].id}/`, b)]) {
      const res = await send({ name: 'bad-regions', pii_regions: regions });
      expect(res.status).toBe(400);
      expect(res.json.error).toMatchObject({ type: 'invalid_request', message: expect.stringContaining('pii_regions') });
      expect(res.json.error.details.fields[0]).toEqual({ path, message: expect.stringMatching(why) });
    }
  });
});
