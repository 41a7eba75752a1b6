import { existsSync } from 'node:fs';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai';
import { pgliteTarget } from '../helpers/databases';
import { MAIN, run, waitFor, type Proc } from '../helpers/main-process';
import { freePort } from '../helpers/redis-server';
import { postJson, startTestServices, type TestServices } from '../helpers/services';

/**
 * The detection service killed (SIGKILL of its process: `node dist/main.js detection`) under traffic,
 * then started again on the same address. Mid-stream the answer ends filtered (never unscanned text);
 * mid-JSON the answer is withheld (503); while it is down every traffic route answers 503
 * detection_unavailable and /health 503; after the restart traffic recovers without restarting the
 * gateway or the sensor.
 */
const WORDS = Array.from({ length: 120 }, (_, i) => `word${String(i).padStart(3, '0')} `);

async function readStream(res: Response, onFirstChunk: () => void): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let first = true;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text;
    text += decoder.decode(value, { stream: true });
    if (first && text.includes('data:')) {
      first = false;
      onFirstChunk();
    }
  }
}

/** The assistant text of an SSE body of chat.completion.chunk events, and the last finish_reason. */
function streamed(body: string): { text: string; finish: string | null; done: boolean } {
  let text = '';
  let finish: string | null = null;
  for (const line of body.split('\n')) {
    if (!line.startsWith('data: {')) continue;
    const chunk = JSON.parse(line.slice(6)) as { choices: Array<{ delta?: { content?: string }; finish_reason: string | null }> };
    for (const c of chunk.choices) {
      text += c.delta?.content ?? '';
      finish = c.finish_reason ?? finish;
    }
  }
  return { text, finish, done: body.includes('data: [DONE]') };
}

