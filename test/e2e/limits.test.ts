import OpenAI from 'openai';
import { countTextTokens } from '../../src/shared/tokens';
import { generateApiKey } from '../../src/shared/api-key';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/fake-anthropic';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai';
import { pgliteTarget } from '../helpers/databases';
import { postJson, startTestServices, type TestServices } from '../helpers/services';

/**
 * Rate limits end to end (docs/limits.md), on the real services with a movable clock: the policy's
 * rate_limits on chat completions, detect and the sensor, the platform limits per key, and failed
 * authentications per address.
 */

const START = Date.UTC(2025, 10, 20, 8, 0, 0);
const hello = (n: number) => 'hello '.repeat(n).trimEnd(); // n o200k tokens

interface Harness {
  svc: TestServices;
  openai: FakeOpenAI;
  anthropic: FakeAnthropic;
  clock: { now: number };
  policyId: string;
  dispose(): Promise<void>;
}

async function harness(env: Record<string, string> = {}): Promise<Harness> {
  const clock = { now: START };
  const openai = await startFakeOpenAI();
  const anthropic = await startFakeAnthropic();
  const svc = await startTestServices(pgliteTarget, {
    env: { OPENAI_BASE_URL: openai.url, ANTHROPIC_BASE_URL: anthropic.url, ...env },
    clock: () => clock.now,
  });
  const policies = await fetch(`${svc.gatewayUrl}/v1/policies/?is_default=true`, { headers: { authorization: `Bearer ${svc.apiKey}` } });
  const policyId = ((await policies.json()) as { results: Array<{ id: string }> }).results[0]!.id;
  return {
    svc, openai, anthropic, clock, policyId,
    async dispose() {
      await svc.dispose();
      await openai.close();
      await anthropic.close();
    },
  };
}

const headersOf = (res: { headers: Headers }, prefix: string) => ({
  limit: res.headers.get(`${prefix}-limit`),
  remaining: res.headers.get(`${prefix}-remaining`),
  reset: res.headers.get(`${prefix}-reset`),
});

