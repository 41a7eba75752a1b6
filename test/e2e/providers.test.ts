import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { FAKE_MODELS, startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai';
import { STORAGE_TARGETS } from '../helpers/databases';
import { gqlClient, restClient, type Json } from '../helpers/management-clients';
import { startTestServices, type TestServices } from '../helpers/services';

/**
 * PROVIDERS_FILE (docs/providers.md) end to end: the official openai SDK (its own retries off, so every
 * retry seen is the gateway's) against fake OpenAI-compatible providers on real ports: routes by model,
 * retries on 429 / 5xx / refused connections, fallback with the body's model rewritten, an Azure-shaped
 * provider, streams retried only before their first byte, the models union, and the audit event's
 * provider and attempts.
 */

const KEYS = { PRIMARY_KEY: 'sk-primary-secret-0001', SECONDARY_KEY: 'sk-secondary-secret-0002', AZURE_KEY: 'azure-secret-0003' };
// Run once: on PostgreSQL when the suite has it, else PGlite (the SQL is the same).
const target = STORAGE_TARGETS[STORAGE_TARGETS.length - 1]!;

/** A port nothing listens on (connection refused). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe(`PROVIDERS_FILE on ${target.name}`, () => {
  let primary: FakeOpenAI;
  let secondary: FakeOpenAI;
  let azure: FakeOpenAI;
  let svc: TestServices;
  let client: OpenAI;
  let rest: ReturnType<typeof restClient>;
  let fakes: FakeOpenAI[];

  beforeAll(async () => {
    [primary, secondary, azure] = await Promise.all([startFakeOpenAI(), startFakeOpenAI(), startFakeOpenAI()]);
    fakes = [primary, secondary, azure];
    secondary.models = [...FAKE_MODELS, { id: 'text-embedding-3-small', object: 'model', created: 1_705_953_180, owned_by: 'system' }];
    const dir = mkdtempSync(join(tmpdir(), 'providers-e2e-'));
    const file = join(dir, 'providers.json');
    writeFileSync(
      file,
      JSON.stringify({
        providers: {
          primary: { type: 'openai_compatible', base_url: primary.url, api_key_env: 'PRIMARY_KEY' },
          dead: { type: 'openai_compatible', base_url: `http://127.0.0.1:${await closedPort()}/v1`, retry: { max_retries: 1 } },
          secondary: { type: 'openai_compatible', base_url: secondary.url, api_key_env: 'SECONDARY_KEY' },
          azure: { type: 'azure', endpoint: azure.url.replace(/\/v1$/, ''), api_key_env: 'AZURE_KEY', api_version: '2024-10-21', deployments: { 'gpt-4o-azure': 'prod-4o' } },
        },
        routes: [
          { match: 'gpt-4o-mini', targets: [{ provider: 'primary' }, { provider: 'secondary' }] },
          { match: 'local-*', targets: [{ provider: 'dead' }, { provider: 'secondary', model: 'meta-llama/Llama-3.1-8B-Instruct' }] },
          { match: 'gpt-4o-azure', targets: [{ provider: 'azure' }] },
          { match: 'fast', targets: [{ provider: 'primary', model: 'gpt-4o-mini' }] },
          { match: 'text-embedding-*', targets: [{ provider: 'secondary' }] },
        ],
        retry: { max_retries: 2, initial_delay_ms: 1, max_delay_ms: 5, max_retry_after_ms: 2000 },
      }),
    );
    svc = await startTestServices(target, { env: { PROVIDERS_FILE: file, ...KEYS } });
    client = new OpenAI({ apiKey: svc.apiKey, baseURL: `${svc.gatewayUrl}/v1`, maxRetries: 0 });
    rest = restClient(svc.gatewayUrl, svc.apiKey);
  });
  afterAll(async () => {
    await svc?.dispose();
    await Promise.all(fakes.map((f) => f.close()));
  });
  beforeEach(() => {
    for (const f of fakes) {
      f.received.length = 0;
      f.failures.length = 0;
      f.errorStatus = null;
      f.cutStreamAfter = null;
    }
  });

  /** The audit event of the request sent with X-Request-Id `id`. */
  async function eventOf(id: string): Promise<Json> {
    await svc.running.audit!.flush();
    const page = await rest.get(`/v1/events/?request_id=${id}`);
    expect(page.json.count).toBe(1);
    return page.json.results[0];
  }
  const attemptsOf = (e: Json) => (e.upstream_attempts as Json[]).map((a) => [a.provider, a.model, a.status ?? a.error]);
  const chat = (model: string, id: string) =>
    client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hello' }] }, { headers: { 'x-request-id': id } });

  it('429 with Retry-After within the cap: the same provider again; past the cap: the next target at once', async () => {
    primary.failures.push({ status: 429, headers: { 'retry-after-ms': '20', 'retry-after': '1' } });
    const ok = await chat('gpt-4o-mini', 'prov-429-short');
    expect(ok.choices[0]!.message.content).toBe('Hello from the fake upstream.');
    expect([primary.received.length, secondary.received.length]).toEqual([2, 0]);
    expect(primary.received[1]!.headers.authorization).toBe(`Bearer ${KEYS.PRIMARY_KEY}`);
    expect(attemptsOf(await eventOf('prov-429-short'))).toEqual([['primary', 'gpt-4o-mini', 429], ['primary', 'gpt-4o-mini', 200]]);

    primary.received.length = 0;
    primary.failures.push({ status: 429, headers: { 'retry-after': '60' } });
    await chat('gpt-4o-mini', 'prov-429-long');
    expect([primary.received.length, secondary.received.length]).toEqual([1, 1]);
    expect(secondary.received[0]!.headers.authorization).toBe(`Bearer ${KEYS.SECONDARY_KEY}`);
    const e = await eventOf('prov-429-long');
    expect(e.provider).toBe('secondary');
    expect(attemptsOf(e)).toEqual([['primary', 'gpt-4o-mini', 429], ['secondary', 'gpt-4o-mini', 200]]);
  });

  it('5xx then success: retried with backoff, the client sees one answer', async () => {
    primary.failures.push({ status: 500 }, { status: 503 });
    const { data, response } = await chat('gpt-4o-mini', 'prov-5xx').withResponse();
    expect(response.status).toBe(200);
    expect(data.model).toBe('gpt-4o-mini');
    expect(primary.received).toHaveLength(3);
    const e = await eventOf('prov-5xx');
    expect(e).toMatchObject({ provider: 'primary', response_status: 200, model: 'gpt-4o-mini' });
    expect(attemptsOf(e)).toEqual([['primary', 'gpt-4o-mini', 500], ['primary', 'gpt-4o-mini', 503], ['primary', 'gpt-4o-mini', 200]]);
    for (const a of e.upstream_attempts) expect(a.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('connection refused → retried, then the next target with its model: only the body\'s model changes', async () => {
    const body = '{"messages":[{"role":"user","content":"Say \\"hello\\""}],\n  "model" : "local-fast",  "temperature":0.2}';
    const res = await fetch(`${svc.gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.apiKey}`, 'content-type': 'application/json', 'x-request-id': 'prov-fallback' },
      body,
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).model).toBe('meta-llama/Llama-3.1-8B-Instruct');
    expect(secondary.received).toHaveLength(1);
    expect(secondary.received[0]!.body.toString('utf8')).toBe(body.replace('"local-fast"', '"meta-llama/Llama-3.1-8B-Instruct"'));
    const e = await eventOf('prov-fallback');
    expect(e).toMatchObject({ provider: 'secondary', model: 'local-fast' });
    expect(attemptsOf(e)).toEqual([['dead', 'local-fast', 'connect_error'], ['dead', 'local-fast', 'connect_error'], ['secondary', 'meta-llama/Llama-3.1-8B-Instruct', 200]]);
    // The metrics count the retry and the fallback by provider.
    const scrape = await (await fetch(svc.running.metricsUrl!)).text();
    expect(scrape).toMatch(/csg_upstream_retries_total\{service="gateway",provider="dead"\} [1-9]/);
    expect(scrape).toMatch(/csg_upstream_fallbacks_total\{service="gateway",from_provider="dead",to_provider="secondary"\} [1-9]/);
    expect(scrape).toMatch(/csg_upstream_attempts_total\{service="gateway",provider="dead",outcome="connect_error"\} [1-9]/);
  });

  it('Azure: the deployment URL with api-version, the api-key header, never a bearer credential', async () => {
    const done = await client.chat.completions.create({ model: 'gpt-4o-azure', messages: [{ role: 'user', content: 'hi' }] });
    expect(done.choices[0]!.message.content).toBe('Hello from the fake upstream.');
    expect(azure.received).toHaveLength(1);
    const got = azure.received[0]!;
    expect(got.url).toBe('/openai/deployments/prod-4o/chat/completions?api-version=2024-10-21');
    expect(got.headers['api-key']).toBe(KEYS.AZURE_KEY);
    expect(got.headers.authorization).toBeUndefined();
    expect(JSON.stringify(got.headers)).not.toContain(svc.apiKey);
  });

  it('every attempt failing: the last answer in the error envelope; a model no route takes: 404, nothing sent', async () => {
    primary.errorStatus = 503;
    secondary.errorStatus = 503;
    primary.errorBody = secondary.errorBody = { error: { message: 'Overloaded', type: 'server_error', param: null, code: null } };
    const err = await chat('gpt-4o-mini', 'prov-all-fail').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as InstanceType<typeof OpenAI.InternalServerError>).status).toBe(503);
    expect((err as InstanceType<typeof OpenAI.InternalServerError>).error).toEqual({ type: 'internal_error', code: 'upstream_503', message: 'Upstream provider: Overloaded' });
    expect([primary.received.length, secondary.received.length]).toEqual([3, 3]);
    const e = await eventOf('prov-all-fail');
    expect([e.provider, e.response_status, e.upstream_attempts.length]).toEqual(['secondary', 503, 6]);

    primary.received.length = secondary.received.length = 0;
    const missing = await chat('claude-sonnet-4-5', 'prov-unrouted').catch((x: unknown) => x);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ type: 'not_found', code: 'model_not_found' });
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).message).toContain("'claude-sonnet-4-5'");
    expect(fakes.map((f) => f.received.length)).toEqual([0, 0, 0]);
  });

  it('streams: a 5xx before the first byte is retried; a stream cut after its first bytes is not', async () => {
    primary.failures.push({ status: 502 });
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Hello from the fake upstream.');
    expect(primary.received).toHaveLength(2);

    primary.received.length = 0;
    primary.cutStreamAfter = 2;
    const cut = await client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const outcome = await (async () => {
      for await (const _chunk of cut) void _chunk;
    })().then(
      () => 'ended',
      () => 'failed',
    );
    expect(['ended', 'failed']).toContain(outcome);
    // Bytes had gone out: neither the provider nor the next target is asked again.
    expect([primary.received.length, secondary.received.length]).toEqual([1, 0]);
  });

  it('embeddings follow the routes too', async () => {
    const res = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello' });
    expect(res.data).toHaveLength(1);
    expect(secondary.received.map((r) => r.url)).toEqual(['/v1/embeddings']);
  });

  it('models: the union of the routable models; a failing provider is left out and named; retrieve routes by id', async () => {
    const { data: page, response } = await client.models.list().withResponse();
    expect(page.data.map((m) => m.id)).toEqual(['gpt-4o-mini', 'text-embedding-3-small', 'gpt-4o-azure', 'fast']);
    expect(page.data[0]).toEqual(FAKE_MODELS[0]);
    expect(page.data[3]).toEqual({ id: 'fast', object: 'model', created: 0, owned_by: 'primary' });
    expect(response.headers.get('x-gateway-providers-failed')).toBe('dead');
    // The alias asks its target's model of its provider.
    expect(await client.models.retrieve('fast')).toEqual(FAKE_MODELS[0]);
    expect(primary.received.at(-1)!.url).toBe('/v1/models/gpt-4o-mini');
    const missing = await client.models.retrieve('gpt-3.5-turbo').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('GraphQL events carry the provider and attempts; no provider key is ever logged', async () => {
    primary.failures.push({ status: 500 });
    await chat('gpt-4o-mini', 'prov-graphql');
    await svc.running.audit!.flush();
    const data = await gqlClient(svc.gatewayUrl, svc.apiKey).data(
      '{ events(request_id: "prov-graphql") { results { provider upstream_attempts { provider model status error duration_ms } } } }',
    );
    const [event] = data.events.results;
    expect(event.provider).toBe('primary');
    expect(event.upstream_attempts.map((a: Json) => [a.provider, a.model, a.status, a.error])).toEqual([
      ['primary', 'gpt-4o-mini', 500, null],
      ['primary', 'gpt-4o-mini', 200, null],
    ]);
    for (const secret of Object.values(KEYS)) expect(svc.logs.text).not.toContain(secret);
  });

  it('an invalid file stops the start with the field named', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'providers-bad-'));
    const file = join(dir, 'providers.json');
    writeFileSync(file, JSON.stringify({ providers: { a: { type: 'openai' } }, routes: [{ match: '*', targets: [{ provider: 'b' }] }] }));
    await expect(startTestServices(target, { env: { PROVIDERS_FILE: file } })).rejects.toThrow(`PROVIDERS_FILE ${file}: routes.0.targets.0.provider: unknown provider "b" (declared: a)`);
  });
});
