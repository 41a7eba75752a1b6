import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { inspect } from 'node:util';
import type { Dispatcher } from 'undici';
import { loadProvidersFile, parseProvidersFile, type ProviderConfig, type ProvidersConfig } from '../../../src/gateway/proxy/providers-file';
import {
  backoffDelay,
  bodyModel,
  globMatch,
  nextWait,
  providerUrl,
  retryAfterMs,
  retrySettingsFor,
  rewriteModel,
  routeFor,
  runAttempts,
  type AttemptOutcome,
  type AttemptPlan,
} from '../../../src/gateway/proxy/upstream-router';
import { ConfigError } from '../../../src/shared/config';

/** PROVIDERS_FILE (docs/providers.md): the file's schema, routing, backoff, the body's model rewrite and the attempt loop. */

const EXAMPLE = join(__dirname, '../../../deploy/providers.example.json');
const ENV = { OPENAI_API_KEY: 'sk-openai-secret-0001', AZURE_OPENAI_API_KEY: 'azure-secret-0002', VLLM_API_KEY: 'vllm-secret-0003' };

function problemsOf(raw: unknown, env: Record<string, string> = ENV): string[] {
  try {
    parseProvidersFile(raw, env, 'F');
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('parsed');
}

const minimal = (over: Record<string, unknown> = {}) => ({
  providers: { a: { type: 'openai_compatible', base_url: 'http://a.test/v1' }, b: { type: 'openai', api_key_env: 'OPENAI_API_KEY' } },
  routes: [{ match: 'gpt-*', targets: [{ provider: 'a' }, { provider: 'b', model: 'other' }] }],
  ...over,
});

describe('providers file', () => {
  it('deploy/providers.example.json is valid; keys come from the environment and are never shown', () => {
    const config = loadProvidersFile(EXAMPLE, ENV)!;
    expect([...config.providers.keys()]).toEqual(['openai', 'azure', 'vllm', 'ollama']);
    const azure = config.providers.get('azure')!;
    expect(azure).toMatchObject({ kind: 'azure', baseUrl: 'https://my-resource.openai.azure.com', apiVersion: '2024-10-21', apiKeyEnv: 'AZURE_OPENAI_API_KEY' });
    expect(azure.apiKey?.reveal()).toBe('azure-secret-0002');
    expect(config.providers.get('openai')!.baseUrl).toBe('https://api.openai.com/v1');
    expect(config.providers.get('ollama')!.apiKey).toBeUndefined();
    for (const shown of [JSON.stringify({ ...config, providers: [...config.providers.values()] }), inspect(config, { depth: 10 }), `${azure.apiKey}`]) {
      for (const secret of Object.values(ENV)) expect(shown).not.toContain(secret);
      expect(shown).toContain('[REDACTED]');
    }
  });

  it('a file that cannot be read or is not JSON is a ConfigError naming it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'providers-'));
    expect(() => loadProvidersFile(join(dir, 'missing.json'), ENV)).toThrow(/^Invalid configuration:\n {2}- PROVIDERS_FILE: cannot read .*missing\.json \(ENOENT\)/);
    writeFileSync(join(dir, 'bad.json'), '{"providers":');
    expect(() => loadProvidersFile(join(dir, 'bad.json'), ENV)).toThrow(/PROVIDERS_FILE: .*bad\.json is not valid JSON/);
    expect(loadProvidersFile(undefined, ENV)).toBeUndefined();
  });

  it('each invalid field is named with its path', () => {
    expect(problemsOf(minimal({ routes: [{ match: 'x', targets: [{ provider: 'nope' }] }] }))).toEqual(['F: routes.0.targets.0.provider: unknown provider "nope" (declared: a, b)']);
    expect(problemsOf({ providers: { a: { type: 'bedrock' } }, routes: [] })[0]).toMatch(/^F: providers\.a\.type: /);
    expect(problemsOf({ providers: { a: { type: 'azure', endpoint: 'https://x.test', api_key_env: 'K', api_version: 'latest' } }, default: { targets: [{ provider: 'a' }] } }, { K: 'k' })).toEqual([
      'F: providers.a.api_version: must be an Azure OpenAI API version such as 2024-10-21 or 2025-03-01-preview',
    ]);
    expect(problemsOf(minimal({ routes: [{ match: 'gpt-(4|5)', targets: [{ provider: 'a' }] }] }))[0]).toMatch(/^F: routes\.0\.match: must be a model name or a glob/);
    expect(problemsOf(minimal({ routes: [{ match: 'gpt', targets: [] }] }))).toEqual(['F: routes.0.targets: must list at least one {provider, model?} target']);
    expect(problemsOf(minimal({ routes: [] }))).toEqual(['F: routes: give at least one route or a default']);
    expect(problemsOf({ providers: {}, default: { targets: [{ provider: 'a' }] } })).toContain('F: providers: must declare at least one provider');
    expect(problemsOf(minimal({ retry: { max_retries: 50 } }))).toEqual(['F: retry.max_retries: must be at most 10']);
    expect(problemsOf(minimal({ extra: true }))[0]).toMatch(/^F: .*extra/);
    expect(problemsOf({ providers: { 'Bad Name': { type: 'openai' } }, default: { targets: [{ provider: 'Bad Name' }] } })[0]).toMatch(/^F: providers\.Bad Name: a provider name is/);
  });

  it('refuses a key written in the file, and a key variable that is not set (never echoing a value)', () => {
    const inFile = problemsOf(minimal({ providers: { a: { type: 'openai', api_key: 'sk-live-123' } }, routes: [{ match: '*', targets: [{ provider: 'a' }] }] }));
    expect(inFile).toEqual(['F: providers.a.api_key: credentials never go in the file; put the key in an environment variable and name it in api_key_env']);
    expect(inFile.join()).not.toContain('sk-live-123');
    expect(problemsOf(minimal({ providers: { a: { type: 'openai', api_key_env: 'sk-live-123' } }, routes: [{ match: '*', targets: [{ provider: 'a' }] }] }))[0]).toMatch(
      /^F: providers\.a\.api_key_env: must be the name of an environment variable/,
    );
    expect(problemsOf(minimal(), {})).toEqual(['F: providers.b.api_key_env: the environment variable OPENAI_API_KEY is not set']);
  });
});

