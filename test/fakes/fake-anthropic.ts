import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake messages-API upstream speaking the real wire format: JSON responses, and SSE streams with
 * the real event sequence (message_start, content_block_start, content_block_delta…, message_stop).
 * It records what it received so tests can assert on forwarded headers and bytes.
 */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

/**
 * A scripted answer: status, headers and the body in pieces (each a separate write, 2 ms apart). A
 * function piece is a gate: the answer goes on once the promise it returns settles (it may also
 * break the response off).
 */
export interface ScriptedAnswer {
  status?: number;
  headers?: Record<string, string>;
  pieces: Array<string | Buffer | ((res: ServerResponse) => Promise<unknown>)>;
}

export interface FakeAnthropic {
  url: string;
  /** When set and returning an answer, that answer is sent instead of the mode's (after the header checks). */
  script: ((request: ReceivedRequest) => ScriptedAnswer | undefined) | null;
  received: ReceivedRequest[];
  /** Next responses: 'ok' (default), 'unauthorized' (401 as the real API sends it). */
  mode: 'ok' | 'unauthorized';
  /** Delay before answering, to hold requests in flight. */
  delayMs: number;
  /** The assistant's text, in JSON answers and (split after spaces) in streams. */
  text: string;
  /**
   * Headers the upstream insists on, compared byte for byte with the raw header values received (name
   * case-insensitive, exactly one occurrence). A mismatch is answered 400 and recorded in headerErrors.
   */
  expectHeaders: Record<string, string> | null;
  /** Headers that must not arrive at all (e.g. x-svc-key); same handling as expectHeaders. */
  forbidHeaders: string[];
  /** Every header check that failed, in order (empty when all passed). */
  headerErrors: string[];
  close(): Promise<void>;
}

/** Every raw value of a header (rawHeaders keeps the bytes the client sent, name case as received). */
export function rawHeaderValues(rawHeaders: readonly string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === name.toLowerCase()) out.push(rawHeaders[i + 1]!);
  return out;
}

function checkHeaders(fake: Pick<FakeAnthropic, 'expectHeaders' | 'forbidHeaders'>, rawHeaders: readonly string[]): string[] {
  const errors: string[] = [];
  for (const [name, value] of Object.entries(fake.expectHeaders ?? {})) {
    const got = rawHeaderValues(rawHeaders, name);
    if (got.length !== 1 || got[0] !== value) errors.push(`${name}: expected exactly ${JSON.stringify(value)}, got ${JSON.stringify(got)}`);
  }
  for (const name of fake.forbidHeaders) {
    if (rawHeaderValues(rawHeaders, name).length > 0) errors.push(`${name}: must not be sent`);
  }
  return errors;
}

/** The body of the fake's 401 (as the real API sends it). */
export const UNAUTHORIZED_BODY = { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } } as const;

const MESSAGE = {
  id: 'msg_01FakeUpstream',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'Hello from the fake upstream.' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 7 },
};

/** What GET /v1/models lists, as the real API describes a model. */
export const FAKE_ANTHROPIC_MODELS = [
  { type: 'model', id: 'claude-sonnet-4-5-20250929', display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z' },
  { type: 'model', id: 'claude-opus-4-1-20250805', display_name: 'Claude Opus 4.1', created_at: '2025-08-05T00:00:00Z' },
] as const;

/** The fake's count_tokens answer for a body: one token per four bytes of it (deterministic, so tests can check it). */
export const fakeTokenCount = (body: Buffer): number => Math.max(1, Math.round(body.length / 4));

/** GET /v1/models (a page: data, has_more, first_id, last_id), GET /v1/models/{id} (a model, or 404 not_found_error). */
function answerModels(url: string, res: ServerResponse): void {
  const path = url.split('?')[0]!;
  const json = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_fake_models_${status}` });
    res.end(JSON.stringify(body));
  };
  if (path === '/v1/models') {
    const data = FAKE_ANTHROPIC_MODELS;
    return json(200, { data, has_more: false, first_id: data[0].id, last_id: data[data.length - 1]!.id });
  }
  const id = decodeURIComponent(path.slice('/v1/models/'.length));
  const model = FAKE_ANTHROPIC_MODELS.find((m) => m.id === id);
  if (!model) return json(404, { type: 'error', error: { type: 'not_found_error', message: `model: ${id}` } });
  json(200, model);
}

/** One SSE event as the real API frames it. */
export function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export function streamEvents(text = 'Hello from the fake upstream.'): string[] {
  const words = text.split(/(?<= )/);
  return [
    sse('message_start', { type: 'message_start', message: { ...MESSAGE, content: [], stop_reason: null, usage: { input_tokens: 12, output_tokens: 1 } } }),
    sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    sse('ping', { type: 'ping' }),
    ...words.map((w) => sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: w } })),
    sse('content_block_stop', { type: 'content_block_stop', index: 0 }),
    sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 7 } }),
    sse('message_stop', { type: 'message_stop' }),
  ];
}

function writeScripted(res: ServerResponse, answer: ScriptedAnswer): void {
  res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
  let i = 0;
  const tick = () => {
    if (res.destroyed) return;
    if (i >= answer.pieces.length) return void res.end();
    const piece = answer.pieces[i++]!;
    if (typeof piece === 'function') return void piece(res).finally(tick);
    res.write(piece);
    setTimeout(tick, 2);
  };
  tick();
}

export async function startFakeAnthropic(): Promise<FakeAnthropic> {
  const fake: Omit<FakeAnthropic, 'url' | 'close'> = {
    received: [],
    script: null,
    mode: 'ok',
    delayMs: 0,
    text: MESSAGE.content[0]!.text,
    expectHeaders: null,
    forbidHeaders: [],
    headerErrors: [],
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => setTimeout(respond, fake.delayMs));
    const respond = () => {
      const body = Buffer.concat(chunks);
      const received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawHeaders: req.rawHeaders, body };
      fake.received.push(received);
      const headerErrors = checkHeaders(fake, req.rawHeaders);
      if (headerErrors.length > 0) {
        fake.headerErrors.push(...headerErrors);
        res.writeHead(400, { 'content-type': 'application/json', 'request-id': 'req_fake_400' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: `fake upstream: ${headerErrors.join('; ')}` } }));
        return;
      }
      const scripted = fake.script?.(received);
      if (scripted) return writeScripted(res, scripted);
      if (fake.mode === 'unauthorized') {
        res.writeHead(401, { 'content-type': 'application/json', 'request-id': 'req_fake_401' });
        res.end(JSON.stringify(UNAUTHORIZED_BODY));
        return;
      }
      if (req.method === 'GET' && /^\/v1\/models(\/|\?|$)/.test(req.url ?? '')) return answerModels(req.url ?? '', res);
      if ((req.url ?? '').split('?')[0] === '/v1/messages/count_tokens') {
        res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_fake_count' });
        res.end(JSON.stringify({ input_tokens: fakeTokenCount(body) }));
        return;
      }
      const parsed = JSON.parse(body.toString('utf8')) as { stream?: boolean };
      if (parsed.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': 'req_fake_stream' });
        const events = streamEvents(fake.text);
        let i = 0;
        const tick = () => {
          if (i >= events.length) return res.end();
          res.write(events[i++]);
          setTimeout(tick, 2);
        };
        tick();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_fake_json', 'anthropic-organization-id': 'org-fake' });
      res.end(JSON.stringify({ ...MESSAGE, content: [{ type: 'text', text: fake.text }] }));
    };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as FakeAnthropic;
}
