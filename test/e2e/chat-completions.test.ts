import OpenAI from 'openai';
import { STORAGE_TARGETS } from '../helpers/databases';
import { postJson, startTestServices, type TestServices } from '../helpers/services';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai';

const UPSTREAM_KEY = 'sk-gateway-upstream-key-0001';

describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('chat completions proxy on %s (official openai SDK)', (_n, target) => {
  let upstream: FakeOpenAI;
  let svc: TestServices;
  let client: OpenAI;
  let policyId: string;
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${svc.gatewayUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${svc.apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then((r) => r.json() as Promise<Record<string, any>>);
  const setPolicy = (patch: Record<string, unknown>) => api('PATCH', `/v1/policies/${policyId}/`, patch);

  beforeAll(async () => {
    upstream = await startFakeOpenAI();
    svc = await startTestServices(target, { env: { OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: UPSTREAM_KEY } });
    client = new OpenAI({ apiKey: svc.apiKey, baseURL: `${svc.gatewayUrl}/v1`, maxRetries: 0 });
    policyId = (await api('GET', '/v1/policies/?is_default=true')).results[0].id;
  });
  afterAll(async () => {
    await svc?.dispose();
    await upstream?.close();
  });
  beforeEach(async () => {
    upstream.received.length = 0;
    upstream.pieces = ['Hello', ' from', ' the fake', ' upstream.'];
    upstream.errorStatus = null;
    upstream.chunkDelayMs = 1;
    await setPolicy({
      policy_mode: 'IO',
      input_detectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'block' }],
      output_detectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'block' }],
      deny_list: { entries: ['project aurora'], match_type: 'contains' },
    });
  });

  it('proxies a request: every field passes through, our key never goes upstream, X-Risk headers are set', async () => {
    const { data, response } = await client.chat.completions
      .create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'Say hello' }],
        temperature: 0.2,
        tools: [{ type: 'function', function: { name: 'lookup', description: 'Look a thing up', parameters: { type: 'object', properties: {} } } }],
        response_format: { type: 'text' },
        user: 'u-42',
      })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe('Hello from the fake upstream.');
    expect(response.headers.get('x-risk-blocked')).toBe('false');
    expect(response.headers.get('x-risk-categories')).toBe('');
    expect(response.headers.get('x-risk-confidence')).toBe('0');
    const got = upstream.received[0]!;
    expect(got.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(JSON.stringify(got.headers)).not.toContain(svc.apiKey);
    const sent = JSON.parse(got.body.toString('utf8'));
    expect(sent).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.2, user: 'u-42', response_format: { type: 'text' } });
    expect(sent.tools[0].function.name).toBe('lookup');
  });

  it('streams an allowed answer through the SDK unchanged', async () => {
    upstream.pieces = ['The ', 'answer ', 'is ', '42.'];
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'What is the answer?' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe('The answer is 42.');
    expect(finish).toBe('stop');
    expect(usage).toMatchObject({ total_tokens: 15 });
  });

  it('blocks input with 403 security_block and forwards nothing', async () => {
    const err = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'email bob.smith@acme-corp.com the report' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
    const e = err as InstanceType<typeof OpenAI.PermissionDeniedError>;
    expect(e.status).toBe(403);
    expect(e.error).toMatchObject({ type: 'security_block', code: 'input_blocked', message: expect.stringContaining('pii/email') });
    expect(e.headers?.get('x-risk-blocked')).toBe('true');
    expect(upstream.received).toHaveLength(0);
  });

  it('blocks a non-streamed output that violates the policy, returning none of it', async () => {
    upstream.pieces = ['You can reach our CEO at ceo@acme-corp.com any time.'];
    const res = await postJson(`${svc.gatewayUrl}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'who?' }] }, { authorization: `Bearer ${svc.apiKey}` });
    expect(res.status).toBe(403);
    expect(res.json.error).toMatchObject({ type: 'security_block', code: 'output_blocked' });
    expect(res.text).not.toContain('acme-corp');
    expect(res.text).not.toContain('reach our CEO');
  });

  it('cuts a stream when PII split across two SSE chunks appears, with no part of it reaching the client', async () => {
    const preamble = 'Here is a long and perfectly harmless introduction to our support process. '.repeat(8); // > window
    upstream.pieces = [preamble, 'Write to jo', 'hn.doe@acme-corp.com for help.', ' Thanks!'];
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'help' }], stream: true });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).toBe('content_filter');
    expect(preamble.startsWith(text) || text.startsWith(preamble)).toBe(true);
    expect(text).not.toContain('jo');
    expect(text).not.toContain('acme');
    expect(text).not.toContain('Thanks');
  });

  it('blocks a short streamed answer entirely when it ends in a violation', async () => {
    upstream.pieces = ['Project', ' Aur', 'ora is our secret.'];
    const res = await fetch(`${svc.gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'tell me' }] }),
    });
    const body = await res.text();
    expect(res.status).toBe(200);
    expect(body).not.toContain('Aur');
    expect(body).toContain('"finish_reason":"content_filter"');
    expect(body.trim().endsWith('data: [DONE]')).toBe(true);
  });

  it('passes output through unscanned when the policy scans input only', async () => {
    await setPolicy({ policy_mode: 'I' });
    upstream.pieces = ['mail ceo@acme-corp.com'];
    const out = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(out.choices[0]!.message.content).toBe('mail ceo@acme-corp.com');
  });

  it.each([
    [500, 'internal_error'],
    [429, 'rate_limit'],
    [400, 'invalid_request'],
  ])('returns an upstream %i with the same status in the spec envelope', async (status, type) => {
    upstream.errorStatus = status;
    const res = await postJson(`${svc.gatewayUrl}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'x' }] }, { authorization: `Bearer ${svc.apiKey}` });
    expect(res.status).toBe(status);
    expect(res.json).toEqual({ error: { type, code: 'rate_limit_exceeded', message: 'Upstream provider: Rate limit reached for requests' } });
    // The upstream's message can quote the request: never logged, whatever the status.
    expect(svc.logs.text).not.toContain('Rate limit reached');
  });

  it('answers 502 in the envelope when the upstream is unreachable', async () => {
    const other = await startTestServices(target, { services: ['detection', 'gateway'], env: { OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' } });
    try {
      const res = await postJson(`${other.gatewayUrl}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'x' }] }, { authorization: `Bearer ${other.apiKey}` });
      expect(res.status).toBe(502);
      expect(res.json.error).toMatchObject({ type: 'internal_error', code: 'upstream_unavailable' });
    } finally {
      await other.dispose();
    }
  });

  it('aborts the upstream request when the client disconnects', async () => {
    upstream.pieces = Array.from({ length: 200 }, (_, i) => `word${i} `);
    upstream.chunkDelayMs = 20;
    const abort = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'm', messages: [{ role: 'user', content: 'long please' }], stream: true },
      { signal: abort.signal },
    );
    setTimeout(() => abort.abort(), 300);
    let received = 0;
    try {
      for await (const _ of stream) received += 1; // the SDK ends the iteration (or throws) once aborted
    } catch (err) {
      expect((err as Error).name).toMatch(/Abort/);
    }
    expect(received).toBeLessThan(200);
    const deadline = Date.now() + 5000;
    while (upstream.aborted === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(upstream.aborted).toBe(1);
  });

  it('rejects a malformed request in the envelope without calling the upstream', async () => {
    const res = await postJson(`${svc.gatewayUrl}/v1/chat/completions`, { messages: [] }, { authorization: `Bearer ${svc.apiKey}` });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ type: 'invalid_request', message: expect.stringContaining('model') });
    expect(upstream.received).toHaveLength(0);
  });
});