describe('routing', () => {
  it('globs: * any characters, ? one, everything else literal', () => {
    const cases: Array<[string, string, boolean]> = [
      ['gpt-4o*', 'gpt-4o', true], ['gpt-4o*', 'gpt-4o-mini-2024-07-18', true], ['gpt-4o*', 'gpt-4', false],
      ['gpt-4o', 'gpt-4o-mini', false], ['*', '', true], ['meta-llama/*', 'meta-llama/Llama-3.1-8B', true],
      ['*-mini', 'gpt-4o-mini', true], ['*-mini', 'gpt-4o-mini-x', false], ['o?-mini', 'o3-mini', true], ['o?-mini', 'o-mini', false],
      ['a*b*c', 'aXbYbZc', true], ['a*b*c', 'aXbYbZ', false], ['gpt.4', 'gpt-4', false],
    ];
    for (const [pattern, name, expected] of cases) expect([pattern, name, globMatch(pattern, name)]).toEqual([pattern, name, expected]);
    // Linear backtracking: a hostile name against many stars answers at once.
    expect(globMatch('*a*a*a*a*a*b', 'a'.repeat(5000))).toBe(false);
  });

  it('the first matching route wins; else the default; no model: the default, else the first route', () => {
    const config = parseProvidersFile(
      {
        providers: { a: { type: 'openai_compatible', base_url: 'http://a.test/v1' }, b: { type: 'openai_compatible', base_url: 'http://b.test/v1' } },
        routes: [
          { match: 'gpt-4o-mini', targets: [{ provider: 'b' }] },
          { match: 'gpt-4o*', targets: [{ provider: 'a' }] },
        ],
        default: { targets: [{ provider: 'b' }] },
      },
      {},
      'F',
    );
    expect(routeFor(config, 'gpt-4o-mini')!.match).toBe('gpt-4o-mini');
    expect(routeFor(config, 'gpt-4o-2024-08-06')!.match).toBe('gpt-4o*');
    expect(routeFor(config, 'claude')).toBe(config.default);
    expect(routeFor(config, undefined)).toBe(config.default);
    const noDefault: ProvidersConfig = { ...config, default: undefined };
    expect(routeFor(noDefault, 'claude')).toBeUndefined();
    expect(routeFor(noDefault, undefined)!.match).toBe('gpt-4o-mini');
  });

  it('retry settings: defaults, then the file, the provider, the route', () => {
    const config = parseProvidersFile(
      {
        providers: { a: { type: 'openai_compatible', base_url: 'http://a.test/v1', retry: { max_retries: 5, initial_delay_ms: 10 } } },
        routes: [{ match: '*', targets: [{ provider: 'a' }], retry: { max_retries: 1 } }],
        retry: { max_delay_ms: 100, max_retry_after_ms: 2000 },
      },
      {},
      'F',
    );
    expect(retrySettingsFor(config, config.providers.get('a')!, config.routes[0]!)).toEqual({ maxRetries: 1, initialDelayMs: 10, maxDelayMs: 100, maxRetryAfterMs: 2000 });
  });
});

