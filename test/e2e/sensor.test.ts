import { generateApiKey } from '../../src/shared/api-key';
import { startFakeAnthropic, streamEvents, type FakeAnthropic } from '../fakes/fake-anthropic';
import { pgliteTarget } from '../helpers/databases';
import { postJson, startTestServices, type TestServices } from '../helpers/services';

/** The sensor's messages passthrough against a fake upstream speaking the real wire format. */
describe('sensor /v1/messages', () => {
  let upstream: FakeAnthropic;
  let svc: TestServices;
  beforeAll(async () => {
    upstream = await startFakeAnthropic();
    svc = await startTestServices(pgliteTarget, { env: { ANTHROPIC_BASE_URL: upstream.url, AUTH_CACHE_TTL_MS: '200' } });
  });
  afterAll(async () => {
    await svc?.dispose();
    await upstream?.close();
  });
  beforeEach(() => {
    upstream.received.length = 0;
    upstream.mode = 'ok';
  });

  const body = (content = 'Explain what a B-tree is.', extra: Record<string, unknown> = {}) => ({
    model: 'claude-sonnet-4-5',
    max_tokens: 256,
    system: 'You are a helpful coding assistant.',
    messages: [{ role: 'user', content }],
    ...extra,
  });
  const upstreamAuth = 'Bearer sk-ant-oat01-opaque-subscription-token';
  const headers = (over: Record<string, string> = {}) => ({
    authorization: upstreamAuth,
    'x-api-key': 'sk-ant-api03-upstream-key',
    'x-svc-key': svc.apiKey,
    'x-agent-session-id': '0b5e6a5e-8a4c-4c39-9f1e-3f1f3e0e9a11',
    'anthropic-version': '2023-06-01',
    'anthropic-beta': 'prompt-caching-2024-07-31,  oauth-2025-04-20',
    ...over,
  });

  it.each([
    ['a missing X-Svc-Key', {}, 'missing_api_key'],
    ['a malformed X-Svc-Key', { 'x-svc-key': 'not-a-key' }, 'malformed_api_key'],
    ['an unknown X-Svc-Key', { 'x-svc-key': generateApiKey() }, 'invalid_api_key'],
  ])('answers 401 authentication_error for %s and forwards nothing', async (_label, over, code) => {
    const h = headers(over as Record<string, string>);
    if (!('x-svc-key' in over)) delete (h as Record<string, string>)['x-svc-key'];
    const res = await postJson(`${svc.sensorUrl}/v1/messages`, body(), h);
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ type: 'error', error: { type: 'authentication_error', code, message: expect.any(String) } });
    expect(upstream.received).toHaveLength(0);
  });

  it('forwards an allowed request with the original bytes and headers, minus X-Svc-Key', async () => {
    const raw = JSON.stringify(body('Here is my email: dev@acme-corp.com'), null, 1); // unusual spacing must survive
    const res = await postJson(`${svc.sensorUrl}/v1/messages?beta=true`, raw, headers());
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'Hello from the fake upstream.' }] });
    expect(res.headers.get('request-id')).toBe('req_fake_json');
    expect(res.headers.get('x-risk-blocked')).toBe('false');
    expect(res.headers.get('x-risk-categories')).toBe('pii/email');
    const got = upstream.received[0]!;
    expect(got.url).toBe('/v1/messages?beta=true');
    expect(got.body.toString('utf8')).toBe(raw);
    expect(got.headers.authorization).toBe(upstreamAuth);
    expect(got.headers['x-api-key']).toBe('sk-ant-api03-upstream-key');
    expect(got.headers['anthropic-version']).toBe('2023-06-01');
    expect(got.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31,  oauth-2025-04-20');
    expect(got.headers['x-agent-session-id']).toBe('0b5e6a5e-8a4c-4c39-9f1e-3f1f3e0e9a11');
    expect(got.headers['x-svc-key']).toBeUndefined();
    expect(got.rawHeaders.map((h) => h.toLowerCase())).not.toContain('x-svc-key');
  });

  it('pipes an SSE stream through unchanged', async () => {
    const res = await fetch(`${svc.sensorUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers() },
      body: JSON.stringify(body('Stream please', { stream: true })),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('x-risk-blocked')).toBe('false');
    expect(await res.text()).toBe(streamEvents().join(''));
  });

  it('returns an upstream 401 unchanged', async () => {
    upstream.mode = 'unauthorized';
    const res = await postJson(`${svc.sensorUrl}/v1/messages`, body(), headers());
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
    expect(res.headers.get('request-id')).toBe('req_fake_401');
  });

  it('denies with 403 permission_error and forwards nothing when the policy blocks', async () => {
    await svc.running.storage!.query(
      `UPDATE policies SET deny_list = '{"entries": ["project aurora"], "match_type": "contains"}', updated_at = now()`,
    );
    // A change made behind the management API's back is seen once the key cache entry expires (TTL 200 ms here).
    await new Promise((r) => setTimeout(r, 250));
    const res = await postJson(
      `${svc.sensorUrl}/v1/messages`,
      body('ok', { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'notes about Project Aurora' }] }] }),
      headers(),
    );
    expect(res.status).toBe(403);
    expect(res.json).toEqual({
      type: 'error',
      error: { type: 'permission_error', code: 'content_blocked', message: expect.stringContaining('deny_list') },
    });
    expect(res.headers.get('x-risk-blocked')).toBe('true');
    expect(upstream.received).toHaveLength(0);
  });

  it('never logs the upstream Authorization value or the svc key', () => {
    expect(svc.logs.text).not.toContain('opaque-subscription-token');
    expect(svc.logs.text).not.toContain('sk-ant-api03');
    expect(svc.logs.text).not.toContain(svc.apiKey);
  });
});
