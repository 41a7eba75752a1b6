import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake OpenAI-compatible chat-completions server (as vLLM or Ollama serve Llama Guard or any instruct
 * model): `POST /v1/chat/completions` answers the real `chat.completion` envelope, with the assistant
 * content produced by `answer` (scripted per test). Requests are recorded.
 */

export interface ChatRequestBody {
  model?: string;
  messages?: Array<{ role: string; content: string }>;
  temperature?: number;
  max_tokens?: number;
  response_format?: { type: string };
}

export type FakeChatMode =
  | 'ok'
  | 'hang'
  | 'http-500'
  /** 200 with a body that is not JSON. */
  | 'not-json-body'
  /** 200 with `choices: []`. */
  | 'no-choices'
  /** 200, the answer cut off by max_tokens (`finish_reason: "length"`). */
  | 'truncated';

export interface FakeChatJudge {
  /** The base URL to configure (…/v1); the endpoint is `${url}/chat/completions`. */
  url: string;
  received: Array<{ headers: IncomingHttpHeaders; body: ChatRequestBody }>;
  mode: FakeChatMode;
  answer: (body: ChatRequestBody) => string | null;
  close(): Promise<void>;
}

/** The verdict a well-behaved JSON judge gives: every category in the system prompt, scored by `score`. */
export function jsonJudge(score: (type: string, content: string) => number) {
  return (body: ChatRequestBody): string => {
    const system = body.messages?.find((m) => m.role === 'system')?.content ?? '';
    const user = body.messages?.find((m) => m.role === 'user')?.content ?? '';
    const types = [...system.matchAll(/^- ([a-z_]+(?:\/[a-z_]+)?):/gm)].map((m) => m[1] as string);
    return JSON.stringify({ categories: Object.fromEntries(types.map((t) => [t, score(t, user)])) });
  };
}

export async function startFakeChatJudge(answer: FakeChatJudge['answer'] = () => 'safe'): Promise<FakeChatJudge> {
  const fake: Omit<FakeChatJudge, 'url' | 'close'> = { received: [], mode: 'ok', answer };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequestBody;
      fake.received.push({ headers: req.headers, body });
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'error', message: 'Not Found', type: 'NotFoundError', code: 404 }));
        return;
      }
      if (fake.mode === 'hang') return;
      respond(res, fake, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

function respond(res: ServerResponse, fake: Omit<FakeChatJudge, 'url' | 'close'>, body: ChatRequestBody): void {
  if (fake.mode === 'http-500') {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'error', message: 'CUDA out of memory', type: 'InternalServerError', param: null, code: 500 }));
    return;
  }
  if (fake.mode === 'not-json-body') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('<html>502 Bad Gateway</html>');
    return;
  }
  const content = fake.answer(body);
  const completion = {
    id: 'chatcmpl-9f8e7d6c5b4a',
    object: 'chat.completion',
    created: 1732270000,
    model: body.model ?? 'unknown',
    choices:
      fake.mode === 'no-choices'
        ? []
        : [
            {
              index: 0,
              message: { role: 'assistant', content, tool_calls: [] },
              logprobs: null,
              finish_reason: fake.mode === 'truncated' ? 'length' : 'stop',
              stop_reason: null,
            },
          ],
    usage: { prompt_tokens: 412, total_tokens: 431, completion_tokens: 19 },
  };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(completion));
}