describe('backoff and Retry-After', () => {
  const s = { maxRetries: 3, initialDelayMs: 500, maxDelayMs: 3000, maxRetryAfterMs: 10_000 };

  it('exponential with jitter in [d/2, d], capped by max_delay_ms', () => {
    expect([0, 1, 2, 3, 10].map((n) => backoffDelay(n, s, () => 0))).toEqual([250, 500, 1000, 1500, 1500]);
    expect([0, 1, 2, 3, 10].map((n) => backoffDelay(n, s, () => 1))).toEqual([500, 1000, 2000, 3000, 3000]);
    expect(backoffDelay(1, s, () => 0.5)).toBe(750);
  });

  it('reads retry-after-ms, Retry-After seconds and HTTP dates', () => {
    const now = Date.parse('2026-11-28T00:00:00Z');
    expect(retryAfterMs({ 'retry-after-ms': '120.5', 'retry-after': '9' }, now)).toBe(121);
    expect(retryAfterMs({ 'retry-after': '2' }, now)).toBe(2000);
    expect(retryAfterMs({ 'retry-after': 'Sat, 28 Nov 2026 00:00:03 GMT' }, now)).toBe(3000);
    expect(retryAfterMs({ 'retry-after': 'Fri, 27 Nov 2026 00:00:00 GMT' }, now)).toBe(0);
    expect(retryAfterMs({ 'retry-after': 'soon' }, now)).toBeUndefined();
    expect(retryAfterMs({}, now)).toBeUndefined();
  });

  it('waits a Retry-After within the cap exactly; leaves the target past it, or when its retries are used up', () => {
    expect(nextWait(0, s, 4000, () => 0)).toBe(4000);
    expect(nextWait(0, s, 10_001, () => 0)).toBeNull();
    expect(nextWait(1, s, undefined, () => 1)).toBe(1000);
    expect(nextWait(3, s, undefined, () => 1)).toBeNull();
    expect(nextWait(0, { ...s, maxRetries: 0 }, 10, () => 1)).toBeNull();
  });
});

describe('request shaping', () => {
  it('rewrites only the top-level model, every other byte kept', () => {
    const body = '{ "messages" : [{"role":"user","content":"model \\"x\\"","model":"inner"}],\n  "model"  :  "gpt-4o" , "n":1, "meta":{"model":"keep"}}';
    expect(rewriteModel(Buffer.from(body), 'llama3.1:8b').toString()).toBe(body.replace('"gpt-4o"', '"llama3.1:8b"'));
    // An escaped key is the same key for a JSON parser; the new name is JSON-escaped.
    const escaped = '{"mod\\u0065l":"a","stream":true}';
    expect(JSON.parse(rewriteModel(Buffer.from(escaped), 'b"c').toString())).toEqual({ model: 'b"c', stream: true });
    const multibyte = '{"messages":[{"role":"user","content":"héllo ✓ 😀"}],"model":"m"}';
    expect(rewriteModel(Buffer.from(multibyte), 'n').toString()).toBe(multibyte.replace('"m"}', '"n"}'));
    for (const unchanged of ['[{"model":"a"}]', '{"model":3}', '{"other":"a"}', '', '{"model":"unterminated']) {
      expect(rewriteModel(Buffer.from(unchanged), 'z').toString()).toBe(unchanged);
    }
  });

  it('Azure: deployment URLs with api-version for deployment paths, /openai/... otherwise; others: the base URL', () => {
    const config = loadProvidersFile(EXAMPLE, ENV)!;
    const azure = config.providers.get('azure')!;
    expect(providerUrl(azure, '/chat/completions', 'gpt-4o')).toBe('https://my-resource.openai.azure.com/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21');
    expect(providerUrl(azure, '/embeddings', 'unmapped-model')).toBe('https://my-resource.openai.azure.com/openai/deployments/unmapped-model/embeddings?api-version=2024-10-21');
    expect(providerUrl(azure, '/models?limit=2', undefined)).toBe('https://my-resource.openai.azure.com/openai/models?limit=2&api-version=2024-10-21');
    expect(providerUrl(azure, '/responses', 'gpt-4o')).toBe('https://my-resource.openai.azure.com/openai/responses?api-version=2024-10-21');
    // There the body names the deployment; on deployment paths the URL does and the body keeps the model.
    expect([bodyModel(azure, '/responses', 'gpt-4o'), bodyModel(azure, '/chat/completions', 'gpt-4o'), bodyModel(azure, '/responses', 'other')]).toEqual(['gpt-4o-prod', 'gpt-4o', 'other']);
    expect(bodyModel(config.providers.get('vllm')!, '/responses', 'gpt-4o')).toBe('gpt-4o');
    expect(providerUrl(config.providers.get('vllm')!, '/chat/completions', 'x')).toBe('http://vllm.internal:8000/v1/chat/completions');
  });
});