describe('policy rate_limits', () => {
  let h: Harness;
  let key: string;
  const bearer = () => ({ authorization: `Bearer ${key}` });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${h.svc.gatewayUrl}${path}`, {
      method, headers: { ...bearer(), 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };
  const setLimits = async (rateLimits: Record<string, unknown>) => {
    const res = await api('PATCH', `/v1/policies/${h.policyId}/`, { rate_limits: rateLimits });
    expect(res.status).toBe(200);
  };
  const chat = (content: string, extra: Record<string, unknown> = {}) =>
    postJson(`${h.svc.gatewayUrl}/v1/chat/completions`, { model: 'gpt-4o', messages: [{ role: 'user', content }], ...extra }, bearer());
  const detect = (content: string) => postJson(`${h.svc.gatewayUrl}/v1/detect`, { content }, bearer());
  const messages = (content: string, extra: Record<string, unknown> = {}) =>
    postJson(`${h.svc.sensorUrl}/v1/messages`, { model: 'claude-sonnet-4-5', max_tokens: 256, messages: [{ role: 'user', content }], ...extra }, {
      'x-svc-key': key, 'x-api-key': 'sk-ant-upstream', 'anthropic-version': '2023-06-01',
    });
  const generous = {
    rate_limits_enabled: true, requests_per_minute: 1000, burst_multiplier: 1, tokens_per_minute: 1_000_000,
    max_input_tokens: 8192, max_input_characters: 64_000, max_output_tokens: 4096, cost_limit_per_day_cents: 0,
  };

  beforeAll(async () => {
    h = await harness({ PLATFORM_TRAFFIC_RPM: '1000', PLATFORM_MANAGEMENT_RPM: '100', AUTH_FAILURES_PER_MINUTE: '20' }); // the defaults
    key = h.svc.apiKey;
    await api('PATCH', `/v1/policies/${h.policyId}/`, { input_detectors: [], output_detectors: [] });
  });
  afterAll(async () => h?.dispose());
  beforeEach(async () => {
    h.clock.now += 10 * 60_000; // every bucket full again
    h.openai.pieces = ['Hello', ' from', ' the fake', ' upstream.'];
    h.openai.chunkDelayMs = 1;
    h.openai.received.length = 0;
    h.anthropic.received.length = 0;
    await setLimits(generous);
  });

  it('puts X-RateLimit-* and X-TokenLimit-* on allowed answers, in requests / tokens / seconds', async () => {
    await setLimits({ ...generous, requests_per_minute: 10, tokens_per_minute: 1000 });
    const input = countTextTokens('Say hello');
    const first = await chat('Say hello');
    expect(first.status).toBe(200);
    expect(headersOf(first, 'x-ratelimit')).toEqual({ limit: '10', remaining: '9', reset: '6' });
    expect(headersOf(first, 'x-tokenlimit')).toEqual({ limit: '1000', remaining: String(1000 - input), reset: String(Math.ceil((input * 60) / 1000)) });
    // The answer's 5 completion tokens (usage) were charged after it: the next request sees them.
    const second = await chat('Say hello');
    expect(second.headers.get('x-tokenlimit-remaining')).toBe(String(1000 - input - 5 - input));
    expect(second.headers.get('x-ratelimit-remaining')).toBe('8');
    const viaDetect = await detect('Say hello');
    expect(viaDetect.headers.get('x-ratelimit-remaining')).toBe('7');
    expect(viaDetect.headers.get('x-tokenlimit-remaining')).toBe(String(1000 - 3 * input - 2 * 5));
  });

  it('answers 429 rate_limit with details, Retry-After and the headers once requests_per_minute is used up; nothing is forwarded', async () => {
    await setLimits({ ...generous, requests_per_minute: 2 });
    expect((await chat('one')).status).toBe(200);
    expect((await chat('two')).status).toBe(200);
    const limited = await chat('three');
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({
      error: {
        type: 'rate_limit', code: 'rate_limit_exceeded', message: expect.stringContaining('2 requests per minute'),
        details: { limit: 2, window: 'minute', retry_after: 30, scope: 'requests_per_minute' },
      },
    });
    expect(limited.headers.get('retry-after')).toBe('30');
    expect(headersOf(limited, 'x-ratelimit')).toEqual({ limit: '2', remaining: '0', reset: '60' });
    expect(limited.headers.get('x-tokenlimit-limit')).toBe('1000000');
    expect(h.openai.received).toHaveLength(2);
    h.clock.now += 29_999;
    expect((await chat('four')).status).toBe(429);
    h.clock.now += 1;
    expect((await chat('five')).status).toBe(200);
  });

  it('burst: requests_per_minute × burst_multiplier at once, then the steady rate', async () => {
    await setLimits({ ...generous, requests_per_minute: 2, burst_multiplier: 2.5 });
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await detect(`burst ${i}`)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    h.clock.now += 30_000;
    expect((await detect('after')).status).toBe(200);
  });

  it('the official SDK sees a RateLimitError with the same body', async () => {
    await setLimits({ ...generous, requests_per_minute: 1 });
    const client = new OpenAI({ apiKey: key, baseURL: `${h.svc.gatewayUrl}/v1`, maxRetries: 0 });
    await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    const err = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).error).toMatchObject({ type: 'rate_limit', code: 'rate_limit_exceeded' });
  });

  it('counts the output tokens of a streamed answer (from its deltas) against tokens_per_minute', async () => {
    await setLimits({ ...generous, tokens_per_minute: 1000 });
    h.openai.pieces = ['The ', 'answer ', 'is ', '42.'];
    const output = h.openai.pieces.reduce((n, p) => n + countTextTokens(p), 0);
    const res = await fetch(`${h.svc.gatewayUrl}/v1/chat/completions`, {
      method: 'POST', headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'What is the answer?' }] }),
    });
    expect(res.headers.get('x-tokenlimit-remaining')).toBe(String(1000 - countTextTokens('What is the answer?')));
    expect(await res.text()).toContain('data: [DONE]');
    const next = await detect('x');
    expect(next.headers.get('x-tokenlimit-remaining')).toBe(String(1000 - countTextTokens('What is the answer?') - output - 1));
  });

  it('uses the usage chunk of a stream when the client asked for it', async () => {
    await setLimits({ ...generous, tokens_per_minute: 1000 });
    const client = new OpenAI({ apiKey: key, baseURL: `${h.svc.gatewayUrl}/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'gpt-4o', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
    for await (const _chunk of stream) { /* drain */ }
    const next = await detect('x');
    expect(next.headers.get('x-tokenlimit-remaining')).toBe(String(1000 - 1 - 5 - 1)); // fake usage: 5 completion tokens
  });

  it('refuses a request whose input is over tokens_per_minute budget left, without spending a request', async () => {
    await setLimits({ ...generous, tokens_per_minute: 30, requests_per_minute: 10 });
    expect((await detect(hello(20))).status).toBe(200);
    const over = await detect(hello(11));
    expect(over.status).toBe(429);
    expect(over.json.error.details).toMatchObject({ scope: 'tokens_per_minute', limit: 30, window: 'minute', retry_after: 2 });
    expect(over.headers.get('x-ratelimit-remaining')).toBe('9');
    expect((await detect(hello(10))).status).toBe(200); // exactly what is left
  });

  it('max_input_tokens: at the limit passes, one over is 400 invalid_request (with the headers)', async () => {
    await setLimits({ ...generous, max_input_tokens: 20 });
    expect((await chat(hello(20))).status).toBe(200);
    expect((await chat(hello(19))).status).toBe(200);
    const over = await chat(hello(21));
    expect(over.status).toBe(400);
    expect(over.json.error).toMatchObject({ type: 'invalid_request', code: 'max_input_tokens_exceeded', details: { limit: 20 } });
    expect(over.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(over.headers.get('x-tokenlimit-limit')).toBe('1000000');
    expect(h.openai.received).toHaveLength(2);
  });

  it('max_input_characters: at the limit passes, one over is 400 invalid_request', async () => {
    await setLimits({ ...generous, max_input_characters: 100 });
    expect((await detect('x'.repeat(100))).status).toBe(200);
    expect((await detect('x'.repeat(99))).status).toBe(200);
    const over = await detect('x'.repeat(101));
    expect(over.status).toBe(400);
    expect(over.json.error).toMatchObject({ type: 'invalid_request', code: 'max_input_characters_exceeded', details: { limit: 100, actual: 101 } });
  });

  it('max_output_tokens: a request asking for more is rejected (400 naming the field), at the limit it is forwarded byte for byte', async () => {
    await setLimits({ ...generous, max_output_tokens: 100 });
    const over = await chat('hi', { max_completion_tokens: 101 });
    expect(over.status).toBe(400);
    expect(over.json.error).toMatchObject({ type: 'invalid_request', code: 'max_output_tokens_exceeded', details: { field: 'max_completion_tokens', limit: 100, requested: 101 } });
    expect(h.openai.received).toHaveLength(0);
    const raw = '{"model":"gpt-4o",  "max_tokens": 100, "messages":[{"role":"user","content":"hi"}]}';
    expect((await postJson(`${h.svc.gatewayUrl}/v1/chat/completions`, raw, bearer())).status).toBe(200);
    expect(h.openai.received[0]!.body.toString('utf8')).toBe(raw);
  });

  it('max_output_tokens: a stream that passes it is cut cleanly (finish_reason "length", [DONE]) and the upstream closed', async () => {
    await setLimits({ ...generous, max_output_tokens: 3 });
    h.openai.pieces = ['one', ' two', ' three', ' four', ' five', ' six'];
    h.openai.chunkDelayMs = 15;
    const abortedBefore = h.openai.aborted;
    const client = new OpenAI({ apiKey: key, baseURL: `${h.svc.gatewayUrl}/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'count' }] });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(text).toBe('one two three');
    expect(finish).toBe('length');
    for (let i = 0; i < 40 && h.openai.aborted === abortedBefore; i++) await new Promise((r) => setTimeout(r, 25));
    expect(h.openai.aborted).toBe(abortedBefore + 1);
  });

  it('blocks token flooding with 400 token_flooding; a long natural prompt passes', async () => {
    await setLimits({ ...generous, max_input_tokens: 100_000, max_input_characters: 200_000 });
    const flood = await chat(`Please summarise: ${'lol '.repeat(4000)}`);
    expect(flood.status).toBe(400);
    expect(flood.json.error).toMatchObject({ type: 'invalid_request', code: 'token_flooding' });
    const prose = Array.from({ length: 150 }, (_, i) => `Paragraph ${i}: the quarterly report covers revenue, churn in region ${i % 7}, hiring plans and the roadmap for item ${i * 13}.`).join('\n');
    expect((await chat(prose)).status).toBe(200);
  });

  it('cost_limit_per_day_cents: refused past the daily cap, allowed again after UTC midnight', async () => {
    // o1-pro: $150 / $600 per 1M tokens. 40 input tokens = 0.6 ¢, 5 output tokens (fake usage) = 0.3 ¢.
    await setLimits({ ...generous, cost_limit_per_day_cents: 1 });
    const midnight = Math.ceil(h.clock.now / 86_400_000) * 86_400_000 + 86_400_000;
    h.clock.now = midnight - 60_000;
    const call = () => chat(hello(40), { model: 'o1-pro' });
    expect((await call()).status).toBe(200); // 0.6 ¢ before the call, 0.9 ¢ after its output
    const over = await call(); // 0.9 + 0.6 > 1
    expect(over.status).toBe(429);
    expect(over.json.error).toMatchObject({ code: 'rate_limit_exceeded', details: { scope: 'cost_limit_per_day_cents', limit: 1, window: 'day', retry_after: 60 } });
    expect(over.headers.get('retry-after')).toBe('60');
    h.clock.now = midnight - 1;
    expect((await call()).status).toBe(429);
    h.clock.now = midnight;
    expect((await call()).status).toBe(200);
  });

  it('a change to rate_limits applies on the next request; switched off, the policy headers disappear', async () => {
    await setLimits({ ...generous, requests_per_minute: 100 });
    expect((await detect('a')).headers.get('x-ratelimit-limit')).toBe('100');
    await setLimits({ ...generous, requests_per_minute: 1 });
    const tighter = await detect('b');
    expect(headersOf(tighter, 'x-ratelimit')).toEqual({ limit: '1', remaining: '0', reset: '60' });
    expect((await detect('c')).status).toBe(429);
    await setLimits({ ...generous, rate_limits_enabled: false });
    const off = await detect('d');
    expect(off.status).toBe(200);
    expect(off.headers.get('x-tokenlimit-limit')).toBeNull();
    expect(off.headers.get('x-ratelimit-limit')).toBe('1000'); // the platform limit is always on
  });

  describe('on the sensor (/v1/messages)', () => {
    it('applies the policy limits with the messages envelope', async () => {
      await setLimits({ ...generous, requests_per_minute: 1, max_output_tokens: 256 });
      const ok = await messages('hi');
      expect(ok.status).toBe(200);
      expect(headersOf(ok, 'x-ratelimit')).toEqual({ limit: '1', remaining: '0', reset: '60' });
      expect(ok.headers.get('x-tokenlimit-limit')).toBe('1000000');
      const limited = await messages('hi');
      expect(limited.status).toBe(429);
      expect(limited.json).toEqual({
        type: 'error',
        error: { type: 'rate_limit', code: 'rate_limit_exceeded', message: expect.any(String), details: { limit: 1, window: 'minute', retry_after: 60, scope: 'requests_per_minute' } },
      });
      expect(limited.headers.get('retry-after')).toBe('60');
      expect(h.anthropic.received).toHaveLength(1);
    });

    it('rejects max_tokens above max_output_tokens, and counts usage.output_tokens of JSON answers', async () => {
      await setLimits({ ...generous, tokens_per_minute: 1000, max_output_tokens: 100 });
      const over = await messages('hi', { max_tokens: 101 });
      expect(over.status).toBe(400);
      expect(over.json).toMatchObject({ type: 'error', error: { type: 'invalid_request', code: 'max_output_tokens_exceeded' } });
      expect((await messages('hi', { max_tokens: 100 })).status).toBe(200);
      const next = await messages('hi', { max_tokens: 100 });
      expect(next.headers.get('x-tokenlimit-remaining')).toBe(String(1000 - 1 - 7 - 1)); // fake usage: 7 output tokens
    });

    it('cuts a messages stream at max_output_tokens with stop_reason max_tokens', async () => {
      await setLimits({ ...generous, max_output_tokens: 3 });
      const res = await fetch(`${h.svc.sensorUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-svc-key': key, 'x-api-key': 'sk-ant-upstream', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 3, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(200);
      const body = await res.text();
      expect(body).not.toContain('upstream.');
      expect(body).toContain('"stop_reason":"max_tokens"');
      expect(body.trimEnd().endsWith('event: message_stop\ndata: {"type":"message_stop"}')).toBe(true);
    });
  });
});

