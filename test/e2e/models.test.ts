import OpenAI from 'openai';
import { FAKE_MODELS, startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai';
import { STORAGE_TARGETS } from '../helpers/databases';
import { restClient, type Json } from '../helpers/management-clients';
import { startTestServices, type TestServices } from '../helpers/services';

/**
 * GET /v1/models and GET /v1/models/{id} on the gateway (docs/endpoints.md): a passthrough to the
 * OpenAI-compatible upstream with the gateway's own upstream credential, called by the official openai
 * SDK (models.list(), models.retrieve()) with a project key of either scope; audited; one request for
 * the policy's rate limits (no tokens); upstream errors mapped as chat completions map them.
 */

const UPSTREAM_KEY = 'sk-upstream-models-0001';
const START = Date.UTC(2025, 10, 20, 8, 0, 0);

describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('GET /v1/models on %s', (_name, target) => {
  let upstream: FakeOpenAI;
  let svc: TestServices;
  let client: OpenAI;
  let trafficKey: string;
  let policyId: string;
  const clock = { now: START };
  let rest: ReturnType<typeof restClient>;

  beforeAll(async () => {
    upstream = await startFakeOpenAI();
    svc = await startTestServices(target, { env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: UPSTREAM_KEY }, clock: () => clock.now });
    client = new OpenAI({ apiKey: svc.apiKey, baseURL: `${svc.gatewayUrl}/v1`, maxRetries: 0 });
    rest = restClient(svc.gatewayUrl, svc.apiKey);
    policyId = (await rest.get('/v1/policies/?is_default=true')).json.results[0].id;
    const traffic = await rest.post('/v1/projects/', { name: 'models traffic', key_scope: 'traffic' });
    expect(traffic.status).toBe(201);
    trafficKey = traffic.json.raw_key;
  });
  afterAll(async () => {
    await svc?.dispose();
    await upstream?.close();
  });
  beforeEach(() => {
    clock.now += 10 * 60_000; // every bucket full again
    upstream.received.length = 0;
    upstream.errorStatus = null;
    upstream.errorBody = null;
  });

  /** The one request the upstream received: a GET at `path`, with the gateway's credential, never the project key. */
  function expectUpstreamCall(path: string): void {
    expect(upstream.received).toHaveLength(1);
    const got = upstream.received[0]!;
    expect({ method: got.method, url: got.url }).toEqual({ method: 'GET', url: path });
    expect(got.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(JSON.stringify(got.headers)).not.toContain(svc.apiKey);
    expect(got.body.length).toBe(0);
  }

  it('models.list() returns the upstream list in the wire format', async () => {
    const page = await client.models.list();
    expect(page.data).toEqual(FAKE_MODELS);
    const all: string[] = [];
    for await (const m of client.models.list()) all.push(m.id);
    expect(all).toEqual(FAKE_MODELS.map((m) => m.id));
    // One call each (the list is a single page).
    expect(upstream.received).toHaveLength(2);
    upstream.received.splice(0, 1);
    expectUpstreamCall('/v1/models');
  });

  it('models.retrieve(id) returns the upstream model; an id with "/" travels encoded and comes back whole', async () => {
    const { data, response } = await client.models.retrieve('gpt-4o-mini').withResponse();
    expect(data).toEqual(FAKE_MODELS[0]);
    expect(response.headers.get('x-request-id')).toBe('req_fake_model');
    expectUpstreamCall('/v1/models/gpt-4o-mini');
    upstream.received.length = 0;
    const llama = await client.models.retrieve('meta-llama/Llama-3.1-8B-Instruct');
    expect(llama).toEqual(FAKE_MODELS[2]);
    expectUpstreamCall('/v1/models/meta-llama%2FLlama-3.1-8B-Instruct');
  });

  it('a traffic-scope key may call both', async () => {
    const traffic = new OpenAI({ apiKey: trafficKey, baseURL: `${svc.gatewayUrl}/v1`, maxRetries: 0 });
    expect((await traffic.models.list()).data.map((m) => m.id)).toEqual(FAKE_MODELS.map((m) => m.id));
    expect((await traffic.models.retrieve('gpt-4o')).id).toBe('gpt-4o');
  });

  it('without a valid project key: 401 with the envelope, nothing reaches the upstream', async () => {
    const bad = new OpenAI({ apiKey: 'svc_sk_not-a-real-key', baseURL: `${svc.gatewayUrl}/v1`, maxRetries: 0 });
    const err = await bad.models.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as InstanceType<typeof OpenAI.AuthenticationError>).error).toMatchObject({ type: 'authentication_error' });
    const res = await fetch(`${svc.gatewayUrl}/v1/models/gpt-4o`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: { type: 'authentication_error', code: expect.any(String), message: expect.any(String) } });
    expect(upstream.received).toHaveLength(0);
  });

  it('an unknown model: the upstream 404 keeps its status, message and code (NotFoundError)', async () => {
    const err = await client.models.retrieve('gpt-nope').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    const e = err as InstanceType<typeof OpenAI.NotFoundError>;
    expect(e.status).toBe(404);
    expect(e.error).toEqual({ type: 'not_found', code: 'model_not_found', message: "Upstream provider: The model 'gpt-nope' does not exist" });
  });

  it('an upstream 429 / 500 map as for chat completions', async () => {
    upstream.errorStatus = 429;
    const limited = await client.models.list().catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect((limited as InstanceType<typeof OpenAI.RateLimitError>).error).toMatchObject({ type: 'rate_limit', code: 'rate_limit_exceeded' });
    upstream.errorStatus = 500;
    upstream.errorBody = { error: { message: 'The server had an error', type: 'server_error', param: null, code: null } };
    const failed = await client.models.list().catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(OpenAI.InternalServerError);
    expect((failed as InstanceType<typeof OpenAI.InternalServerError>).error).toEqual({ type: 'internal_error', code: 'upstream_500', message: 'Upstream provider: The server had an error' });
  });

  it('counts as one request for the policy rate limits, spends no tokens; 429 once requests_per_minute is used up', async () => {
    const limits = {
      rate_limits_enabled: true, requests_per_minute: 3, burst_multiplier: 1, tokens_per_minute: 1000,
      max_input_tokens: 500, max_input_characters: 64_000, max_output_tokens: 500, cost_limit_per_day_cents: 0,
    };
    expect((await rest.patch(`/v1/policies/${policyId}/`, { rate_limits: limits })).status).toBe(200);
    try {
      const first = await client.models.list().withResponse();
      expect(first.response.headers.get('x-ratelimit-remaining')).toBe('2');
      expect(first.response.headers.get('x-tokenlimit-remaining')).toBe('1000');
      const second = await client.models.retrieve('gpt-4o').withResponse();
      expect(second.response.headers.get('x-ratelimit-remaining')).toBe('1');
      expect(second.response.headers.get('x-tokenlimit-remaining')).toBe('1000');
      // The same bucket as chat completions.
      const chat = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
      expect(chat.response.headers.get('x-ratelimit-remaining')).toBe('0');
      upstream.received.length = 0;
      const refused = await client.models.list().catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
      expect((refused as InstanceType<typeof OpenAI.RateLimitError>).error).toMatchObject({ type: 'rate_limit', code: 'rate_limit_exceeded' });
      expect(upstream.received).toHaveLength(0);
    } finally {
      await rest.patch(`/v1/policies/${policyId}/`, { rate_limits: { rate_limits_enabled: false } });
    }
  });

  it('records one audit event per call: path, status, model of a retrieve, latency; no content, no tokens', async () => {
    await svc.running.audit!.flush();
    const rows = await svc.running.storage!.query<Json>(
      `SELECT kind, path, response_status, model, input_tokens, findings, blocked, latency_ms FROM security_events WHERE path LIKE '/v1/models%' ORDER BY created_at`,
    );
    const summary = rows.map((r) => [r.kind, r.path, r.response_status, r.model]);
    expect(summary).toEqual(
      expect.arrayContaining([
        ['request', '/v1/models', 200, null],
        ['request', '/v1/models/gpt-4o-mini', 200, 'gpt-4o-mini'],
        ['request', '/v1/models/meta-llama%2FLlama-3.1-8B-Instruct', 200, 'meta-llama/Llama-3.1-8B-Instruct'],
        ['auth_failed', '/v1/models', 401, null],
        ['request', '/v1/models/gpt-nope', 404, 'gpt-nope'],
        ['request', '/v1/models', 429, null],
        ['request', '/v1/models', 500, null],
      ]),
    );
    for (const r of rows) {
      expect(r.input_tokens).toBeNull();
      expect(r.findings).toEqual([]);
      expect(r.blocked).toBe(false);
      expect(typeof r.latency_ms).toBe('number');
    }
  });
});
