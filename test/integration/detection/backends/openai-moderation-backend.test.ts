import type { ClassifierType } from '../../../../src/detection/classifiers/backend';
import { createKeepAliveAgent } from '../../../../src/detection/classifiers/backends/http-json';
import {
  MODERATION_CATEGORY_MAP,
  MODERATION_TYPES,
  OpenAiModerationBackend,
} from '../../../../src/detection/classifiers/backends/openai-moderation-backend';
import { MODERATION_CATEGORIES, startFakeModeration, type FakeModeration } from '../../../fakes/fake-moderation';

describe('openai-moderation backend against a fake /v1/moderations', () => {
  let fake: FakeModeration;
  const agent = createKeepAliveAgent({ connections: 4 });
  const signal = () => new AbortController().signal;

  beforeAll(async () => {
    fake = await startFakeModeration();
  });
  afterAll(async () => {
    await fake.close();
    await agent.close();
  });
  beforeEach(() => {
    fake.mode = 'ok';
    fake.received.length = 0;
    fake.scores = () => ({});
  });

  const backend = (types?: ClassifierType[]) =>
    new OpenAiModerationBackend({ baseUrl: fake.url, apiKey: 'sk-test-123', model: 'omni-moderation-latest', types, dispatcher: agent });

  it('maps each of the 13 categories one to one onto moderated_content/* with its score', async () => {
    // A distinct score per category, so a swapped mapping cannot pass.
    fake.scores = () => Object.fromEntries(MODERATION_CATEGORIES.map((c, i) => [c, (i + 1) / 100]));
    const scores = await backend().classify('some text', signal());
    const expected = Object.fromEntries(MODERATION_CATEGORIES.map((c, i) => [MODERATION_CATEGORY_MAP[c], (i + 1) / 100]));
    expect(scores).toEqual(expected);
    expect(Object.keys(scores)).toHaveLength(13);
    expect(scores['moderated_content/self_harm_instructions']).toBe(0.09); // "self-harm/instructions" is 9th
    expect(scores['moderated_content/violence_graphic']).toBe(0.13);
  });

  it('covers exactly the 13 moderation types, spelled as the catalog spells them', () => {
    expect([...MODERATION_TYPES].sort()).toEqual([
      'moderated_content/harassment',
      'moderated_content/harassment_threatening',
      'moderated_content/hate',
      'moderated_content/hate_threatening',
      'moderated_content/illicit',
      'moderated_content/illicit_violent',
      'moderated_content/self_harm',
      'moderated_content/self_harm_instructions',
      'moderated_content/self_harm_intent',
      'moderated_content/sexual',
      'moderated_content/sexual_minors',
      'moderated_content/violence',
      'moderated_content/violence_graphic',
    ]);
  });

  it('POSTs {model, input} to {base}/moderations with the bearer key', async () => {
    await backend().classify('hello there', signal());
    expect(fake.received).toHaveLength(1);
    const [req] = fake.received;
    expect(req?.url).toBe('/v1/moderations');
    expect(req?.headers.authorization).toBe('Bearer sk-test-123');
    expect(req?.headers['content-type']).toBe('application/json');
    expect(req?.body).toEqual({ model: 'omni-moderation-latest', input: 'hello there' });
  });

  it('sequential calls reuse one keep-alive connection', async () => {
    const before = fake.connections;
    const b = backend();
    for (let i = 0; i < 5; i++) await b.classify(`text ${i}`, signal());
    expect(fake.received).toHaveLength(5);
    expect(fake.connections - before).toBeLessThanOrEqual(1);
  });

  it('reports only the configured subset of types', async () => {
    fake.scores = () => ({ violence: 0.97, hate: 0.4 });
    const scores = await backend(['moderated_content/violence']).classify('x', signal());
    expect(scores).toEqual({ 'moderated_content/violence': 0.97 });
  });

  it('refuses a type it cannot score at construction', () => {
    expect(() => backend(['prompt_attack'])).toThrow('openai-moderation cannot score prompt_attack');
  });

  it.each([
    ['not-json', 'malformed', 'response body is not JSON'],
    ['missing-category', 'malformed', 'category_scores["illicit/violent"] is missing'],
    ['out-of-range', 'malformed', 'category_scores["violence"] is missing or not a number in 0..1'],
    ['empty-results', 'malformed', 'lacks results[0].category_scores'],
    ['http-500', 'http_status', 'HTTP 500 (server_error)'],
    ['http-401', 'http_status', 'HTTP 401 (invalid_request_error, invalid_api_key)'],
  ] as const)('a %s answer is an error (%s), never a pass', async (mode, kind, message) => {
    fake.mode = mode;
    const err = await backend().classify('x', signal()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ name: 'BackendError', kind });
    expect((err as Error).message).toContain(message);
  });

  it('an error message never quotes the key or the upstream free text', async () => {
    fake.mode = 'http-401';
    const err = (await backend().classify('secret text', signal()).catch((e: unknown) => e)) as Error;
    expect(err.message).toBe('openai-moderation: HTTP 401 (invalid_request_error, invalid_api_key)');
    expect(err.message).not.toMatch(/sk-|Incorrect|secret text/);
  });

  it('a missing illicit score is accepted when illicit is not configured (text-moderation-* models)', async () => {
    fake.mode = 'missing-category';
    const scores = await backend(['moderated_content/violence', 'moderated_content/hate']).classify('x', signal());
    expect(Object.keys(scores).sort()).toEqual(['moderated_content/hate', 'moderated_content/violence']);
  });

  it('a connection refused is a transport error', async () => {
    const closed = await startFakeModeration();
    await closed.close();
    const b = new OpenAiModerationBackend({ baseUrl: closed.url, model: 'm', dispatcher: agent });
    await expect(b.classify('x', signal())).rejects.toMatchObject({ kind: 'transport' });
  });
});