describe('attempts: retries and fallback', () => {
  const provider = (name: string): ProviderConfig => ({ name, kind: 'openai', baseUrl: `http://${name}.test/v1`, deployments: {}, retry: {} });
  const retry = { maxRetries: 2, initialDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 5000 };
  const plan: AttemptPlan = { targets: [{ target: { provider: 'a' }, provider: provider('a'), retry }, { target: { provider: 'b', model: 'm2' }, provider: provider('b'), retry }] };
  const answer = (status: number, headers: Record<string, string> = {}): AttemptOutcome => ({
    response: { statusCode: status, headers, body: new PassThrough() } as unknown as Dispatcher.ResponseData,
  });
  const refused: AttemptOutcome = { error: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), kind: 'connect_error' };

  /** Runs the plan against scripted outcomes; returns what was sent where, the waits, retries and fallbacks. */
  async function run(script: AttemptOutcome[]) {
    const sent: string[] = [];
    const waits: number[] = [];
    const events: string[] = [];
    const outcome = await runAttempts(plan, {
      send: async (t) => {
        sent.push(t.provider.name);
        const next = script.shift();
        if (!next) throw new Error('script exhausted');
        return next;
      },
      timing: { sleep: async (ms) => void waits.push(ms), random: () => 1 },
      signal: new AbortController().signal,
      now: () => 0,
      onRetry: (p) => events.push(`retry:${p}`),
      onFallback: (from, to) => events.push(`fallback:${from}->${to}`),
    });
    return { outcome, sent, waits, events, left: script.length };
  }
  const statusOf = (o: AttemptOutcome) => ('response' in o ? o.response.statusCode : o.kind);

  it('429 with Retry-After, then success: waits what it asks', async () => {
    const r = await run([answer(429, { 'retry-after': '2' }), answer(200)]);
    expect([statusOf(r.outcome), r.sent, r.waits, r.events]).toEqual([200, ['a', 'a'], [2000], ['retry:a']]);
  });

  it('5xx: exponential backoff, then the next target once the retries are used up', async () => {
    const r = await run([answer(500), answer(502), answer(503), answer(200)]);
    expect([statusOf(r.outcome), r.sent, r.waits, r.events]).toEqual([200, ['a', 'a', 'a', 'b'], [100, 200], ['retry:a', 'retry:a', 'fallback:a->b']]);
  });

  it('a Retry-After past the cap leaves the target at once', async () => {
    const r = await run([answer(429, { 'retry-after': '60' }), answer(200)]);
    expect([statusOf(r.outcome), r.sent, r.waits]).toEqual([200, ['a', 'b'], []]);
  });

  it('connection refused is retried and fallen back from; every attempt failing returns the last failure', async () => {
    const r = await run([refused, refused, refused, answer(503), answer(503), answer(429)]);
    expect([statusOf(r.outcome), r.sent, r.waits]).toEqual([429, ['a', 'a', 'a', 'b', 'b', 'b'], [100, 200, 100, 200]]);
    const t = await run([answer(500), answer(500), answer(500), refused, refused, refused]);
    expect(statusOf(t.outcome)).toBe('connect_error');
  });

  it('a client gone during the wait stops everything; the pending answer is discarded', async () => {
    const pending = answer(503);
    const body = (pending as { response: Dispatcher.ResponseData }).response.body;
    const abort = new AbortController();
    const sent: string[] = [];
    const run = runAttempts(plan, {
      send: async (t) => {
        sent.push(t.provider.name);
        return pending;
      },
      timing: {
        sleep: (_ms, signal) => new Promise((_resolve, reject) => (signal.aborted ? reject(signal.reason) : signal.addEventListener('abort', () => reject(signal.reason)))),
        random: () => 1,
      },
      signal: abort.signal,
      now: () => 0,
    });
    abort.abort(new Error('client disconnected'));
    await expect(run).rejects.toThrow('client disconnected');
    expect([sent, body.destroyed]).toEqual([['a'], true]);
  });

  it('a 4xx other than 429, or a timeout, is final: no retry, no fallback', async () => {
    const r = await run([answer(400), answer(200)]);
    expect([statusOf(r.outcome), r.sent, r.left]).toEqual([400, ['a'], 1]);
    const t = await run([{ error: new Error('headers timeout'), kind: 'timeout' }, answer(200)]);
    expect([statusOf(t.outcome), t.sent]).toEqual(['timeout', ['a']]);
  });
});
