import OpenAI from 'openai';
import { startDetectionServer, type StartedDetectionServer } from '../../src/detection/server';
import { startFakeSseUpstream, type FakeSseUpstream } from '../fakes/fake-sse-upstream';
import { pgliteTarget } from '../helpers/databases';
import { startTestServices, type TestServices } from '../helpers/services';
import { TcpProxy } from '../helpers/tcp-proxy';

/**
 * Admission control of detection work (DETECTION_MAX_ACTIVE 2, DETECTION_MAX_QUEUED 2), end to end:
 * the real detection service over gRPC behind a TCP proxy that can stall (so detection work stays in
 * flight for as long as the test wants, without timing anything), the real gateway, a fake SSE
 * upstream. Requests that find the queue full get 503 service_unavailable `detection_overloaded` with
 * Retry-After before anything reaches the upstream; admitted ones (queued included) and a stream
 * admitted earlier (whose later chunks queue even past the bound) complete, byte for byte, scanned to
 * their last character. No stream is cut. The sensor shares the queue (one per process).
 */

const EMAIL = 'ops-lead@acme-corp.com';
const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-adm', object: 'chat.completion.chunk', created: 1_763_800_000, model: 'm', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
/** A stream whose last text event carries an e-mail address (output detector pii/email, action log). */
const PIECES = [
  chunk({ role: 'assistant', content: '' }),
  chunk({ content: 'Here is the answer you asked for. ' }),
  chunk({ content: 'It has a few harmless sentences, '.repeat(12) }),
  chunk({ content: `and ends with a contact: ${EMAIL}` }),
  `${chunk({}, 'stop')}data: [DONE]\n\n`,
];
const EXPECTED = PIECES.join('');

