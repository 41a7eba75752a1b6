import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake OpenAI chat-completions upstream speaking the real wire format: a JSON `chat.completion`, or
 * an SSE stream of `chat.completion.chunk` events ending with `data: [DONE]` (and models, embeddings). Tests script the
 * answer's text and how it is split into chunks, and read back what the upstream received.
 */
export interface FakeOpenAI {
  url: string;
  received: Array<{ method?: string; url?: string; headers: IncomingHttpHeaders; body: Buffer }>;
  /** What GET /v1/models lists (and GET /v1/models/{id} finds; any other id is a 404 model_not_found). */
  models: Array<{ id: string; object: 'model'; created: number; owned_by: string }>;
  /** The assistant's answer, as stream pieces (joined for JSON answers). */
  pieces: string[];
  /** Answer with this status and an OpenAI error body instead. */
  errorStatus: number | null;
  /** The error body sent with errorStatus (default: a rate-limit error). */
  errorBody: Record<string, unknown> | null;
  /** Milliseconds between stream events. */
  chunkDelayMs: number;
  /** Milliseconds before a JSON answer is sent (holds the request in flight). */
  jsonDelayMs: number;
  /** Set when the client of the fake went away before the answer ended. */
  aborted: number;
  /** Extra fields of the JSON answer's message (reasoning_content, annotations, ...); null for none. */
  messageExtra: Record<string, unknown> | null;
  /** Stream answer: these deltas instead of one content delta per piece; null for the pieces. */
  deltas: Array<Record<string, unknown>> | null;
  /** Answer in the legacy completions shape: `choices[].text` (and `text` in stream chunks), no message / delta. */
  legacy: boolean;
  /** Dimensions of the vectors POST /v1/embeddings answers (unless the request sets `dimensions`). */
  embeddingDims: number;
  /** Answers of the next requests, one each, before any other behaviour (an OpenAI error body with that status and headers). */
  failures: Array<{ status: number; headers?: Record<string, string> }>;
  /** Stream answers: the connection is destroyed after this many events (a provider failing mid-stream); null = never. */
  cutStreamAfter: number | null;
  /** The bytes of the last answer, exactly as sent (a JSON body, or the whole stream). */
  lastSent: string;
  close(): Promise<void>;
}

const ID = 'chatcmpl-fake123';

export const FAKE_MODELS: FakeOpenAI['models'] = [
  { id: 'gpt-4o-mini', object: 'model', created: 1_721_172_741, owned_by: 'system' },
  { id: 'gpt-4o', object: 'model', created: 1_715_367_049, owned_by: 'system' },
  { id: 'meta-llama/Llama-3.1-8B-Instruct', object: 'model', created: 1_763_800_000, owned_by: 'vllm' },
];

/** GET /v1/models and /v1/models/{id} in the real wire format (a list object, a model object, a 404 error). */
function answerModels(fake: FakeOpenAI, url: string, res: ServerResponse): void {
  const path = url.split('?')[0]!;
  if (path === '/v1/models') {
    res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req_fake_models' });
    return void res.end(JSON.stringify({ object: 'list', data: fake.models }));
  }
  const id = decodeURIComponent(path.slice('/v1/models/'.length));
  const model = fake.models.find((m) => m.id === id);
  if (!model) {
    res.writeHead(404, { 'content-type': 'application/json', 'x-request-id': 'req_fake_404' });
    return void res.end(JSON.stringify({ error: { message: `The model '${id}' does not exist`, type: 'invalid_request_error', param: 'model', code: 'model_not_found' } }));
  }
  res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req_fake_model' });
  res.end(JSON.stringify(model));
}

/** The fake's vector for input `index`: deterministic, so a test can check it came back unchanged. */
export function fakeEmbedding(index: number, dims: number): number[] {
  return Array.from({ length: dims }, (_, d) => Math.fround(((index + 1) * (d + 1)) / 64));
}

/**
 * POST /v1/embeddings in the real wire format: {object:"list", data:[{object:"embedding", index, embedding}],
 * model, usage}; with encoding_format base64 (what the openai SDK asks for by default) each vector is
 * base64 of little-endian float32.
 */
