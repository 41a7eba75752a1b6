import Anthropic from '@anthropic-ai/sdk';
import { rawHeaderValues, startFakeAnthropic, UNAUTHORIZED_BODY, type FakeAnthropic } from '../fakes/fake-anthropic';
import { STORAGE_TARGETS } from '../helpers/databases';
import { startTestServices, type TestServices } from '../helpers/services';

/**
 * The official @anthropic-ai/sdk pointed at the sensor exactly as a coding assistant is: base URL of
 * the sensor plus one custom header (X-Svc-Key); its own credentials (an OAuth-style bearer through
 * `authToken`, an `x-api-key`, the version and beta headers) must reach the upstream byte for byte,
 * and must never be logged or stored.
 */

const AUTH_TOKEN = 'sk-ant-oat01-sdk-opaque-subscription-token-7f3a';
const UPSTREAM_API_KEY = 'sk-ant-api03-sdk-upstream-key-91c2';
const VERSION = '2023-06-01';
const BETA = 'prompt-caching-2024-07-31,  oauth-2025-04-20';
const SESSION = '2d3c7b1e-5a8f-4e0b-9c61-0f4b7e2a9d10';
/** Any model name: the SDK only warns about a few deprecated ones (the fake answers whatever is asked). */
const MODEL = 'claude-opus-4-7';
const STREAM_TEXT = 'The sensor relays every byte of this streamed answer, word by word, unchanged.';

describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('official Anthropic SDK against the sensor on %s', (_name, target) => {
  let upstream: FakeAnthropic;
  let svc: TestServices;
  let client: Anthropic;
  /** The headers the SDK itself put on each request (captured at its fetch). */
  const sent: Headers[] = [];

  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${svc.gatewayUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${svc.apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then((r) => r.json() as Promise<Record<string, any>>);

  /** The SDK configured as a coding assistant would be, plus X-Svc-Key (and a session id). */
  const makeClient = (headers: Record<string, string> = {}) =>
    new Anthropic({
      authToken: AUTH_TOKEN,
      baseURL: svc.sensorUrl,
      maxRetries: 0,
      defaultHeaders: {
        'x-svc-key': svc.apiKey,
        'x-api-key': UPSTREAM_API_KEY,
        'anthropic-version': VERSION,
        'anthropic-beta': BETA,
        'x-agent-session-id': SESSION,
        ...headers,
      },
      fetch: (async (url: string | URL | Request, init?: RequestInit) => {
        sent.push(new Headers(init?.headers));
        return fetch(url, init);
      }) as typeof fetch,
    });

  beforeAll(async () => {
    upstream = await startFakeAnthropic();
    svc = await startTestServices(target, { env: { ANTHROPIC_BASE_URL: upstream.url } });
    const policyId = (await api('GET', '/v1/policies/?is_default=true')).results[0].id;
    // Signature rules only (the deny list and e-mail logging): the outcome never depends on classifier backends.
    const patched = await api('PATCH', `/v1/policies/${policyId}/`, {
      input_detectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'log' }],
      output_detectors: [],
      deny_list: { entries: ['project aurora'], match_type: 'contains' },
    });
    expect(patched.deny_list.entries).toEqual(['project aurora']);
    client = makeClient();
  });
  afterAll(async () => {
    await svc?.dispose();
    await upstream?.close();
  });
  beforeEach(() => {
    upstream.received.length = 0;
    upstream.headerErrors.length = 0;
    upstream.mode = 'ok';
    upstream.text = 'Hello from the fake upstream.';
    upstream.expectHeaders = { authorization: `Bearer ${AUTH_TOKEN}`, 'x-api-key': UPSTREAM_API_KEY, 'anthropic-version': VERSION, 'anthropic-beta': BETA };
    upstream.forbidHeaders = ['x-svc-key'];
    sent.length = 0;
  });

  /** The provider headers arrived byte for byte as the SDK sent them, and X-Svc-Key did not. */
  function expectForwardedHeaders(): void {
    expect(upstream.headerErrors).toEqual([]);
    expect(upstream.received).toHaveLength(1);
    const raw = upstream.received[0]!.rawHeaders;
    const fromSdk = sent[sent.length - 1]!;
    expect(fromSdk.get('authorization')).toBe(`Bearer ${AUTH_TOKEN}`);
    for (const name of ['authorization', 'x-api-key', 'anthropic-version', 'anthropic-beta', 'x-agent-session-id', 'user-agent']) {
      expect(rawHeaderValues(raw, name)).toEqual([fromSdk.get(name)]);
    }
    expect(rawHeaderValues(raw, 'x-svc-key')).toEqual([]);
  }

  it('non-streaming: messages.create returns the upstream message; headers forwarded byte for byte', async () => {
    const { data, response } = await client.messages
      .create({ model: MODEL, max_tokens: 128, system: 'You are terse.', messages: [{ role: 'user', content: 'Say hello' }] })
      .withResponse();
    expect(data).toMatchObject({ id: 'msg_01FakeUpstream', type: 'message', role: 'assistant', stop_reason: 'end_turn' });
    expect(data.content).toEqual([{ type: 'text', text: 'Hello from the fake upstream.' }]);
    expect(data.usage).toMatchObject({ input_tokens: 12, output_tokens: 7 });
    expect(response.headers.get('x-risk-blocked')).toBe('false');
    expect(response.headers.get('request-id')).toBe('req_fake_json');
    expectForwardedHeaders();
    const body = JSON.parse(upstream.received[0]!.body.toString('utf8'));
    expect(body).toEqual({ model: MODEL, max_tokens: 128, system: 'You are terse.', messages: [{ role: 'user', content: 'Say hello' }] });
  });

  it('streaming with messages.stream(): the text assembled from the stream is the upstream text; the final message has a stop_reason', async () => {
    upstream.text = STREAM_TEXT;
    const stream = client.messages.stream({ model: MODEL, max_tokens: 128, messages: [{ role: 'user', content: 'Stream please' }] });
    let text = '';
    let deltas = 0;
    stream.on('text', (delta) => {
      text += delta;
      deltas += 1;
    });
    const final = await stream.finalMessage();
    expect(text).toBe(STREAM_TEXT);
    expect(deltas).toBe(STREAM_TEXT.split(/(?<= )/).length);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: STREAM_TEXT })]);
    expect(final.usage.output_tokens).toBe(7);
    expectForwardedHeaders();
    expect(JSON.parse(upstream.received[0]!.body.toString('utf8')).stream).toBe(true);
  });

  it('streaming with create({stream: true}): raw events arrive in order with the X-Risk headers', async () => {
    upstream.text = STREAM_TEXT;
    const { data: stream, response } = await client.messages
      .create({ model: MODEL, max_tokens: 128, messages: [{ role: 'user', content: 'Stream please' }], stream: true })
      .withResponse();
    expect(response.headers.get('x-risk-blocked')).toBe('false');
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const types: string[] = [];
    let text = '';
    let stopReason: string | null = null;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      if (event.type === 'message_delta') stopReason = event.delta.stop_reason;
    }
    expect(text).toBe(STREAM_TEXT);
    expect(stopReason).toBe('end_turn');
    expect(types[0]).toBe('message_start');
    expect(types[types.length - 1]).toBe('message_stop');
    expectForwardedHeaders();
  });

  it('a policy denial surfaces as PermissionDeniedError with the messages-style 403 body; nothing is forwarded', async () => {
    const err = await client.messages
      .create({ model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'Summarise the Project Aurora roadmap' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.PermissionDeniedError);
    const e = err as InstanceType<typeof Anthropic.PermissionDeniedError>;
    expect(e.status).toBe(403);
    expect(e.error).toEqual({
      type: 'error',
      error: { type: 'permission_error', code: 'content_blocked', message: expect.stringContaining('deny_list') },
    });
    expect(e.headers?.get('x-risk-blocked')).toBe('true');
    expect(upstream.received).toHaveLength(0);

    // The streaming helper fails the same way.
    const streamErr = await client.messages
      .stream({ model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'project aurora, streamed' }] })
      .finalMessage()
      .catch((x: unknown) => x);
    expect(streamErr).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(upstream.received).toHaveLength(0);
  });

  it('an upstream 401 comes back unchanged: AuthenticationError with the upstream body', async () => {
    upstream.mode = 'unauthorized';
    const err = await client.messages
      .create({ model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    const e = err as InstanceType<typeof Anthropic.AuthenticationError>;
    expect(e.status).toBe(401);
    expect(e.error).toEqual(UNAUTHORIZED_BODY);
    expect(e.requestID).toBe('req_fake_401');
    expectForwardedHeaders();
  });

  it("the fake upstream's header assertion is live: a changed beta header is refused there", async () => {
    const other = makeClient({ 'anthropic-beta': 'prompt-caching-2024-07-31,oauth-2025-04-20' });
    const err = await other.messages.create({ model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(upstream.headerErrors).toEqual([expect.stringContaining('anthropic-beta')]);
  });

  it('records the audit events: authenticated + forwarded 401, the 403 denial', async () => {
    await svc.running.audit!.flush();
    const rows = await svc.running.storage!.query<Record<string, any>>(
      `SELECT kind, response_status, blocked, session_id FROM security_events WHERE path = '/v1/messages' ORDER BY created_at`,
    );
    expect(rows.map((r) => [r.kind, r.response_status, r.blocked])).toEqual([
      ['request', 200, false],
      ['request', 200, false],
      ['request', 200, false],
      ['request', 403, true],
      ['request', 403, true],
      ['request', 401, false],
      ['request', 400, false],
    ]);
    for (const r of rows) expect(r.session_id).toBe(SESSION);
  });

  it('neither logs nor any database row contain the Authorization value, the x-api-key value or the svc key', async () => {
    await svc.running.audit!.flush();
    const secrets = [AUTH_TOKEN, UPSTREAM_API_KEY, svc.apiKey];
    for (const s of secrets) expect(svc.logs.text).not.toContain(s);
    const storage = svc.running.storage!;
    const events = await storage.query('SELECT * FROM security_events');
    const projects = await storage.query('SELECT * FROM projects');
    expect(events.length).toBeGreaterThan(0);
    expect(projects.length).toBeGreaterThan(0);
    // Every table, not only those two.
    const tables = await storage.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
    );
    expect(tables.map((t) => t.table_name)).toEqual(expect.arrayContaining(['security_events', 'projects']));
    for (const { table_name } of tables) {
      const dump = JSON.stringify(await storage.query(`SELECT * FROM "${table_name}"`));
      for (const s of secrets) {
        expect(dump).not.toContain(s);
        expect(dump).not.toContain(s.slice(-16)); // not even a tail of it
      }
    }
  });
});
