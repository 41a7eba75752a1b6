import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake OpenAI moderation endpoint speaking the real wire format: `POST /v1/moderations` with
 * `{model, input}` answers `{id, model, results: [{flagged, categories, category_scores,
 * category_applied_input_types}]}` with the 13 categories of omni-moderation. Scores come from `scores`
 * (default: a tiny value per category). `mode` scripts failures; requests are recorded.
 */

export const MODERATION_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;
export type ModerationCategoryKey = (typeof MODERATION_CATEGORIES)[number];

export type FakeModerationMode =
  | 'ok'
  /** Never answers (the socket stays open until close). */
  | 'hang'
  | 'http-500'
  | 'http-401'
  /** 200 with a body that is not JSON. */
  | 'not-json'
  /** 200, but category_scores lacks "illicit/violent" (as text-moderation-* models do for illicit*). */
  | 'missing-category'
  /** 200, with a score of 1.7 for "violence". */
  | 'out-of-range'
  /** 200, `results: []`. */
  | 'empty-results';

export interface ReceivedModeration {
  url: string;
  headers: IncomingHttpHeaders;
  body: { model?: unknown; input?: unknown };
}

export interface FakeModeration {
  /** The base URL to configure (…/v1); the endpoint is `${url}/moderations`. */
  url: string;
  received: ReceivedModeration[];
  mode: FakeModerationMode;
  delayMs: number;
  scores: (input: string) => Partial<Record<ModerationCategoryKey, number>>;
  /** Requests being answered right now, and the most ever at once. */
  active: number;
  maxActive: number;
  /** TCP connections accepted so far (keep-alive reuses one). */
  connections: number;
  close(): Promise<void>;
}

const DEFAULT_SCORE = 0.000012;

export async function startFakeModeration(): Promise<FakeModeration> {
  const fake: Omit<FakeModeration, 'url' | 'close'> = {
    received: [],
    mode: 'ok',
    delayMs: 0,
    scores: () => ({}),
    active: 0,
    maxActive: 0,
    connections: 0,
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ReceivedModeration['body'];
      fake.received.push({ url: req.url ?? '', headers: req.headers, body });
      if (req.method !== 'POST' || req.url !== '/v1/moderations') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'Not found', type: 'invalid_request_error', param: null, code: null } }));
        return;
      }
      if (fake.mode === 'hang') return;
      fake.active++;
      fake.maxActive = Math.max(fake.maxActive, fake.active);
      setTimeout(() => {
        fake.active--;
        respond(res, fake.mode, String(body.input), body.model, fake.scores);
      }, fake.delayMs);
    });
  });
  server.on('connection', () => {
    fake.connections++;
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

function respond(
  res: ServerResponse,
  mode: FakeModerationMode,
  input: string,
  model: unknown,
  scores: FakeModeration['scores'],
): void {
  if (mode === 'http-500' || mode === 'http-401') {
    const status = mode === 'http-500' ? 500 : 401;
    const error =
      status === 500
        ? { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null }
        : { message: 'Incorrect API key provided: sk-wrong.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' };
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error }));
    return;
  }
  if (mode === 'not-json') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"id": "modr-1", "results": [');
    return;
  }
  const given = scores(input);
  const category_scores: Record<string, number> = {};
  for (const c of MODERATION_CATEGORIES) category_scores[c] = given[c] ?? DEFAULT_SCORE;
  if (mode === 'missing-category') delete category_scores['illicit/violent'];
  if (mode === 'out-of-range') category_scores.violence = 1.7;
  const categories = Object.fromEntries(Object.entries(category_scores).map(([c, s]) => [c, s >= 0.5]));
  const result = {
    flagged: Object.values(categories).some(Boolean),
    categories,
    category_scores,
    category_applied_input_types: Object.fromEntries(MODERATION_CATEGORIES.map((c) => [c, ['text']])),
  };
  res.writeHead(200, { 'content-type': 'application/json', 'openai-processing-ms': '42' });
  res.end(
    JSON.stringify({
      id: 'modr-0d9740456c391e43c445bf0f010940c7',
      model: typeof model === 'string' ? model : 'omni-moderation-latest',
      results: mode === 'empty-results' ? [] : [result],
    }),
  );
}
