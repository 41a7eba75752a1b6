import Anthropic from '@anthropic-ai/sdk';
import { FAKE_ANTHROPIC_MODELS, fakeTokenCount, rawHeaderValues, startFakeAnthropic, UNAUTHORIZED_BODY, type FakeAnthropic } from '../fakes/fake-anthropic';
import { STORAGE_TARGETS } from '../helpers/databases';
import { restClient, type Json } from '../helpers/management-clients';
import { startTestServices, type TestServices } from '../helpers/services';

/**
 * The sensor's POST /v1/messages/count_tokens and GET /v1/models(/{id}) (docs/endpoints.md), called by
 * the official @anthropic-ai/sdk as a coding assistant calls them: the client's own credentials reach
 * the upstream byte for byte, X-Svc-Key authenticates and is stripped. count_tokens sends the whole
 * conversation to the provider, so it gets the input scan of /v1/messages: what /v1/messages blocks
 * (a secret in a message, in the system prompt, in a tool result, in a tool definition, an e-mail
 * address) is blocked here with the same 403, and the upstream never sees it.
 */

const AUTH_TOKEN = 'sk-ant-oat01-count-tokens-opaque-token-5e21';
const UPSTREAM_API_KEY = 'sk-ant-api03-count-tokens-upstream-key-77b0';
const VERSION = '2023-06-01';
const BETA = 'token-counting-2024-11-01,  oauth-2025-04-20';
/** Any model name: the SDK only warns about a few deprecated ones (the fake answers whatever is asked). */
const MODEL = 'claude-opus-4-7';
/** A GitHub personal access token (secrets/credential, rule `github`). */
const SECRET = `ghp_${'R7kQ2mX9vL4pT8wZ3nB6cH1jF5dS0aYgUeIo'}`;
const START = Date.UTC(2025, 10, 20, 8, 0, 0);

type CountParams = Anthropic.MessageCountTokensParams;

/** Requests that /v1/messages blocks, each with the secret (or an e-mail address) somewhere else. */
const SMUGGLED: Array<[string, CountParams]> = [
  ['a secret in a user message', { model: MODEL, messages: [{ role: 'user', content: `Deploy with token ${SECRET}` }] }],
  ['a secret in the system prompt (string)', { model: MODEL, system: `Use the token ${SECRET} for every push.`, messages: [{ role: 'user', content: 'hi' }] }],
  ['a secret in the system prompt (blocks)', { model: MODEL, system: [{ type: 'text', text: `token: ${SECRET}` }], messages: [{ role: 'user', content: 'hi' }] }],
  [
    'a secret in a tool_result',
    {
      model: MODEL,
      messages: [
        { role: 'user', content: 'Read the env file' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'read_file', input: { path: '.env' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: [{ type: 'text', text: `GITHUB_TOKEN=${SECRET}` }] }] },
      ],
    },
  ],
  [
    'a secret in a tool definition',
    {
      model: MODEL,
      tools: [{ name: 'push', description: `Pushes with ${SECRET}`, input_schema: { type: 'object', properties: {} } }],
      messages: [{ role: 'user', content: 'push it' }],
    },
  ],
  ['an e-mail address (PII) in a user message', { model: MODEL, messages: [{ role: 'user', content: 'Write to jane.doe@acme-corp.com about it' }] }],
];

describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('sensor count_tokens and models on %s', (_name, target) => {
  let upstream: FakeAnthropic;
  let svc: TestServices;
  let client: Anthropic;
  let rest: ReturnType<typeof restClient>;
  let policyId: string;
  const clock = { now: START };
  /** The headers the SDK itself put on each request (captured at its fetch). */
  const sent: Headers[] = [];

  const makeClient = (svcKey: string | null) =>
    new Anthropic({
      authToken: AUTH_TOKEN,
      baseURL: svc.sensorUrl,
      maxRetries: 0,
      defaultHeaders: {
        ...(svcKey === null ? {} : { 'x-svc-key': svcKey }),
        'x-api-key': UPSTREAM_API_KEY,
        'anthropic-version': VERSION,
        'anthropic-beta': BETA,
      },
      fetch: (async (url: string | URL | Request, init?: RequestInit) => {
        sent.push(new Headers(init?.headers));
        return fetch(url, init);
      }) as typeof fetch,
    });

  beforeAll(async () => {
    upstream = await startFakeAnthropic();
    svc = await startTestServices(target, { env: { ANTHROPIC_BASE_URL: upstream.url }, clock: () => clock.now });
    rest = restClient(svc.gatewayUrl, svc.apiKey);
    policyId = (await rest.get('/v1/policies/?is_default=true')).json.results[0].id;
    const patched = await rest.patch(`/v1/policies/${policyId}/`, {
      input_detectors: [
        { detector_type: 'secrets/credential', threshold: 'L2', action: 'block' },
        { detector_type: 'pii/email', threshold: 'L2', action: 'block' },
      ],
      output_detectors: [],
    });
    expect(patched.status).toBe(200);
    client = makeClient(svc.apiKey);
  });
  afterAll(async () => {
    await svc?.dispose();
    await upstream?.close();
  });
  beforeEach(() => {
    clock.now += 10 * 60_000;
    upstream.received.length = 0;
    upstream.headerErrors.length = 0;
    upstream.mode = 'ok';
    upstream.expectHeaders = { authorization: `Bearer ${AUTH_TOKEN}`, 'x-api-key': UPSTREAM_API_KEY, 'anthropic-version': VERSION, 'anthropic-beta': BETA };
    upstream.forbidHeaders = ['x-svc-key'];
    sent.length = 0;
  });

  /** One request reached the upstream at `url`, its provider headers byte for byte as the SDK sent them, no X-Svc-Key. */
  function expectForwarded(method: string, url: string): void {
    expect(upstream.headerErrors).toEqual([]);
    expect(upstream.received).toHaveLength(1);
    const got = upstream.received[0]!;
    expect({ method: got.method, url: got.url }).toEqual({ method, url });
    const fromSdk = sent[sent.length - 1]!;
    for (const name of ['authorization', 'x-api-key', 'anthropic-version', 'anthropic-beta', 'user-agent']) {
      expect(rawHeaderValues(got.rawHeaders, name)).toEqual([fromSdk.get(name)]);
    }
    expect(rawHeaderValues(got.rawHeaders, 'x-svc-key')).toEqual([]);
  }

  describe('POST /v1/messages/count_tokens', () => {
    it('messages.countTokens() returns the upstream count; the body goes upstream byte for byte', async () => {
      const params: CountParams = {
        model: MODEL,
        system: 'You are terse.',
        messages: [{ role: 'user', content: 'How many tokens is this?' }],
        tools: [{ name: 'lookup', description: 'Looks a word up', input_schema: { type: 'object', properties: { word: { type: 'string' } } } }],
      };
      const { data, response } = await client.messages.countTokens(params).withResponse();
      expectForwarded('POST', '/v1/messages/count_tokens');
      expect(data).toEqual({ input_tokens: fakeTokenCount(upstream.received[0]!.body) });
      expect(JSON.parse(upstream.received[0]!.body.toString('utf8'))).toEqual(params);
      expect(response.headers.get('x-risk-blocked')).toBe('false');
      expect(response.headers.get('request-id')).toBe('req_fake_count');
    });

    it.each(SMUGGLED)('%s: blocked as on /v1/messages, with the same 403; nothing is forwarded', async (_where, params) => {
      const err = await client.messages.countTokens(params).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.PermissionDeniedError);
      const e = err as InstanceType<typeof Anthropic.PermissionDeniedError>;
      expect(e.status).toBe(403);
      expect(e.headers?.get('x-risk-blocked')).toBe('true');
      expect(upstream.received).toHaveLength(0);
      // The very same denial as the messages request it counts.
      const viaMessages = await client.messages.create({ ...params, max_tokens: 64 } as Anthropic.MessageCreateParamsNonStreaming).catch((x: unknown) => x);
      expect(viaMessages).toBeInstanceOf(Anthropic.PermissionDeniedError);
      expect(e.error).toEqual((viaMessages as InstanceType<typeof Anthropic.PermissionDeniedError>).error);
      expect(e.error).toEqual({ type: 'error', error: { type: 'permission_error', code: 'content_blocked', message: expect.stringMatching(/secrets\/credential|pii\/email/) } });
      expect(upstream.received).toHaveLength(0);
    });

    it('an upstream 401 comes back unchanged', async () => {
      upstream.mode = 'unauthorized';
      const err = await client.messages.countTokens({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
      expect((err as InstanceType<typeof Anthropic.AuthenticationError>).error).toEqual(UNAUTHORIZED_BODY);
      expectForwarded('POST', '/v1/messages/count_tokens');
    });

    it('a malformed body is a 400 with the messages envelope; nothing is forwarded', async () => {
      const res = await fetch(`${svc.sensorUrl}/v1/messages/count_tokens`, {
        method: 'POST',
        headers: { 'x-svc-key': svc.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, messages: 'not an array' }),
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ type: 'error', error: { type: 'invalid_request', code: 'invalid_request', message: expect.any(String) } });
      expect(upstream.received).toHaveLength(0);
    });
  });

  describe('GET /v1/models', () => {
    it('models.list() returns the upstream page; the query and the provider headers are forwarded', async () => {
      const page = await client.models.list({ limit: 2 });
      expect(page.data).toEqual(FAKE_ANTHROPIC_MODELS);
      expectForwarded('GET', '/v1/models?limit=2');
    });

    it('models.retrieve(id) returns the model; an unknown id is the upstream 404, unchanged', async () => {
      const model = await client.models.retrieve('claude-opus-4-1-20250805');
      expect(model).toEqual(FAKE_ANTHROPIC_MODELS[1]);
      expectForwarded('GET', '/v1/models/claude-opus-4-1-20250805');
      upstream.received.length = 0;
      const err = await client.models.retrieve('claude-nope').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.NotFoundError);
      expect((err as InstanceType<typeof Anthropic.NotFoundError>).error).toEqual({ type: 'error', error: { type: 'not_found_error', message: 'model: claude-nope' } });
    });

    it('without X-Svc-Key: 401 with the messages envelope; nothing is forwarded (count_tokens too)', async () => {
      const anonymous = makeClient(null);
      const err = await anonymous.models.list().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
      expect((err as InstanceType<typeof Anthropic.AuthenticationError>).error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
      const counted = await anonymous.messages.countTokens({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
      expect(counted).toBeInstanceOf(Anthropic.AuthenticationError);
      expect(upstream.received).toHaveLength(0);
    });
  });

  it('count_tokens and models count as requests for the policy rate limits, spending no tokens', async () => {
    const limits = {
      rate_limits_enabled: true, requests_per_minute: 2, burst_multiplier: 1, tokens_per_minute: 1000,
      max_input_tokens: 500, max_input_characters: 64_000, max_output_tokens: 500, cost_limit_per_day_cents: 0,
    };
    expect((await rest.patch(`/v1/policies/${policyId}/`, { rate_limits: limits })).status).toBe(200);
    try {
      const counted = await client.messages.countTokens({ model: MODEL, messages: [{ role: 'user', content: 'hello there' }] }).withResponse();
      expect(counted.response.headers.get('x-ratelimit-remaining')).toBe('1');
      expect(counted.response.headers.get('x-tokenlimit-remaining')).toBe('1000');
      const listed = await client.models.list().withResponse();
      expect(listed.response.headers.get('x-ratelimit-remaining')).toBe('0');
      upstream.received.length = 0;
      const refused = await client.messages.countTokens({ model: MODEL, messages: [{ role: 'user', content: 'hello again' }] }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(Anthropic.RateLimitError);
      expect(upstream.received).toHaveLength(0);
    } finally {
      await rest.patch(`/v1/policies/${policyId}/`, { rate_limits: { rate_limits_enabled: false } });
    }
  });

  it('audits every call: path, status, blocked with the findings, model; no content', async () => {
    await svc.running.audit!.flush();
    const rows = await svc.running.storage!.query<Json>(
      `SELECT kind, path, response_status, blocked, model, findings, input_tokens FROM security_events
        WHERE path = '/v1/messages/count_tokens' OR path LIKE '/v1/models%' ORDER BY created_at`,
    );
    const summary = rows.map((r) => [r.kind, r.path, r.response_status, r.blocked]);
    expect(summary).toEqual(
      expect.arrayContaining([
        ['request', '/v1/messages/count_tokens', 200, false],
        ['request', '/v1/messages/count_tokens', 403, true],
        ['request', '/v1/messages/count_tokens', 401, false],
        ['request', '/v1/messages/count_tokens', 400, false],
        ['auth_failed', '/v1/messages/count_tokens', 401, false],
        ['request', '/v1/models', 200, false],
        ['request', '/v1/models/claude-nope', 404, false],
        ['auth_failed', '/v1/models', 401, false],
      ]),
    );
    const blocked = rows.filter((r) => r.blocked);
    expect(blocked).toHaveLength(SMUGGLED.length);
    for (const r of blocked) {
      expect(r.model).toBe(MODEL);
      expect(r.findings.map((f: Json) => f.type)).toEqual(expect.arrayContaining([expect.stringMatching(/secrets\/credential|pii\/email/)]));
    }
    expect(rows.find((r) => r.path === '/v1/models/claude-nope')!.model).toBe('claude-nope');
    for (const r of rows) expect(r.input_tokens).toBeNull();
    const dump = JSON.stringify(rows);
    for (const s of [SECRET, 'jane.doe@acme-corp.com', AUTH_TOKEN, UPSTREAM_API_KEY, svc.apiKey]) expect(dump).not.toContain(s);
  });
});
