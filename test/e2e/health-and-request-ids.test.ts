import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/shared/config';
import { createLogger } from '../../src/shared/logger';
import { startServices, type RunningServices } from '../../src/services';
import { createDetectionClient } from '../../src/shared/detection-client';
import type { DetectionPolicy } from '../../src/shared/policy';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/fake-anthropic';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai';
import { pgliteTarget, postgresBehindProxy, STORAGE_TARGETS, TEST_DATABASE_URL } from '../helpers/databases';
import { MAIN, run, waitFor } from '../helpers/main-process';
import { gqlRequest, type Json } from '../helpers/management-clients';
import { LogCapture, postJson, startTestServices, type TestServices } from '../helpers/services';
import { until } from '../helpers/until';

/**
 * Issue 18 items 4-6: GET /health/live and /health/ready on the gateway and the sensor (ready 503 when
 * detection or storage is unreachable, and from the moment SIGTERM starts the drain), X-Request-Id on every
 * response (the client's valid id echoed, an invalid one replaced), the id in the audit event (REST and
 * GraphQL, filterable) and in every log line of the request, and each service's lines under its own name.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PROVIDER_KEY = 'sk-provider-secret-do-not-log-0123456789';
const CLIENT_ANTHROPIC_KEY = 'sk-ant-client-secret-do-not-log-0123456789';
const NAMES = ['main', 'gateway', 'sensor', 'detection'];

const messagesBody = (content = 'hi') => ({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content }] });

async function getJson(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; json: Json }> {
  const res = await fetch(url, { headers });
  const text = await res.text();
  let json: Json = {};
  try {
    json = JSON.parse(text) as Json;
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, json };
}

const STARTER_POLICY: DetectionPolicy = {
  cacheKey: 'drain-policy:v1',
  policyMode: 'IO',
  inputDetectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'log' }],
  outputDetectors: [],
  allowList: { entries: [], match_type: 'contains' },
  denyList: { entries: [], match_type: 'contains' },
  customDetectors: [],
};

const parsed = (lines: readonly string[]) => lines.map((l) => JSON.parse(l) as Json);

describe.each(STORAGE_TARGETS)('health split, request ids and named logs ($name)', (target) => {
  let svc: TestServices;
  let anthropic: FakeAnthropic;
  let openai: FakeOpenAI;
  const auth = () => ({ authorization: `Bearer ${svc.apiKey}` });
  const sensorHeaders = (extra: Record<string, string> = {}) => ({ 'x-svc-key': svc.apiKey, 'x-api-key': CLIENT_ANTHROPIC_KEY, 'anthropic-version': '2023-06-01', ...extra });

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    openai = await startFakeOpenAI();
    svc = await startTestServices(target, {
      env: { ANTHROPIC_BASE_URL: anthropic.url, OPENAI_BASE_URL: openai.url, OPENAI_API_KEY: PROVIDER_KEY, HEALTH_READY_CACHE_MS: '0' },
    });
  });
  afterAll(async () => {
    await svc?.dispose();
    await anthropic?.close();
    await openai?.close();
  });

  it('keeps /health as it is and adds /health/live and /health/ready on the gateway and the sensor', async () => {
    for (const [base, service] of [
      [svc.gatewayUrl, 'gateway'],
      [svc.sensorUrl, 'sensor'],
    ] as const) {
      const health = await getJson(`${base}/health`);
      expect(health.status).toBe(200);
      expect(health.json).toMatchObject({ status: 'healthy', service, checks: { database: { status: 'up' }, detection: { status: 'up' } } });
      const live = await getJson(`${base}/health/live`);
      expect(live.status).toBe(200);
      expect(live.json).toMatchObject({ status: 'live', service });
      const ready = await getJson(`${base}/health/ready`);
      expect(ready.status).toBe(200);
      expect(ready.json).toMatchObject({ status: 'ready', service, checks: { database: { status: 'up' }, detection: { status: 'up' } } });
      expect(ready.headers.get('x-request-id')).toMatch(UUID);
    }
  });

  it('sends X-Request-Id on every answer (success and errors, gateway and sensor): a valid client id echoed, an invalid one replaced', async () => {
    const answers = [
      await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'hello' }, auth()),
      await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'hello' }, { authorization: 'Bearer svc_sk_wrong' }),
      await postJson(`${svc.gatewayUrl}/v1/detect`, '{"content":', auth()),
      await postJson(`${svc.gatewayUrl}/v1/nothing-here`, {}, auth()),
      await getJson(`${svc.gatewayUrl}/v1/events/%zz`, auth()),
      await postJson(`${svc.sensorUrl}/v1/messages`, messagesBody(), sensorHeaders()),
      await postJson(`${svc.sensorUrl}/v1/messages`, messagesBody(), { 'x-svc-key': 'svc_sk_wrong', 'anthropic-version': '2023-06-01' }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 401, 400, 404, 400, 200, 401]);
    for (const a of answers) expect(a.headers.get('x-request-id')).toMatch(UUID);

    for (const base of [svc.gatewayUrl, svc.sensorUrl]) {
      const echoed = await getJson(`${base}/health/live`, { 'x-request-id': 'client-req.1:A_b-2' });
      expect(echoed.headers.get('x-request-id')).toBe('client-req.1:A_b-2');
      const longest = 'a'.repeat(128);
      expect((await getJson(`${base}/health/live`, { 'x-request-id': longest })).headers.get('x-request-id')).toBe(longest);
      for (const bad of ['a'.repeat(129), 'has space', '<script>', 'semi;colon', 'quote"d']) {
        const res = await getJson(`${base}/nothing`, { 'x-request-id': bad });
        expect(res.status).toBe(404);
        expect(res.headers.get('x-request-id')).toMatch(UUID);
      }
    }
    // An error answer echoes the client's id too.
    const denied = await postJson(`${svc.sensorUrl}/v1/messages`, messagesBody(), { 'x-svc-key': 'svc_sk_wrong', 'anthropic-version': '2023-06-01', 'x-request-id': 'sensor-401' });
    expect(denied.status).toBe(401);
    expect(denied.headers.get('x-request-id')).toBe('sensor-401');
  });

  it('records the request id in the audit event: REST and GraphQL return it and filter by it', async () => {
    const sent = `audit-${target.name}-1`;
    expect((await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'hello' }, { ...auth(), 'x-request-id': sent })).status).toBe(200);
    const sensor = await postJson(`${svc.sensorUrl}/v1/messages`, messagesBody(), sensorHeaders({ 'x-request-id': 'not valid!' }));
    expect(sensor.status).toBe(200);
    const generated = sensor.headers.get('x-request-id')!;
    expect(generated).toMatch(UUID);
    const failed = await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'hello' }, { authorization: 'Bearer svc_sk_wrong', 'x-request-id': `auth-failed-${target.name}` });
    expect(failed.status).toBe(401);

    const byRest = async (id: string) =>
      until(async () => {
        await svc.running.audit!.flush();
        const page = await getJson(`${svc.gatewayUrl}/v1/events/?request_id=${encodeURIComponent(id)}`, auth());
        return page.json.count > 0 ? page : undefined;
      });
    const detect = await byRest(sent);
    expect(detect.status).toBe(200);
    expect(detect.json.count).toBe(1);
    expect(detect.json.results[0]).toMatchObject({ request_id: sent, path: '/v1/detect', response_status: 200 });
    const messages = await byRest(generated);
    expect(messages.json.results).toEqual([expect.objectContaining({ request_id: generated, path: '/v1/messages' })]);
    // Every event carries its id; the filter keeps only the matching one.
    const all = await getJson(`${svc.gatewayUrl}/v1/events/?limit=100`, auth());
    expect(all.json.results.length).toBeGreaterThan(1);
    for (const e of all.json.results) expect(e.request_id).toEqual(expect.any(String));
    // A failed authentication has no organization: its event is in no organization's trail.
    expect((await getJson(`${svc.gatewayUrl}/v1/events/?request_id=auth-failed-${target.name}`, auth())).json.count).toBe(0);
    const [stored] = await svc.running.storage!.query<{ request_id: string }>('SELECT request_id FROM security_events WHERE request_id = $1', [`auth-failed-${target.name}`]);
    expect(stored?.request_id).toBe(`auth-failed-${target.name}`);

    const gql = await gqlRequest(svc.gatewayUrl, svc.apiKey, 'query($id: String) { events(request_id: $id) { count results { request_id path } } }', { id: sent });
    expect(gql.status).toBe(200);
    expect(gql.json).toEqual({ data: { events: { count: 1, results: [{ request_id: sent, path: '/v1/detect' }] } } });
    const none = await gqlRequest(svc.gatewayUrl, svc.apiKey, '{ events(request_id: "no-such-id") { count } }');
    expect(none.json.data.events.count).toBe(0);

    // A filter longer than a request id can be: the spec's envelope, 400.
    const tooLong = await getJson(`${svc.gatewayUrl}/v1/events/?request_id=${'x'.repeat(129)}`, auth());
    expect(tooLong.status).toBe(400);
    expect(tooLong.json).toMatchObject({ error: { type: 'invalid_request', message: expect.any(String) } });
  });

  it('writes every log line of a request with its id and the service name, once each, and never a provider or client key', async () => {
    const id = `logs-${target.name}`;
    const before = svc.logs.lines.length;
    const chat = await postJson(
      `${svc.gatewayUrl}/v1/chat/completions`,
      { model: 'gpt-x', messages: [{ role: 'user', content: 'hello' }] },
      { ...auth(), 'x-request-id': `${id}-chat` },
    );
    expect(chat.status).toBe(200);
    expect(openai.received.at(-1)!.headers.authorization).toBe(`Bearer ${PROVIDER_KEY}`);
    const bad = await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 42 }, { ...auth(), 'x-request-id': `${id}-bad` });
    expect(bad.status).toBe(400);
    // The sensor relays an upstream failure: its own warn line and the completion line, both with the id.
    await anthropic.close();
    const relayed = await postJson(`${svc.sensorUrl}/v1/messages`, messagesBody(), sensorHeaders({ 'x-request-id': `${id}-sensor` }));
    expect(relayed.status).toBeGreaterThanOrEqual(500);
    anthropic = await startFakeAnthropic();

    const lines = await until(async () => {
      const l = svc.logs.lines.slice(before);
      return l.some((x) => x.includes(`${id}-sensor`) && x.includes('request completed')) ? l : undefined;
    });
    const json = parsed(lines);
    for (const l of json) expect(NAMES).toContain(l.name);
    const of = (rid: string) => json.filter((l) => l.requestId === rid);
    expect(of(`${id}-chat`).map((l) => l.name)).toEqual(expect.arrayContaining(['gateway']));
    expect(new Set(of(`${id}-chat`).map((l) => l.name))).toEqual(new Set(['gateway']));
    expect(of(`${id}-bad`).map((l) => l.msg)).toEqual(expect.arrayContaining(['request rejected', 'request completed']));
    expect(new Set(of(`${id}-bad`).map((l) => l.name))).toEqual(new Set(['gateway']));
    expect(of(`${id}-sensor`).length).toBeGreaterThanOrEqual(2);
    expect(new Set(of(`${id}-sensor`).map((l) => l.name))).toEqual(new Set(['sensor']));
    // No line written about these requests lacks the id, and none has a key twice.
    for (const raw of lines.filter((l) => l.includes(id))) {
      expect(raw.split('"requestId":')).toHaveLength(2);
      expect(raw.match(/"name":"(main|gateway|sensor|detection)"/g)).toHaveLength(1);
    }
    const everything = svc.logs.text;
    for (const secret of [PROVIDER_KEY, CLIENT_ANTHROPIC_KEY, svc.apiKey]) expect(everything).not.toContain(secret);
  });
});

describe('GET /health/ready with detection stopped', () => {
  let detection: RunningServices;
  let svc: TestServices;
  beforeAll(async () => {
    const config = loadConfig({ DETECTION_ADDRESS: '127.0.0.1:0', LOG_LEVEL: 'warn', SHUTDOWN_TIMEOUT_MS: '5000' });
    detection = await startServices({ config, services: ['detection'], logger: createLogger({ level: 'warn', destination: new LogCapture() }) });
    svc = await startTestServices(pgliteTarget, {
      services: ['gateway', 'sensor'],
      env: { DETECTION_ADDRESS: detection.detectionAddress!, HEALTH_READY_CACHE_MS: '0', DETECTION_SOCKET: 'off' },
    });
  });
  afterAll(async () => {
    await svc?.dispose();
    await detection?.close();
  });

  it('answers 200 while detection serves, 503 naming detection once it is stopped (live stays 200)', async () => {
    for (const base of [svc.gatewayUrl, svc.sensorUrl]) expect((await getJson(`${base}/health/ready`)).status).toBe(200);
    await detection.close();
    for (const base of [svc.gatewayUrl, svc.sensorUrl]) {
      const ready = await getJson(`${base}/health/ready`);
      expect(ready.status).toBe(503);
      expect(ready.json).toMatchObject({
        status: 'not_ready',
        down: ['detection'],
        reason: expect.stringMatching(/^detection: /),
        checks: { database: { status: 'up' }, detection: { status: 'down' } },
      });
      expect((await getJson(`${base}/health/live`)).status).toBe(200);
    }
  });
});

describe('the detection service during the drain', () => {
  it('answers its gRPC health check NOT_SERVING from the start of the drain while it still serves Detect, then stops', async () => {
    const config = loadConfig({ DETECTION_ADDRESS: '127.0.0.1:0', LOG_LEVEL: 'warn', SHUTDOWN_TIMEOUT_MS: '5000', SHUTDOWN_DRAIN_DELAY_MS: '3000' });
    const detection = await startServices({ config, services: ['detection'], logger: createLogger({ level: 'warn', destination: new LogCapture() }) });
    const client = createDetectionClient({ address: detection.detectionAddress!, timeoutMs: 5000 });
    try {
      expect(await client.checkHealth()).toBe(true);
      const closing = detection.close();
      expect(await client.checkHealth()).toBe(false);
      const verdict = await client.detect({ text: 'mail me: a.b@acme-corp.com', direction: 'input', policy: STARTER_POLICY });
      expect(verdict.categories.map((c) => c.type)).toEqual(['pii/email']);
      await closing;
      await expect(client.detect({ text: 'hello', direction: 'input', policy: STARTER_POLICY })).rejects.toMatchObject({ code: 'detection_unavailable' });
    } finally {
      client.close();
      await detection.close();
    }
  });
});

(TEST_DATABASE_URL ? describe : describe.skip)('GET /health/ready with PostgreSQL unreachable', () => {
  const behindProxy = postgresBehindProxy();
  let svc: TestServices;
  beforeAll(async () => {
    svc = await startTestServices(behindProxy.target, { env: { HEALTH_READY_CACHE_MS: '0', DATABASE_CONNECT_TIMEOUT_MS: '2500', DATABASE_STATEMENT_TIMEOUT_MS: '1500' } });
  });
  afterAll(async () => {
    await behindProxy.state.proxy?.start().catch(() => undefined);
    await svc?.dispose();
    await behindProxy.state.proxy?.stop();
  });

  it('answers 503 naming the database while it is down, 200 again once it is back', async () => {
    for (const base of [svc.gatewayUrl, svc.sensorUrl]) expect((await getJson(`${base}/health/ready`)).status).toBe(200);
    await behindProxy.state.proxy!.stop();
    for (const base of [svc.gatewayUrl, svc.sensorUrl]) {
      const ready = await getJson(`${base}/health/ready`);
      expect(ready.status).toBe(503);
      expect(ready.json).toMatchObject({ status: 'not_ready', down: ['database'], checks: { database: { status: 'down' }, detection: { status: 'up' } } });
      expect((await getJson(`${base}/health/live`)).status).toBe(200);
    }
    await behindProxy.state.proxy!.start();
    const back = await until(async () => {
      const r = await getJson(`${svc.gatewayUrl}/health/ready`);
      return r.status === 200 ? r : undefined;
    }, 15000);
    expect(back.json.status).toBe('ready');
  }, 30000);
});

describe('node dist/main.js all: drain on SIGTERM, named JSON logs', () => {
  let dataDir: string;
  let upstream: FakeAnthropic;
  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error('dist/main.js is missing: run `npm run build` (npm test does it)');
    dataDir = mkdtempSync(join(tmpdir(), 'gw-health-'));
    upstream = await startFakeAnthropic();
  });
  afterAll(async () => {
    await upstream.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers /health/ready 503 from SIGTERM on while it still serves during SHUTDOWN_DRAIN_DELAY_MS, then exits 0', async () => {
    const p = run(['all'], {
      PORT: '0',
      SENSOR_PORT: '0',
      DETECTION_ADDRESS: '127.0.0.1:0',
      DATA_DIR: dataDir,
      ANTHROPIC_BASE_URL: upstream.url,
      LOG_LEVEL: 'info',
      SHUTDOWN_DRAIN_DELAY_MS: '4000',
    });
    const [, key] = await waitFor(() => p.stdout().match(/First project API key \(shown once, store it now\): (svc_sk_\w+)/), 'the bootstrap key');
    const [, gateway, sensor] = await waitFor(() => p.stdout().match(/Ready: gateway (\S+), sensor (\S+), detection/), 'readiness');
    for (const base of [gateway!, sensor!]) expect((await getJson(`${base}/health/ready`)).status).toBe(200);
    const detect = await postJson(`${gateway}/v1/detect`, { content: 'hello' }, { authorization: `Bearer ${key}`, 'x-request-id': 'proc-detect-1' });
    expect(detect.status).toBe(200);

    p.child.kill('SIGTERM');
    await waitFor(() => p.stdout().match(/draining: \/health\/ready answers 503/), 'the drain to start');
    for (const base of [gateway!, sensor!]) {
      const ready = await getJson(`${base}/health/ready`);
      expect(ready.status).toBe(503);
      expect(ready.json).toMatchObject({ status: 'draining' });
      expect((await getJson(`${base}/health/live`)).status).toBe(200);
    }
    // Still serving while the load balancer takes the instance out.
    const during = await postJson(`${sensor}/v1/messages`, messagesBody(), { 'x-svc-key': key!, 'anthropic-version': '2023-06-01', 'x-request-id': 'proc-sensor-1' });
    expect(during.status).toBe(200);
    expect(during.headers.get('x-request-id')).toBe('proc-sensor-1');
    expect(await p.exited).toBe(0);

    // Every stdout line that is JSON is a log line with the service's name; the requests' lines carry their ids.
    const logs = parsed(p.stdout().split('\n').filter((l) => l.startsWith('{')));
    expect(logs.length).toBeGreaterThan(0);
    for (const l of logs) expect(NAMES).toContain(l.name);
    expect(logs.filter((l) => l.requestId === 'proc-detect-1').map((l) => l.name)).toEqual(['gateway']);
    expect(logs.filter((l) => l.requestId === 'proc-sensor-1').map((l) => l.name)).toEqual(['sensor']);
    // The detection worker thread's own lines, and the process's.
    expect(logs.some((l) => l.name === 'detection')).toBe(true);
    expect(logs.some((l) => l.name === 'main' && l.msg === 'shutting down')).toBe(true);
    // The bootstrap key is printed once for the operator (not a log line); no log line carries it.
    for (const l of logs) expect(JSON.stringify(l)).not.toContain(key!);
  }, 60000);
});
