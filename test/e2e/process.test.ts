import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/fake-anthropic';
import { MAIN, run, START, waitFor } from '../helpers/main-process';
import { postJson } from '../helpers/services';

/**
 * The shipped program as an operator runs it: `node dist/main.js …` (built by `npm test` before jest).
 */
const ports = { PORT: '0', SENSOR_PORT: '0', DETECTION_ADDRESS: '127.0.0.1:0' };

beforeAll(() => {
  if (!existsSync(MAIN)) throw new Error('dist/main.js is missing: run `npm run build` (npm test does it)');
});

describe('start-up configuration errors', () => {
  it.each([
    [{ PORT: 'eighty' }, /PORT: PORT must be a number/],
    [{ PORT: '99999' }, /PORT: PORT must be between 0 and 65535/],
    [{ BOOTSTRAP_API_KEY: 'not-a-svc-key' }, /BOOTSTRAP_API_KEY must start with svc_sk_/],
    [{ DETECTION_THREAD: 'maybe' }, /DETECTION_THREAD: DETECTION_THREAD must be true or false/],
  ])('%j stops start-up with exit 1 and a clear message', async (env, message) => {
    const p = run(['all'], env as Record<string, string>);
    expect(await p.exited).toBe(1);
    expect(p.stderr()).toMatch(/^Invalid configuration:/);
    expect(p.stderr()).toMatch(message);
    expect(p.stdout()).not.toMatch(/Ready/);
  });

  it('rejects an unknown command', async () => {
    const p = run(['launch'], {});
    expect(await p.exited).toBe(1);
    expect(p.stderr()).toMatch(/unknown command "launch"/);
  });

  // npm start's launcher (dist/ is current after npm test's build: it compiles nothing and runs main in-process).
  it('npm start (scripts/start.js) runs dist/main.js with its arguments and its exit code', async () => {
    const unknown = run(['launch'], {}, START);
    expect(await unknown.exited).toBe(1);
    expect(unknown.stderr()).toMatch(/unknown command "launch"/);
    expect(unknown.stdout()).not.toMatch(/compiling/);
    const invalid = run(['all'], { PORT: 'eighty' }, START);
    expect(await invalid.exited).toBe(1);
    expect(invalid.stderr()).toMatch(/^Invalid configuration:[\s\S]*PORT must be a number/);
  });
});

describe('node dist/main.js all (the npm start command)', () => {
  let dataDir: string;
  let upstream: FakeAnthropic;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'gw-process-'));
    upstream = await startFakeAnthropic();
  });
  afterAll(async () => {
    await upstream.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('bootstraps once, serves, drains in-flight requests on SIGTERM and exits 0', async () => {
    const env = { ...ports, DATA_DIR: dataDir, ANTHROPIC_BASE_URL: upstream.url };
    const p = run(['all'], env);
    const [, key] = await waitFor(() => p.stdout().match(/First project API key \(shown once, store it now\): (svc_sk_\w+)/), 'the bootstrap key');
    const [, gateway, sensor] = await waitFor(() => p.stdout().match(/Ready: gateway (\S+), sensor (\S+), detection/), 'readiness');

    const found = await postJson(`${gateway}/v1/detect`, { content: 'mail me: a.b@acme-corp.com' }, { authorization: `Bearer ${key}` });
    expect(found.status).toBe(200);
    expect(found.json.categories.map((c: { type: string }) => c.type)).toEqual(['pii/email']);

    // A request in flight when SIGTERM arrives still completes.
    upstream.delayMs = 700;
    const inFlight = postJson(
      `${sensor}/v1/messages`,
      { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
      { 'x-svc-key': key!, 'anthropic-version': '2023-06-01' },
    );
    await waitFor(() => (upstream.received.length > 0 ? ['x'] as unknown as RegExpMatchArray : null), 'the upstream to receive the request');
    p.child.kill('SIGTERM');
    const answered = await inFlight;
    expect(answered.status).toBe(200);
    expect(await p.exited).toBe(0);
    upstream.delayMs = 0;
    await expect(fetch(`${gateway}/health`)).rejects.toThrow();

    // Restart on the same DATA_DIR: same data, no second bootstrap, the old key still works.
    const again = run(['all'], env);
    const [, gateway2] = await waitFor(() => again.stdout().match(/Ready: gateway (\S+),/), 'readiness after restart');
    expect(again.stdout()).not.toMatch(/API key/);
    const still = await postJson(`${gateway2}/v1/detect`, { content: 'hello' }, { authorization: `Bearer ${key}` });
    expect(still.status).toBe(200);
    // last_used_at is coalesced in memory and was flushed by the graceful shutdown.
    const projects = (await (await fetch(`${gateway2}/v1/projects/`, { headers: { authorization: `Bearer ${key}` } })).json()) as {
      results: Array<{ last_used_at: string | null }>;
    };
    expect(projects.results[0]!.last_used_at).toEqual(expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/));
    again.child.kill('SIGINT');
    expect(await again.exited).toBe(0);
  }, 60000);

  it('create-org provisions another organization whose key works', async () => {
    const created = run(['create-org', '--name', 'Acme', '--project', 'Acme app'], { DATA_DIR: dataDir });
    expect(await created.exited).toBe(0);
    const [, key] = created.stdout().match(/API key \(shown once, store it now\): (svc_sk_\w+)/) ?? [];
    expect(key).toMatch(/^svc_sk_[A-Za-z0-9]{40}$/);

    const adminApiKey = 'op_'.padEnd(40, '7');
    const p = run(['gateway'], { ...ports, DATA_DIR: dataDir, DETECTION_ADDRESS: '127.0.0.1:1', ADMIN_API_KEY: adminApiKey });
    const [, gateway] = await waitFor(() => p.stdout().match(/Ready: gateway (\S+)/), 'gateway readiness');
    // While the server holds the embedded database the CLI cannot open it, and says what works meanwhile.
    const refused = run(['create-org', '--name', 'Later'], { DATA_DIR: dataDir });
    expect(await refused.exited).toBe(1);
    expect(refused.stderr()).toMatch(/POST \/v1\/organizations/);
    const viaApi = await postJson(`${gateway}/v1/organizations`, { name: 'Initech' }, { authorization: `Bearer ${adminApiKey}` });
    expect(viaApi.status).toBe(201);
    expect(viaApi.json.project.raw_key).toMatch(/^svc_sk_[A-Za-z0-9]{40}$/);
    // The detection service is not running here: the key authenticates, then detection is reported unavailable.
    const res = await postJson(`${gateway}/v1/detect`, { content: 'hello' }, { authorization: `Bearer ${key}` });
    expect(res.status).toBe(503);
    expect(res.json.error).toMatchObject({ type: 'internal_error', code: 'detection_unavailable' });
    const health = await fetch(`${gateway}/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ status: 'unhealthy', checks: { database: { status: 'up' }, detection: { status: 'down' } } });
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
  }, 60000);
});
