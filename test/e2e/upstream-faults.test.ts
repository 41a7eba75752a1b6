import { createServer, type Server, type Socket } from 'node:net';
import { pgliteTarget } from '../helpers/databases';
import { freePort } from '../helpers/redis-server';
import { postJson, startTestServices, type TestServices } from '../helpers/services';

/**
 * The upstream provider failing (found by the fuzzer: a connection cut in the middle of a JSON body was
 * a 500): unreachable → 502 upstream_unavailable; cut mid-body (answer or error body) → 502; silent past
 * UPSTREAM_TIMEOUT_MS → 504 upstream_timeout, on the chat-completions proxy and on the sensor alike
 * (the sensor waited a hard-coded 600 s before). Always the spec's envelope, never a 500.
 */
type Behaviour = 'cut_body' | 'cut_error_body' | 'silent' | 'silent_after_headers' | 'cut_stream' | 'silent_stream';

/** A raw TCP "upstream" that reads the request head and then misbehaves as told. */
async function brokenUpstream(): Promise<{ url: string; behaviour: Behaviour; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const state = { behaviour: 'cut_body' as Behaviour };
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('data', () => {
      const body = '{"id":"chatcmpl-x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hel';
      switch (state.behaviour) {
        case 'cut_body':
          socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n${body}`, () => socket.destroy());
          break;
        case 'cut_error_body':
          socket.write('HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{"error":{"mess', () => socket.destroy());
          break;
        case 'cut_stream':
        case 'silent_stream': {
          const event = { id: 'chatcmpl-x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'Hello there' }, finish_reason: null }] };
          socket.write(`HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n`);
          const data = `data: ${JSON.stringify(event)}\n\n`;
          socket.write(`${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`, () => {
            if (state.behaviour === 'cut_stream') socket.destroy();
          });
          break;
        }
        case 'silent_after_headers':
          socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{"id":');
          break;
        default: // silent: nothing, ever
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get behaviour() { return state.behaviour; },
    set behaviour(b: Behaviour) { state.behaviour = b; },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello' }] };
const MESSAGES = { model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'Say hello' }] };
const UPSTREAM_TIMEOUT_MS = 400;

describe('upstream provider failures → 502 / 504 in the envelope, never 500', () => {
  let upstream: Awaited<ReturnType<typeof brokenUpstream>>;
  let svc: TestServices;
  let auth: Record<string, string>;

  beforeAll(async () => {
    upstream = await brokenUpstream();
    svc = await startTestServices(pgliteTarget, {
      env: { OPENAI_BASE_URL: `${upstream.url}/v1`, OPENAI_API_KEY: 'sk-up', ANTHROPIC_BASE_URL: upstream.url, UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS) },
    });
    auth = { authorization: `Bearer ${svc.apiKey}` };
    const policies = await (await fetch(`${svc.gatewayUrl}/v1/policies/?is_default=true`, { headers: auth })).json() as { results: Array<{ id: string }> };
    const patched = await fetch(`${svc.gatewayUrl}/v1/policies/${policies.results[0]!.id}/`, {
      method: 'PATCH', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ policy_mode: 'IO', output_detectors: [{ detector_type: 'pii/email', action: 'block' }] }),
    });
    expect(patched.status).toBe(200);
  });
  afterAll(async () => {
    await svc?.dispose();
    await upstream?.close();
  });

  it.each([
    ['cut_body', 502, 'upstream_unavailable'],
    ['cut_error_body', 502, 'upstream_unavailable'],
    ['silent_after_headers', 504, 'upstream_timeout'],
    ['silent', 504, 'upstream_timeout'],
  ] as const)('chat completions, upstream %s → %d %s', async (behaviour, status, code) => {
    upstream.behaviour = behaviour;
    const res = await postJson(`${svc.gatewayUrl}/v1/chat/completions`, CHAT, auth);
    expect(res.status).toBe(status);
    expect(res.json).toEqual({ error: { message: expect.any(String), type: 'internal_error', code } });
  });

  it.each(['cut_stream', 'silent_stream'] as const)('chat stream, upstream %s after its first event → the stream ends filtered with [DONE]', async (behaviour) => {
    upstream.behaviour = behaviour;
    const res = await fetch(`${svc.gatewayUrl}/v1/chat/completions`, {
      method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ ...CHAT, stream: true }),
    });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toMatch(/"finish_reason":"content_filter"/);
    expect(body.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('sensor, upstream silent → 504 upstream_timeout after UPSTREAM_TIMEOUT_MS (messages envelope)', async () => {
    upstream.behaviour = 'silent';
    const res = await postJson(`${svc.sensorUrl}/v1/messages`, MESSAGES, { 'x-svc-key': svc.apiKey, 'anthropic-version': '2023-06-01' });
    expect(res.status).toBe(504);
    expect(res.json).toEqual({ type: 'error', error: { message: expect.any(String), type: 'internal_error', code: 'upstream_timeout' } });
  });

  it('unreachable upstream → 502 upstream_unavailable on both', async () => {
    const closedPort = await freePort();
    const other = await startTestServices(pgliteTarget, {
      env: { OPENAI_BASE_URL: `http://127.0.0.1:${closedPort}/v1`, ANTHROPIC_BASE_URL: `http://127.0.0.1:${closedPort}` },
    });
    try {
      const chat = await postJson(`${other.gatewayUrl}/v1/chat/completions`, CHAT, { authorization: `Bearer ${other.apiKey}` });
      expect(chat.status).toBe(502);
      expect(chat.json.error).toMatchObject({ type: 'internal_error', code: 'upstream_unavailable' });
      const sensor = await postJson(`${other.sensorUrl}/v1/messages`, MESSAGES, { 'x-svc-key': other.apiKey });
      expect(sensor.status).toBe(502);
      expect(sensor.json).toMatchObject({ type: 'error', error: { type: 'internal_error', code: 'upstream_unavailable' } });
    } finally {
      await other.dispose();
    }
  });
});