describe('detection killed mid-traffic, then restarted', () => {
  let detection: Proc | undefined;
  let port: number;
  let upstream: FakeOpenAI;
  let svc: TestServices;
  let auth: Record<string, string>;

  const startDetection = async () => {
    detection = run(['detection'], { DETECTION_ADDRESS: `127.0.0.1:${port}`, DATA_DIR: 'memory://detection', DETECTION_METRICS_PORT: '0' });
    await waitFor(() => detection!.stdout().match(/Ready: detection/), 'detection readiness', 60000);
  };
  const killDetection = async () => {
    detection!.child.kill('SIGKILL');
    await detection!.exited;
  };
  const chat = (stream: boolean) =>
    fetch(`${svc.gatewayUrl}/v1/chat/completions`, {
      method: 'POST', headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content: 'Count for me' }] }),
    });

  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error('dist/main.js is missing: run `npm run build` (npm test does it)');
    port = await freePort();
    await startDetection();
    upstream = await startFakeOpenAI();
    upstream.pieces = WORDS;
    svc = await startTestServices(pgliteTarget, {
      services: ['gateway', 'sensor'],
      env: { DETECTION_ADDRESS: `127.0.0.1:${port}`, OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-up', DETECTION_TIMEOUT_MS: '1000', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' },
    });
    auth = { authorization: `Bearer ${svc.apiKey}` };
    const policies = (await (await fetch(`${svc.gatewayUrl}/v1/policies/?is_default=true`, { headers: auth })).json()) as { results: Array<{ id: string }> };
    const patched = await fetch(`${svc.gatewayUrl}/v1/policies/${policies.results[0]!.id}/`, {
      method: 'PATCH', headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ policy_mode: 'IO', input_detectors: [{ detector_type: 'pii/email', action: 'block' }], output_detectors: [{ detector_type: 'pii/email', action: 'block' }] }),
    });
    expect(patched.status).toBe(200);
  }, 120000);
  afterAll(async () => {
    await svc?.dispose();
    await upstream?.close();
    if (detection?.child.exitCode === null) await killDetection();
  });

  it('mid-stream: the stream ends with a content_filter chunk and [DONE]; only scanned text was released', async () => {
    upstream.chunkDelayMs = 25;
    const res = await chat(true);
    expect(res.status).toBe(200);
    const body = await readStream(res, () => void killDetection());
    const s = streamed(body);
    expect(s.finish).toBe('content_filter');
    expect(s.done).toBe(true);
    expect(WORDS.join('').startsWith(s.text)).toBe(true);
    expect(s.text.length).toBeLessThan(WORDS.join('').length);
  }, 60000);

  it('while down: 503 detection_unavailable on /v1/detect, chat and the sensor; /health 503', async () => {
    const detect = await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'hello' }, auth);
    expect(detect.status).toBe(503);
    expect(detect.json).toEqual({ error: { message: expect.any(String), type: 'internal_error', code: 'detection_unavailable' } });
    const res = await chat(false);
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('detection_unavailable');
    const sensor = await postJson(`${svc.sensorUrl}/v1/messages`, { model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }, { 'x-svc-key': svc.apiKey });
    expect(sensor.status).toBe(503);
    expect(sensor.json).toMatchObject({ type: 'error', error: { type: 'internal_error', code: 'detection_unavailable' } });
    const health = await fetch(`${svc.gatewayUrl}/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ status: 'unhealthy', checks: { detection: { status: 'down' } } });
  }, 30000);

  it('restarted: traffic recovers without restarting the gateway (JSON and streams)', async () => {
    await startDetection();
    const started = Date.now();
    let status = 0;
    while (status !== 200 && Date.now() - started < 20000) {
      status = (await postJson(`${svc.gatewayUrl}/v1/detect`, { content: 'hello' }, auth)).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
    upstream.chunkDelayMs = 1;
    // Streams (grpc-js DetectStream, reconnect backoff capped at 1 s) recover within a couple of seconds.
    const unaryBack = Date.now();
    let s = streamed('');
    while (s.finish !== 'stop' && Date.now() - unaryBack < 5000) s = streamed(await (await chat(true)).text());
    expect(s).toEqual({ text: WORDS.join(''), finish: 'stop', done: true });
    expect((await fetch(`${svc.gatewayUrl}/health`)).status).toBe(200);
  }, 60000);

  it('mid-JSON: killed while the upstream answers → 503 detection_unavailable, the answer is withheld', async () => {
    upstream.jsonDelayMs = 800;
    const pending = chat(false);
    await new Promise((r) => setTimeout(r, 300)); // the input scan is done, the upstream is answering
    await killDetection();
    const res = await pending;
    upstream.jsonDelayMs = 0;
    expect(res.status).toBe(503);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ error: { message: expect.any(String), type: 'internal_error', code: 'detection_unavailable' } });
    expect(text).not.toContain('word000');
    await startDetection(); // and back again for afterAll's clean stop
  }, 60000);

  it('audit: the cut stream and the failed calls are recorded with fail_reason detection_unavailable', async () => {
    let events: Array<{ path: string; response_status: number; blocked: boolean; fail_reason: string | null }> = [];
    const deadline = Date.now() + 10000;
    while (Date.now() < deadline) {
      // Every page: the reconnect loop above records one cut stream per attempt, which can push the
      // earlier 503s out of the newest 100.
      events = [];
      for (let offset = 0; offset < 5000; offset += 100) {
        const page = ((await (await fetch(`${svc.gatewayUrl}/v1/events/?limit=100&offset=${offset}`, { headers: auth })).json()) as { results: typeof events }).results;
        events.push(...page);
        if (page.length < 100) break;
      }
      if (events.filter((e) => e.fail_reason === 'detection_unavailable').length >= 4) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const failed = events.filter((e) => e.fail_reason === 'detection_unavailable');
    expect(failed.map((e) => `${e.path} ${e.response_status}`).sort()).toEqual(
      expect.arrayContaining(['/v1/chat/completions 200', '/v1/chat/completions 503', '/v1/detect 503', '/v1/messages 503']),
    );
    // The cut stream answered 200 (its headers were sent) and is recorded blocked, with the reason.
    expect(failed.find((e) => e.response_status === 200)?.blocked).toBe(true);
  }, 30000);
});
