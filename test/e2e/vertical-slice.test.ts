import { generateApiKey, hashApiKey, apiKeyDisplayPrefix } from '../../src/shared/api-key';
import { createDetectionClient } from '../../src/shared/detection-client';
import { STARTER_INPUT_DETECTORS } from '../../src/shared/policy';
import { STORAGE_TARGETS } from '../helpers/databases';
import { postJson, startTestServices, type TestServices } from '../helpers/services';

/**
 * The vertical slice: a request with an API key goes through the gateway, over real gRPC to the
 * detection service, and back, on real storage (PGlite, and PostgreSQL when TEST_DATABASE_URL is set).
 */
describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('vertical slice on %s', (_name, target) => {
  let svc: TestServices;
  beforeAll(async () => {
    svc = await startTestServices(target);
  });
  afterAll(async () => {
    await svc?.dispose();
  });

  const detect = (body: unknown, headers: Record<string, string> = {}) =>
    postJson(`${svc.gatewayUrl}/v1/detect`, body, { authorization: `Bearer ${svc.apiKey}`, ...headers });

  it('finds an email address through gateway → gRPC → detection', async () => {
    const res = await detect({ content: 'Please write to jane.doe@acme-corp.com about the invoice', direction: 'input' });
    expect(res.status).toBe(200);
    expect(res.json.blocked).toBe(false); // the starter policy logs emails; it does not block them
    expect(res.json.categories).toEqual([
      {
        type: 'pii/email',
        confidence: expect.any(Number),
        action: 'log',
        matches: [{ path: 'content', start: 16, end: 38, signal: 'signature:pii/email', score: res.json.categories[0].confidence }],
      },
    ]);
    expect(res.json.categories[0].confidence).toBeGreaterThanOrEqual(0.75);
    expect(res.headers.get('x-risk-blocked')).toBe('false');
    expect(res.headers.get('x-risk-categories')).toBe('pii/email');
    expect(Number(res.headers.get('x-risk-confidence'))).toBeGreaterThanOrEqual(0.75);
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('reports nothing for clean text, and names the detectors this version cannot run yet', async () => {
    const res = await detect({ content: 'What is the capital of France?' });
    expect(res.status).toBe(200);
    expect(res.json.blocked).toBe(false);
    expect(res.json.categories).toEqual([]);
    // Exactly the configured input detectors that this detection build does not implement (asked over gRPC).
    const client = createDetectionClient({ address: svc.running.detectionAddress!, timeoutMs: 2000 });
    const implemented = new Set((await client.listDetectorTypes()).filter((t) => t.implemented).map((t) => t.value));
    client.close();
    const expected = STARTER_INPUT_DETECTORS.map((d) => d.detector_type).filter((t) => !implemented.has(t));
    expect([...res.json.unscanned].sort()).toEqual([...expected].sort());
    expect(res.json.unscanned).not.toContain('pii/email');
    expect(res.headers.get('x-risk-categories')).toBe('');
    expect(res.headers.get('x-risk-confidence')).toBe('0');
  });

  it('uses output_detectors for direction output', async () => {
    const res = await detect({ content: 'reach me at ops@example-shop.io', direction: 'output' });
    expect(res.status).toBe(200);
    expect(res.json.categories.map((c: { type: string }) => c.type)).toEqual(['pii/email']);
  });

  describe('authentication', () => {
    it.each([
      ['no Authorization header', {}, 'missing_api_key'],
      ['a non-bearer scheme', { authorization: 'Basic dXNlcjpwYXNz' }, 'malformed_api_key'],
      ['an empty bearer', { authorization: 'Bearer ' }, 'malformed_api_key'],
      ['a key without the svc_sk_ prefix', { authorization: 'Bearer sk-proj-abcdefghijklmnopqrstuvwxyz0123456789' }, 'malformed_api_key'],
      ['an unknown key', { authorization: `Bearer ${generateApiKey()}` }, 'invalid_api_key'],
    ])('answers 401 authentication_error for %s', async (_label, headers, code) => {
      const res = await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'x' }, headers as Record<string, string>);
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ error: { message: expect.any(String), type: 'authentication_error', code } });
    });

    it('answers 401 for an inactive project key', async () => {
      const key = generateApiKey();
      const storage = svc.running.storage!;
      const [org] = await storage.query<{ id: string }>('SELECT id FROM organizations LIMIT 1');
      await storage.query(
        `INSERT INTO projects (organization_id, name, environment, key_hash, key_prefix, is_active) VALUES ($1, 'off', 'production', $2, $3, false)`,
        [org!.id, hashApiKey(key), apiKeyDisplayPrefix(key)],
      );
      const res = await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'x' }, { authorization: `Bearer ${key}` });
      expect(res.status).toBe(401);
      expect(res.json.error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
    });
  });

  describe('error envelope', () => {
    const noInternals = (text: string) => {
      expect(text).not.toMatch(/\n\s+at |node_modules|\.ts:\d+|stack/i);
    };

    it('malformed JSON → 400 invalid_request', async () => {
      const res = await detect('{"content": "unterminated');
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ error: { message: 'Request body is not valid JSON', type: 'invalid_request', code: 'invalid_json' } });
      noInternals(res.text);
    });

    it('wrong content type → 400 invalid_request', async () => {
      const res = await fetch(`${svc.gatewayUrl}/v1/detect`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain', authorization: `Bearer ${svc.apiKey}` },
        body: 'hello',
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { type: 'invalid_request', code: 'unsupported_media_type' } });
    });

    it('validation errors name the field', async () => {
      const res = await detect({ content: 42, direction: 'sideways' });
      expect(res.status).toBe(400);
      expect(res.json.error.type).toBe('invalid_request');
      expect(res.json.error.message).toMatch(/content: .*string/i);
      expect(res.json.error.message).toMatch(/direction: /);
      const extra = await detect({ content: 'x', contnet: 'typo' });
      expect(extra.status).toBe(400);
      expect(extra.json.error.message).toMatch(/contnet/);
    });

    it('unknown route → 404 not_found', async () => {
      const res = await fetch(`${svc.gatewayUrl}/v1/nothing-here`);
      expect(res.status).toBe(404);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ error: { message: 'No route for GET /v1/nothing-here', type: 'not_found', code: 'route_not_found' } });
      noInternals(text);
    });

    it('wrong method → 404 not_found in the envelope', async () => {
      const res = await fetch(`${svc.gatewayUrl}/v1/detect`, { headers: { authorization: `Bearer ${svc.apiKey}` } });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: { type: 'not_found' } });
    });

    it('an oversized body is refused in the envelope', async () => {
      const res = await detect({ content: 'a'.repeat(1_000_001) });
      expect(res.status).toBe(400);
      expect(res.json.error).toMatchObject({ type: 'invalid_request' });
      expect(res.json.error.message).toMatch(/content/);
    });
  });

  describe('health', () => {
    it('gateway and sensor report healthy with their dependencies', async () => {
      for (const [url, service] of [
        [svc.gatewayUrl, 'gateway'],
        [svc.sensorUrl, 'sensor'],
      ] as const) {
        const res = await fetch(`${url}/health`);
        expect(res.status).toBe(200);
        const body = (await res.json()) as Record<string, any>;
        expect(body).toMatchObject({
          status: 'healthy',
          service,
          version: expect.stringMatching(/^\d+\.\d+\.\d+/),
          uptime_s: expect.any(Number),
          checks: { database: { status: 'up' }, detection: { status: 'up' } },
        });
      }
    });
  });

  describe('logging', () => {
    it('never logs credentials or bodies', async () => {
      await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'body-marker-1234' }, { authorization: 'Bearer secret-value' });
      await detect({ content: 'another body-marker-5678 with jane@acme-corp.com' });
      const text = svc.logs.text;
      expect(svc.logs.lines.length).toBeGreaterThan(2); // the requests were logged
      expect(text).toContain('/v1/detect');
      expect(text).not.toContain('secret-value');
      expect(text).not.toContain(svc.apiKey);
      expect(text).not.toContain(svc.apiKey.slice(7)); // not even the random part alone
      expect(text).not.toContain('body-marker');
      expect(text).not.toContain('jane@acme-corp.com');
      for (const line of svc.logs.lines.filter((l) => l.includes('"req"'))) {
        expect(JSON.parse(line)).toHaveProperty('requestId');
      }
    });
  });
});