function answerEmbeddings(fake: FakeOpenAI, body: Buffer, res: ServerResponse): void {
  const parsed = JSON.parse(body.toString('utf8')) as { model: string; input: unknown; encoding_format?: string; dimensions?: number };
  const inputs = typeof parsed.input === 'string' || typeof (parsed.input as unknown[])[0] === 'number' ? [parsed.input] : (parsed.input as unknown[]);
  const tokensOf = (x: unknown) => (typeof x === 'string' ? Math.max(1, Math.ceil(x.length / 4)) : (x as number[]).length);
  const promptTokens = inputs.reduce<number>((n, x) => n + tokensOf(x), 0);
  const dims = parsed.dimensions ?? fake.embeddingDims;
  const data = inputs.map((_, index) => {
    const vector = fakeEmbedding(index, dims);
    const embedding = parsed.encoding_format === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
    return { object: 'embedding', index, embedding };
  });
  fake.lastSent = JSON.stringify({ object: 'list', data, model: parsed.model, usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } });
  res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req_fake_embeddings' });
  res.end(fake.lastSent);
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const fake = { received: [], pieces: ['Hello', ' from', ' the fake', ' upstream.'], errorStatus: null, errorBody: null, chunkDelayMs: 1, jsonDelayMs: 0, aborted: 0, messageExtra: null, deltas: null, legacy: false, lastSent: '', models: [...FAKE_MODELS], embeddingDims: 8, failures: [], cutStreamAfter: null } as unknown as FakeOpenAI;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      fake.received.push({ method: req.method, url: req.url, headers: req.headers, body });
      const failure = fake.failures.shift();
      if (failure) {
        res.writeHead(failure.status, { 'content-type': 'application/json', ...failure.headers });
        res.end(JSON.stringify({ error: { message: `Scripted failure ${failure.status}`, type: 'server_error', param: null, code: null } }));
        return;
      }
      if (fake.errorStatus) {
        res.writeHead(fake.errorStatus, { 'content-type': 'application/json' });
        res.end(JSON.stringify(fake.errorBody ?? { error: { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' } }));
        return;
      }
      if (req.method === 'GET' && /^\/v1\/models(\/|\?|$)/.test(req.url ?? '')) return answerModels(fake, req.url ?? '', res);
      if (req.method === 'POST' && req.url === '/v1/embeddings') return answerEmbeddings(fake, body, res);
      const parsed = JSON.parse(body.toString('utf8')) as { model: string; stream?: boolean; stream_options?: { include_usage?: boolean } };
      const created = 1_763_800_000;
      if (!parsed.stream) {
        res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req_fake' });
        const message = { role: 'assistant', content: fake.pieces.join(''), refusal: null, ...fake.messageExtra };
        const choice = fake.legacy ? { index: 0, text: fake.pieces.join(''), logprobs: null, finish_reason: 'stop' } : { index: 0, message, logprobs: null, finish_reason: 'stop' };
        fake.lastSent = JSON.stringify({
          id: ID, object: fake.legacy ? 'text_completion' : 'chat.completion', created, model: parsed.model,
          choices: [choice],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        });
        // This answer's own bytes: a concurrent request overwrites lastSent while this one is held.
        const answer = fake.lastSent;
        if (fake.jsonDelayMs > 0) setTimeout(() => res.end(answer), fake.jsonDelayMs);
        else res.end(answer);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': 'req_fake_stream' });
      const base = { id: ID, object: 'chat.completion.chunk', created, model: parsed.model, system_fingerprint: 'fp_fake' };
      const deltas = fake.deltas ?? fake.pieces.map((p) => ({ content: p }));
      const events = [
        ...(fake.legacy ? [] : [{ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] }]),
        ...(fake.legacy
          ? fake.pieces.map((p) => ({ ...base, object: 'text_completion', choices: [{ index: 0, text: p, logprobs: null, finish_reason: null }] }))
          : deltas.map((delta) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: null }] }))),
        { ...base, choices: [fake.legacy ? { index: 0, text: '', logprobs: null, finish_reason: 'stop' } : { index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }] },
        ...(parsed.stream_options?.include_usage ? [{ ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }] : []),
      ].map((e) => `data: ${JSON.stringify(e)}\n\n`);
      events.push('data: [DONE]\n\n');
      fake.lastSent = events.join('');
      let i = 0;
      res.on('close', () => {
        if (i < events.length) fake.aborted += 1;
      });
      const tick = () => {
        if (res.destroyed) return;
        if (i >= events.length) return void res.end();
        if (fake.cutStreamAfter !== null && i >= fake.cutStreamAfter) return void res.destroy();
        res.write(events[i++]);
        setTimeout(tick, fake.chunkDelayMs);
      };
      tick();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return fake;
}
