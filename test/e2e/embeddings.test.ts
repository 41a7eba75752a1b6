import OpenAI from 'openai';
import { fakeEmbedding, startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai';
import { STORAGE_TARGETS } from '../helpers/databases';
import { restClient, type Json } from '../helpers/management-clients';
import { postJson, startTestServices, type TestServices } from '../helpers/services';
import { SHIPPED_PRICES } from '../../src/gateway/limits/prices';
import { countTokens } from '../../src/shared/tokens';

/**
 * POST /v1/embeddings on the gateway (docs/endpoints.md), called by the official openai SDK
 * (embeddings.create, which asks for base64 vectors and decodes them): input strings scanned with the
 * project's input policy (each its own path), the raw body forwarded, vectors relayed unchanged;
 * token-id input refused when the policy has input detectors; limits count the input tokens; audited.
 */

const UPSTREAM_KEY = 'sk-upstream-embeddings-0001';
const START = Date.UTC(2025, 10, 21, 8, 0, 0);
const EMAIL = 'bob.smith@acme-corp.com';
const BLOCKING = {
  policy_mode: 'IO',
  input_detectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'block' }],
  output_detectors: [],
  custom_detectors: [],
  deny_list: { entries: [], match_type: 'contains' },
};
const NO_INPUT_DETECTORS = { ...BLOCKING, input_detectors: [], output_detectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'block' }] };

describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('POST /v1/embeddings on %s (official openai SDK)', (_name, target) => {
  let upstream: FakeOpenAI;
  let svc: TestServices;
  let client: OpenAI;
  let policyId: string;
  let rest: ReturnType<typeof restClient>;
  const clock = { now: START };
  const raw = (body: unknown) => postJson(`${svc.gatewayUrl}/v1/embeddings`, body, { authorization: `Bearer ${svc.apiKey}` });
  const setPolicy = async (patch: Record<string, unknown>) => expect((await rest.patch(`/v1/policies/${policyId}/`, patch)).status).toBe(200);

  beforeAll(async () => {
    upstream = await startFakeOpenAI();
    svc = await startTestServices(target, { env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: UPSTREAM_KEY }, clock: () => clock.now });
    client = new OpenAI({ apiKey: svc.apiKey, baseURL: `${svc.gatewayUrl}/v1`, maxRetries: 0 });
    rest = restClient(svc.gatewayUrl, svc.apiKey);
    policyId = (await rest.get('/v1/policies/?is_default=true')).json.results[0].id;
  });
  afterAll(async () => {
    await svc?.dispose();
    await upstream?.close();
  });
  beforeEach(async () => {
    clock.now += 10 * 60_000; // every bucket full again
    upstream.errorStatus = null;
    upstream.errorBody = null;
    await setPolicy(BLOCKING);
    upstream.received.length = 0;
  });

  it('a string input: the SDK gets the vector back decoded (base64 on the wire), the body went upstream byte for byte', async () => {
    const { data, response } = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'The quarterly report is ready.', user: 'u-7' }).withResponse();
    expect(data.object).toBe('list');
    expect(data.data).toHaveLength(1);
    expect(data.data[0]!.embedding).toEqual(fakeEmbedding(0, 8));
    expect(data.usage).toEqual({ prompt_tokens: 8, total_tokens: 8 });
    expect(response.headers.get('x-risk-blocked')).toBe('false');
    expect(response.headers.get('x-risk-categories')).toBe('');
    expect(response.headers.get('x-request-id')).toBeTruthy();
    expect(upstream.received).toHaveLength(1);
    const got = upstream.received[0]!;
    expect(got.url).toBe('/v1/embeddings');
    expect(got.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(JSON.stringify(got.headers)).not.toContain(svc.apiKey);
    expect(JSON.parse(got.body.toString('utf8'))).toEqual({ model: 'text-embedding-3-small', input: 'The quarterly report is ready.', user: 'u-7', encoding_format: 'base64' });
  });

  it('an array input with float vectors and dimensions: every vector returned unchanged, the raw body forwarded as sent', async () => {
    const body = '{"model":"text-embedding-3-large","input":["alpha","beta","gamma"],  "encoding_format":"float","dimensions":4}';
    const res = await raw(body);
    expect(res.status).toBe(200);
    expect(res.text).toBe(upstream.lastSent);
    expect(res.json.data.map((d: Json) => d.embedding)).toEqual([0, 1, 2].map((i) => fakeEmbedding(i, 4)));
    expect(upstream.received[0]!.body.toString('utf8')).toBe(body);
    const sdk = await client.embeddings.create({ model: 'text-embedding-3-large', input: ['alpha', 'beta'], encoding_format: 'float' });
    expect(sdk.data.map((d) => d.index)).toEqual([0, 1]);
    expect(sdk.data[1]!.embedding).toEqual(fakeEmbedding(1, 8));
  });

  it('an array whose 3rd string holds an email is blocked like chat input (403 input_blocked), nothing reaches the upstream, the match is at input[2]', async () => {
    const input = ['first harmless line', 'second harmless line', `contact ${EMAIL} today`];
    const err = await client.embeddings.create({ model: 'text-embedding-3-small', input }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
    const e = err as InstanceType<typeof OpenAI.PermissionDeniedError>;
    expect(e.status).toBe(403);
    expect(e.error).toEqual({ type: 'security_block', code: 'input_blocked', message: expect.stringContaining('pii/email') });
    expect(e.headers?.get('x-risk-blocked')).toBe('true');
    expect(e.headers?.get('x-risk-categories')).toContain('pii/email');
    expect(upstream.received).toHaveLength(0);
    await svc.running.audit!.flush();
    const [row] = await svc.running.storage!.query<Json>(
      `SELECT findings, blocked, response_status FROM security_events WHERE path = '/v1/embeddings' AND blocked = true ORDER BY created_at DESC LIMIT 1`,
    );
    expect(row).toMatchObject({ blocked: true, response_status: 403 });
    const email = (row!.findings as Json[]).find((f) => f.type === 'pii/email')!;
    const start = input[2]!.indexOf(EMAIL);
    expect(email.matches).toEqual([expect.objectContaining({ path: 'input[2]', start, end: start + EMAIL.length })]);
  });

  it('token-id input: 400 unscannable_input when the policy has input detectors; forwarded when it has none', async () => {
    for (const input of [[1, 2, 3], [[1, 2], [3]]]) {
      const res = await raw({ model: 'text-embedding-3-small', input });
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ error: { type: 'invalid_request', code: 'unscannable_input', message: expect.stringContaining('token ids'), details: { field: 'input' } } });
      expect(res.headers.get('x-risk-unscanned-content')).toBe('input');
    }
    const sdkErr = await client.embeddings.create({ model: 'text-embedding-3-small', input: [10, 20] }).catch((e: unknown) => e);
    expect(sdkErr).toBeInstanceOf(OpenAI.BadRequestError);
    expect(upstream.received).toHaveLength(0);

    await setPolicy(NO_INPUT_DETECTORS);
    const passed = await client.embeddings.create({ model: 'text-embedding-3-small', input: [[1, 2], [3, 4, 5]] });
    expect(passed.data.map((d) => d.embedding)).toEqual([fakeEmbedding(0, 8), fakeEmbedding(1, 8)]);
    expect(passed.usage.prompt_tokens).toBe(5);
    expect(JSON.parse(upstream.received[0]!.body.toString('utf8')).input).toEqual([[1, 2], [3, 4, 5]]);
    // A deny list reads input too: token ids are refused again.
    await setPolicy({ ...NO_INPUT_DETECTORS, deny_list: { entries: ['project aurora'], match_type: 'contains' } });
    expect((await raw({ model: 'text-embedding-3-small', input: [1] })).status).toBe(400);
    // Policy mode O scans no input at all: passed.
    await setPolicy({ ...BLOCKING, policy_mode: 'O' });
    expect((await raw({ model: 'text-embedding-3-small', input: [1] })).status).toBe(200);
  });

  it('an invalid body is 400 invalid_request naming the field; nothing goes upstream', async () => {
    const cases: unknown[] = [
      { input: 'hi' },
      { model: '', input: 'hi' },
      { model: 'text-embedding-3-small' },
      { model: 'text-embedding-3-small', input: [] },
      { model: 'text-embedding-3-small', input: ['a', 2] },
      { model: 'text-embedding-3-small', input: [1.5] },
      { model: 'text-embedding-3-small', input: { text: 'hi' } },
      { model: 'text-embedding-3-small', input: 'hi', dimensions: 'many' },
      [],
    ];
    for (const body of cases) {
      const res = await raw(body);
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 400]);
      expect(res.json.error).toMatchObject({ type: 'invalid_request', code: 'invalid_request', message: expect.any(String) });
    }
    const missing = await raw({ input: 'hi' });
    expect(missing.json.error.message).toContain('model');
    const err = await client.embeddings.create({ model: 'text-embedding-3-small' } as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect(upstream.received).toHaveLength(0);
  });

  it('an upstream error keeps its status, message and code in the envelope', async () => {
    upstream.errorStatus = 400;
    upstream.errorBody = { error: { message: "This model's maximum context length is 8192 tokens", type: 'invalid_request_error', param: null, code: 'context_length_exceeded' } };
    const bad = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect((bad as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'context_length_exceeded', message: expect.stringContaining('maximum context length') });
    upstream.errorStatus = 429;
    upstream.errorBody = null;
    const limited = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect((limited as InstanceType<typeof OpenAI.RateLimitError>).error).toMatchObject({ type: 'rate_limit', code: 'rate_limit_exceeded' });
  });

  it('rate limits and token budgets count the input tokens (no output tokens); the daily cost prices them by input', async () => {
    const limits = {
      rate_limits_enabled: true, requests_per_minute: 3, burst_multiplier: 1, tokens_per_minute: 1000,
      max_input_tokens: 500, max_input_characters: 64_000, max_output_tokens: 500, cost_limit_per_day_cents: 0,
    };
    await setPolicy({ rate_limits: limits });
    try {
      const input = ['the quarterly report covers revenue and churn', 'hiring plans and the roadmap'];
      const tokens = countTokens(input, 'cl100k_base'); // text-embedding-3-* use cl100k_base
      const first = await client.embeddings.create({ model: 'text-embedding-3-small', input }).withResponse();
      expect(first.response.headers.get('x-ratelimit-remaining')).toBe('2');
      expect(first.response.headers.get('x-tokenlimit-remaining')).toBe(String(1000 - tokens));
      // Token ids count one token each (policy without input detectors).
      await setPolicy(NO_INPUT_DETECTORS);
      const ids = await client.embeddings.create({ model: 'text-embedding-3-small', input: [1, 2, 3, 4, 5, 6, 7] }).withResponse();
      expect(ids.response.headers.get('x-ratelimit-remaining')).toBe('1');
      expect(ids.response.headers.get('x-tokenlimit-remaining')).toBe(String(1000 - tokens - 7));
      // max_input_tokens applies as for chat.
      const over = await raw({ model: 'text-embedding-3-small', input: 'word '.repeat(600).split(' ').slice(0, 501).map((w, i) => `${w}${i}`).join(' ') });
      expect(over.status).toBe(400);
      expect(over.json.error).toMatchObject({ code: 'max_input_tokens_exceeded' });
      upstream.received.length = 0;
      const refused = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
      expect(upstream.received).toHaveLength(0);

      // Cost: an unknown model is priced at the default ($10 / 1M input tokens): 600 tokens = 0.6 ¢, the second call would pass 1 ¢.
      clock.now += 10 * 60_000;
      await setPolicy({ rate_limits: { ...limits, requests_per_minute: 100, tokens_per_minute: 100_000, max_input_tokens: 8192, cost_limit_per_day_cents: 1 } });
      const text = Array.from({ length: 300 }, (_, i) => `item${i}`).join(' ');
      const n = countTokens([text], 'o200k_base');
      expect(n).toBeGreaterThan(500);
      expect(n).toBeLessThan(1000);
      expect((await raw({ model: 'acme-embed', input: text })).status).toBe(200);
      const costly = await raw({ model: 'acme-embed', input: text });
      expect(costly.status).toBe(429);
      expect(costly.json.error).toMatchObject({ code: 'rate_limit_exceeded', details: { scope: 'cost_limit_per_day_cents' } });
    } finally {
      await setPolicy({ rate_limits: { rate_limits_enabled: false } });
    }
    // The shipped prices of OpenAI's embedding models (input only).
    expect(SHIPPED_PRICES.priceOf('text-embedding-3-small')).toEqual({ inputPerMillion: 0.02, outputPerMillion: 0 });
    expect(SHIPPED_PRICES.priceOf('text-embedding-3-large')).toEqual({ inputPerMillion: 0.13, outputPerMillion: 0 });
    expect(SHIPPED_PRICES.priceOf('text-embedding-ada-002')).toEqual({ inputPerMillion: 0.1, outputPerMillion: 0 });
  });

  it('records an audit event per call: model, input tokens, findings, blocked', async () => {
    const input = ['audit me please', 'and me too'];
    await client.embeddings.create({ model: 'text-embedding-ada-002', input });
    await setPolicy(NO_INPUT_DETECTORS);
    await client.embeddings.create({ model: 'text-embedding-ada-002', input: [[7, 8, 9, 10]] });
    await svc.running.audit!.flush();
    const rows = await svc.running.storage!.query<Json>(
      `SELECT kind, model, input_tokens, findings, blocked, response_status FROM security_events WHERE path = '/v1/embeddings' AND model = 'text-embedding-ada-002' ORDER BY created_at`,
    );
    expect(rows.map((r) => [r.kind, r.model, r.input_tokens, r.findings, r.blocked, r.response_status])).toEqual([
      ['request', 'text-embedding-ada-002', countTokens(input, 'o200k_base'), [], false, 200],
      ['request', 'text-embedding-ada-002', 4, [], false, 200],
    ]);
  });
});