describe('detection admission: bounded queue, 503 with Retry-After, no half-scanned stream', () => {
  let detection: StartedDetectionServer;
  let proxy: TcpProxy;
  let upstream: FakeSseUpstream;
  let svc: TestServices;
  const auth = () => ({ authorization: `Bearer ${svc.apiKey}`, 'content-type': 'application/json' });

  beforeAll(async () => {
    detection = await startDetectionServer({ address: '127.0.0.1:0' });
    proxy = new TcpProxy('127.0.0.1', detection.port);
    await proxy.start();
    upstream = await startFakeSseUpstream();
    svc = await startTestServices(pgliteTarget, {
      services: ['gateway', 'sensor'],
      env: {
        DETECTION_ADDRESS: `127.0.0.1:${proxy.port}`,
        DETECTION_MAX_ACTIVE: '2',
        DETECTION_MAX_QUEUED: '2',
        // Work held at the stalled proxy must not time out while the test looks at the queue.
        DETECTION_TIMEOUT_MS: '60000',
        OPENAI_BASE_URL: upstream.url,
        // The sensor shares the gateway's queue; its refused requests never reach this upstream.
        ANTHROPIC_BASE_URL: upstream.url.replace(/\/v1$/, ''),
      },
    });
    const policies = (await (await fetch(`${svc.gatewayUrl}/v1/policies/?is_default=true`, { headers: auth() })).json()) as { results: Array<{ id: string }> };
    const patched = await fetch(`${svc.gatewayUrl}/v1/policies/${policies.results[0]!.id}/`, {
      method: 'PATCH',
      headers: auth(),
      body: JSON.stringify({ output_detectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'log' }] }),
    });
    expect(patched.status).toBe(200);
  });

  afterAll(async () => {
    proxy?.unstall();
    await svc?.dispose();
    await upstream?.close();
    await proxy?.stop();
    await detection?.close(1000);
  });

  const admissionState = async () => {
    const health = (await (await fetch(`${svc.gatewayUrl}/health`)).json()) as { detection_admission: { active: number; queued: number } };
    return health.detection_admission;
  };
  /** Polls /health until the admission state satisfies `ok` (never a timing assertion: jest's timeout bounds it). */
  const until = async (ok: (s: { active: number; queued: number }) => boolean) => {
    for (;;) {
      const state = await admissionState();
      if (ok(state)) return state;
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  /** A streamed chat completion of its own script (model = script name); resolves with status, headers and the whole body. */
  const send = async (model: string, gate?: Promise<void>) => {
    upstream.scripts.set(model, { pieces: PIECES.map((p) => Buffer.from(p)), gate });
    const res = await fetch(`${svc.gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: auth(),
      body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: `hello from ${model}` }] }),
    });
    return { res, body: res.text() };
  };

  it('queues up to the bound, refuses the overflow with 503 + Retry-After before the upstream, and completes every admitted stream', async () => {
    const warm = await send('warm-up');
    expect(warm.res.status).toBe(200);
    expect(await warm.body).toBe(EXPECTED);

    // A stream admitted before the overload, paused by its upstream after its first event.
    let resume!: () => void;
    const early = await send('early', new Promise<void>((r) => (resume = r)));
    expect(early.res.status).toBe(200);

    proxy.stall();
    const a = send('a');
    const b = send('b');
    await until((s) => s.active === 2);
    const c = send('c');
    const d = send('d');
    await until((s) => s.queued === 2);

    // The queue is full: a new request is refused at once, through the official client (no retries).
    const client = new OpenAI({ apiKey: svc.apiKey, baseURL: `${svc.gatewayUrl}/v1`, maxRetries: 0 });
    upstream.scripts.set('refused', { pieces: PIECES.map((p) => Buffer.from(p)) });
    const refused = await client.chat.completions.create({ model: 'refused', stream: true, messages: [{ role: 'user', content: 'hi' }] }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    const apiError = refused as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.status).toBe(503);
    expect(apiError.headers?.get('retry-after')).toBe('1');
    expect(apiError.error).toMatchObject({ type: 'service_unavailable', code: 'detection_overloaded', details: { retry_after: 1 } });

    // The admitted stream's later text still gets its turn: queued past the bound, not refused.
    resume();
    await until((s) => s.queued === 3);
    const again = await send('refused-too');
    expect(again.res.status).toBe(503);
    expect(again.res.headers.get('retry-after')).toBe('1');
    expect(JSON.parse(await again.body)).toEqual({
      error: { message: 'Detection is at capacity: retry later', type: 'service_unavailable', code: 'detection_overloaded', details: { retry_after: 1 } },
    });
    // The sensor's input scan goes through the same queue: refused too, in the messages-API envelope.
    const sensor = await fetch(`${svc.sensorUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-svc-key': svc.apiKey, 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'refused-sensor', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(sensor.status).toBe(503);
    expect(sensor.headers.get('retry-after')).toBe('1');
    expect(await sensor.json()).toMatchObject({ type: 'error', error: { type: 'service_unavailable', code: 'detection_overloaded' } });
    expect(upstream.received).not.toContain('refused');
    expect(upstream.received).not.toContain('refused-too');
    expect(upstream.received).not.toContain('refused-sensor');

    proxy.unstall();
    const admitted = { early, a: await a, b: await b, c: await c, d: await d };
    for (const [name, stream] of Object.entries(admitted)) {
      expect([name, stream.res.status]).toEqual([name, 200]);
      // Whole, byte for byte: nothing cut, no blocked tail.
      expect([name, await stream.body]).toEqual([name, EXPECTED]);
    }
    expect(await admissionState()).toMatchObject({ active: 0, queued: 0 });

    // Scanned to the last character: each admitted stream's audit event has the e-mail of its last text event.
    await svc.running.audit!.flush();
    const events = (await (await fetch(`${svc.gatewayUrl}/v1/events/?limit=100`, { headers: auth() })).json()) as {
      results: Array<{ model: string; response_status: number; findings: Array<{ type: string; matches: Array<{ path: string }> }> }>;
    };
    for (const name of Object.keys(admitted)) {
      const event = events.results.find((e) => e.model === name);
      expect([name, event?.response_status]).toEqual([name, 200]);
      const email = event?.findings.find((f) => f.type === 'pii/email');
      expect([name, email?.matches.some((m) => m.path.includes('content'))]).toEqual([name, true]);
    }
    const refusedEvents = events.results.filter((e) => e.model.startsWith('refused'));
    expect(refusedEvents.map((e) => e.response_status)).toEqual([503, 503, 503]);
  }, 60_000);
});
