import { pgliteTarget } from '../helpers/databases';
import { gqlClient, restClient, type Json } from '../helpers/management-clients';
import { startTestServices, type TestServices } from '../helpers/services';

/**
 * Without ALERT_WEBHOOK_URL / ALERT_WEBHOOK_SECRET the alert action could never deliver: a create or
 * update that sets one is a 400 alerts_not_configured on REST and GraphQL, and nothing is stored.
 */
describe('alert action without alerts configured', () => {
  let svc: TestServices;
  let rest: ReturnType<typeof restClient>;
  let gql: ReturnType<typeof gqlClient>;

  beforeAll(async () => {
    svc = await startTestServices(pgliteTarget, { services: ['detection', 'gateway'] });
    rest = restClient(svc.gatewayUrl, svc.apiKey);
    gql = gqlClient(svc.gatewayUrl, svc.apiKey);
  });
  afterAll(async () => {
    await svc?.dispose();
  });

  const withAlert: Array<[string, Json, string]> = [
    ['input_detectors', { input_detectors: [{ detector_type: 'pii/email', action: 'alert' }] }, 'input_detectors.0.action'],
    [
      'output_detectors',
      { output_detectors: [{ detector_type: 'pii/email', action: 'block' }, { detector_type: 'unknown_links', action: 'alert' }] },
      'output_detectors.1.action',
    ],
    ['custom_detectors', { custom_detectors: [{ name: 'ticket', pattern: 'TCK-[0-9]{6}', action: 'alert' }] }, 'custom_detectors.0.action'],
  ];

  const expectRefused = (json: Json, path: string) => {
    expect(json).toEqual({
      error: {
        message: expect.stringMatching(/alerts are not configured.*ALERT_WEBHOOK_URL.*ALERT_WEBHOOK_SECRET/),
        type: 'invalid_request',
        code: 'alerts_not_configured',
        details: { fields: [{ path, message: expect.any(String) }] },
      },
    });
  };

  it.each(withAlert)('REST create and update with an alert in %s → 400, nothing stored', async (_field, body, path) => {
    const before = (await rest.get('/v1/policies/')).json.count as number;
    const created = await rest.post('/v1/policies/', { name: `alert-${path}`, ...body });
    expect(created.status).toBe(400);
    expectRefused(created.json, path);
    expect((await rest.get('/v1/policies/')).json.count).toBe(before);

    const plain = await rest.post('/v1/policies/', { name: `plain-${path}` });
    expect(plain.status).toBe(201);
    const updated = await rest.patch(`/v1/policies/${plain.json.id}/`, body);
    expect(updated.status).toBe(400);
    expectRefused(updated.json, path);
    const after = await rest.get(`/v1/policies/${plain.json.id}/`);
    expect(JSON.stringify(after.json)).not.toContain('"alert"');
  });

  it('REST: block and log stay accepted', async () => {
    const ok = await rest.post('/v1/policies/', {
      name: 'no-alert',
      input_detectors: [{ detector_type: 'pii/email', action: 'log' }],
      custom_detectors: [{ name: 'ticket', pattern: 'TCK-[0-9]{6}', action: 'block' }],
    });
    expect(ok.status).toBe(201);
  });

  it.each(withAlert)('GraphQL createPolicy and updatePolicy with an alert in %s → invalid_request alerts_not_configured', async (_field, body, path) => {
    const created = await gql.raw(`mutation($input: CreatePolicyInput!) { createPolicy(input: $input) { id } }`, { input: { name: `gql-alert-${path}`, ...body } });
    expect(created.json.data?.createPolicy ?? null).toBeNull();
    expect(created.json.errors[0]).toMatchObject({
      message: expect.stringMatching(/alerts are not configured/),
      extensions: { code: 'invalid_request', error_code: 'alerts_not_configured', fields: [{ path }] },
    });

    const plain = await gql.data(`mutation($input: CreatePolicyInput!) { createPolicy(input: $input) { id } }`, { input: { name: `gql-plain-${path}` } });
    const updated = await gql.raw(`mutation($id: ID!, $input: UpdatePolicyInput!) { updatePolicy(id: $id, input: $input) { id } }`, {
      id: plain.createPolicy.id,
      input: body,
    });
    expect(updated.json.errors[0]).toMatchObject({ extensions: { code: 'invalid_request', error_code: 'alerts_not_configured', fields: [{ path }] } });
  });
});