describe('platform limits and failed authentications', () => {
  let h: Harness;
  let second: string;
  const detectAs = (key: string) => postJson(`${h.svc.gatewayUrl}/v1/detect`, { content: 'hello' }, { authorization: `Bearer ${key}` });
  const chatAs = (key: string) => postJson(`${h.svc.gatewayUrl}/v1/chat/completions`, { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, { authorization: `Bearer ${key}` });
  const messagesAs = (key: string) =>
    postJson(`${h.svc.sensorUrl}/v1/messages`, { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }, { 'x-svc-key': key, 'x-api-key': 'k' });
  const listAs = (key: string) => fetch(`${h.svc.gatewayUrl}/v1/policies/`, { headers: { authorization: `Bearer ${key}` } });
  const graphqlAs = (key: string) =>
    postJson(`${h.svc.gatewayUrl}/graphql`, { query: '{ __typename }' }, { authorization: `Bearer ${key}` });

  beforeAll(async () => {
    h = await harness({ PLATFORM_TRAFFIC_RPM: '3', PLATFORM_MANAGEMENT_RPM: '2', AUTH_FAILURES_PER_MINUTE: '4' });
    const created = await postJson(`${h.svc.gatewayUrl}/v1/projects/`, { name: 'second', environment: 'development' }, { authorization: `Bearer ${h.svc.apiKey}` });
    second = created.json.raw_key;
    h.clock.now += 60_000; // the management budget (2 per minute) refills
    const patched = await fetch(`${h.svc.gatewayUrl}/v1/policies/${h.policyId}/`, {
      method: 'PATCH', headers: { authorization: `Bearer ${h.svc.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input_detectors: [], output_detectors: [] }),
    });
    expect(patched.status).toBe(200);
  });
  afterAll(async () => h?.dispose());
  beforeEach(() => {
    h.clock.now += 10 * 60_000;
  });

  it('traffic: per key, shared by chat completions, detect and the sensor', async () => {
    const key = h.svc.apiKey;
    const first = await detectAs(key);
    expect(headersOf(first, 'x-ratelimit')).toEqual({ limit: '3', remaining: '2', reset: '20' });
    expect((await chatAs(key)).status).toBe(200);
    expect((await messagesAs(key)).status).toBe(200);
    const limited = await detectAs(key);
    expect(limited.status).toBe(429);
    expect(limited.json.error).toEqual({
      type: 'rate_limit', code: 'rate_limit_exceeded', message: expect.stringContaining('3 requests per minute per key'),
      details: { limit: 3, window: 'minute', retry_after: 20, scope: 'platform' },
    });
    expect(limited.headers.get('retry-after')).toBe('20');
    expect(headersOf(limited, 'x-ratelimit')).toEqual({ limit: '3', remaining: '0', reset: '60' });
    expect((await chatAs(key)).status).toBe(429);
    const sensor = await messagesAs(key);
    expect(sensor.status).toBe(429);
    expect(sensor.json).toMatchObject({ type: 'error', error: { type: 'rate_limit', details: { scope: 'platform' } } });
    expect((await detectAs(second)).status).toBe(200); // another key has its own budget
    expect((await listAs(key)).status).toBe(200); // management is counted apart
  });

  it('management: per key on REST and GraphQL alike', async () => {
    const key = h.svc.apiKey;
    const first = await listAs(key);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('2');
    expect((await graphqlAs(key)).status).toBe(200);
    const rest = await listAs(key);
    expect(rest.status).toBe(429);
    expect(rest.headers.get('retry-after')).toBe('30');
    const gql = await graphqlAs(key);
    expect(gql.status).toBe(429);
    expect(gql.json.error).toMatchObject({ type: 'rate_limit', code: 'rate_limit_exceeded', details: { scope: 'platform', limit: 2 } });
    expect((await listAs(second)).status).toBe(200);
  });

  it('both apply with a policy\'s own limits: the stricter one answers and fills the headers', async () => {
    const key = h.svc.apiKey;
    const policyId = (await (await listAs(key)).json() as { results: Array<{ id: string; is_default: boolean }> }).results.find((p) => p.is_default)!.id;
    await fetch(`${h.svc.gatewayUrl}/v1/policies/${policyId}/`, {
      method: 'PATCH', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ rate_limits: { rate_limits_enabled: true, requests_per_minute: 100, burst_multiplier: 1 } }),
    });
    const platformStricter = await detectAs(key);
    expect(headersOf(platformStricter, 'x-ratelimit')).toEqual({ limit: '3', remaining: '2', reset: '20' });
    expect(platformStricter.headers.get('x-tokenlimit-limit')).toBe('100000');
    h.clock.now += 60_000;
    await fetch(`${h.svc.gatewayUrl}/v1/policies/${policyId}/`, {
      method: 'PATCH', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ rate_limits: { requests_per_minute: 1 } }),
    });
    const policyStricter = await detectAs(key);
    expect(headersOf(policyStricter, 'x-ratelimit')).toEqual({ limit: '1', remaining: '0', reset: '60' });
    const limited = await detectAs(key);
    expect(limited.json.error.details.scope).toBe('requests_per_minute');
    await fetch(`${h.svc.gatewayUrl}/v1/policies/${policyId}/`, {
      method: 'PATCH', headers: { authorization: `Bearer ${second}`, 'content-type': 'application/json' },
      body: JSON.stringify({ rate_limits: { rate_limits_enabled: false } }),
    });
  });

  it('failed authentications: an address is answered 429 before its key is checked once it reaches the limit', async () => {
    const wrong = () => detectAs(generateApiKey());
    for (let i = 0; i < 3; i++) expect((await wrong()).status).toBe(401);
    expect((await detectAs(h.svc.apiKey)).status).toBe(200); // 3 failures: under the limit
    expect((await wrong()).status).toBe(401); // the 4th failure reaches it
    expect((await wrong()).status).toBe(429); // guesses are no longer even checked
    const blocked = await detectAs(second); // a right key too, unless it authenticated in the last minute
    expect(blocked.status).toBe(429);
    expect(blocked.json.error).toMatchObject({ type: 'rate_limit', code: 'rate_limit_exceeded', details: { scope: 'auth_failures', limit: 4, window: 'minute', retry_after: 15 } });
    expect(blocked.headers.get('retry-after')).toBe('15');
    const sensor = await postJson(`${h.svc.sensorUrl}/v1/messages`, { model: 'm', max_tokens: 1, messages: [] }, { 'x-svc-key': 'not-a-key' });
    expect(sensor.status).toBe(429); // the sensor shares the address budget
    expect((await listAs('svc_sk_short')).status).toBe(429);
    expect((await detectAs(h.svc.apiKey)).status).toBe(200); // authenticated a moment ago: no guess, not blocked
    h.clock.now += 15_000;
    expect((await detectAs(second)).status).toBe(200);
    h.clock.now += 60_000;
  });
});
