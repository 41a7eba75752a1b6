import v8 from 'node:v8';
import vm from 'node:vm';
import * as grpc from '@grpc/grpc-js';
import { EmailDetector } from '../../../src/detection/detectors/pii/email-detector';
import { DetectorRegistry } from '../../../src/detection/registry';
import { startDetectionServer, type StartedDetectionServer } from '../../../src/detection/server';
import { createDetectionClient, type DetectionClient, type DetectStreamUpdate } from '../../../src/shared/detection-client';
import { AppError } from '../../../src/shared/errors';
import type { DetectionPolicy } from '../../../src/shared/policy';
import {
  detectionStreamMethod,
  detectionPackageDefinition,
  type ProtoDetectStreamRequest,
  type ProtoDetectStreamResponse,
} from '../../../src/shared/proto';

/** Real gRPC server (port 0) and the real client's detectStream(). */

const policy = (overrides: Partial<DetectionPolicy> = {}): DetectionPolicy => ({
  cacheKey: 'stream-policy:v1',
  policyMode: 'IO',
  inputDetectors: [],
  outputDetectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'block' }],
  allowList: { entries: [], match_type: 'contains' },
  denyList: { entries: ['project nightjar'], match_type: 'contains' },
  customDetectors: [],
  ...overrides,
});

function forceGc(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

describe('DetectStream over gRPC', () => {
  let server: StartedDetectionServer;
  let client: DetectionClient;

  beforeAll(async () => {
    const registry = new DetectorRegistry(new Map([['pii/email', () => new EmailDetector()]]));
    server = await startDetectionServer({ address: '127.0.0.1:0', registry });
    client = createDetectionClient({ address: `127.0.0.1:${server.port}`, timeoutMs: 5000 });
  });

  afterAll(async () => {
    client.close();
    await server.close(1000);
  });

  it('finds an address split across two writes once, with offsets into the whole stream', async () => {
    const filler = 'The quick brown fox jumps over the lazy dog. '.repeat(40);
    const text = `${filler}Contact jane.doe@acme-corp.com for access. ${filler}`;
    const at = text.indexOf('jane.doe');
    const stream = client.detectStream({ direction: 'output', policy: policy() });
    const updates: DetectStreamUpdate[] = [];
    const reading = (async () => {
      for await (const u of stream) updates.push(u);
    })();
    await stream.write(text.slice(0, at + 4));
    await stream.write(text.slice(at + 4));
    const last = await stream.end();
    await reading;
    const findings = updates.flatMap((u) => u.findings);
    expect(findings).toEqual([{ type: 'pii/email', confidence: 0.95, start: at, end: at + 22, fired: true, signal: 'signature:pii/email' }]);
    expect(last).toMatchObject({ done: true, blocked: true, releasedUpTo: text.length, received: text.length, scanned: true });
    expect(last.categories).toEqual([{ type: 'pii/email', confidence: 0.95, action: 'block' }]);
    expect(updates[updates.length - 1]).toBe(last);
  });

  it('finds it once when written one character at a time (surrogate pairs kept whole)', async () => {
    const text = `😀 ${'padding words here. '.repeat(80)}bob@corp.io 😀 ${'tail '.repeat(300)}`;
    const seen: DetectStreamUpdate[] = [];
    const stream = client.detectStream({ direction: 'output', policy: policy(), onUpdate: (u) => seen.push(u) });
    for (let i = 0; i < text.length; i++) await stream.write(text.charAt(i)); // splits each emoji in two writes
    const last = await stream.end();
    const findings = seen.flatMap((u) => u.findings);
    expect(findings.map((f) => text.slice(f.start, f.end))).toEqual(['bob@corp.io']);
    expect(last.received).toBe(text.length);
  });

  it('reports a deny-list block while the stream is still open, before any later chunk', async () => {
    const chunk = 'ordinary words in a long answer. '.repeat(2000); // ~66 KB
    const stream = client.detectStream({ direction: 'output', policy: policy() });
    const iterator = stream[Symbol.asyncIterator]();
    await stream.write(chunk);
    const first = await iterator.next();
    expect(first.value).toMatchObject({ blocked: false });
    await stream.write(`${chunk.slice(0, 30_000)} about project nightjar ${chunk.slice(0, 30_000)}`);
    const second = (await iterator.next()).value as DetectStreamUpdate;
    expect(second.blocked).toBe(true);
    expect(second.newCategories).toEqual([{ type: 'deny_list', confidence: 1, action: 'block' }]);
    expect(second.releasedUpTo).toBeLessThan(second.received);
    stream.cancel();
  });

  it('streams 50 MB in 64 KB chunks with bounded server heap', async () => {
    const gc = forceGc();
    const piece = 'Streaming answer text with a number 12345 and words. ';
    const chunk = piece.repeat(Math.ceil(65_536 / piece.length)).slice(0, 65_536);
    const chunks = Math.ceil((50 * 1024 * 1024) / chunk.length);
    gc();
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    let updates = 0;
    const stream = client.detectStream({
      direction: 'output',
      policy: policy(),
      onUpdate: () => {
        updates += 1;
        if (updates % 100 === 0) {
          gc();
          peak = Math.max(peak, process.memoryUsage().heapUsed);
        }
      },
    });
    for (let i = 0; i < chunks; i++) await stream.write(chunk);
    const last = await stream.end();
    gc();
    const after = process.memoryUsage().heapUsed;
    expect(last).toMatchObject({ done: true, blocked: false, received: chunks * chunk.length, releasedUpTo: chunks * chunk.length });
    expect(updates).toBeGreaterThanOrEqual(chunks);
    expect(after - before).toBeLessThan(30 * 1024 * 1024);
    expect(peak - before).toBeLessThan(30 * 1024 * 1024);
  }, 120_000);

  it('an invalid configuration fails the stream with invalid_request', async () => {
    const bad = policy({ customDetectors: [{ name: 'broken', pattern: '(?<=x)y', action: 'block' }] });
    const stream = client.detectStream({ direction: 'output', policy: bad });
    const err = await stream.end().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ type: 'invalid_request', code: 'invalid_pattern' });
    await expect(stream.write('more')).rejects.toBeInstanceOf(AppError);
  });

  it('the server requires start first and only first (raw client)', async () => {
    const method = detectionStreamMethod<Partial<ProtoDetectStreamRequest>, ProtoDetectStreamResponse>('DetectStream');
    const raw = new grpc.Client(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
    const run = (messages: Array<Partial<ProtoDetectStreamRequest>>) =>
      new Promise<{ status: grpc.StatusObject; responses: ProtoDetectStreamResponse[] }>((resolve) => {
        const responses: ProtoDetectStreamResponse[] = [];
        const call = raw.makeBidiStreamRequest(method.path, method.requestSerialize, method.responseDeserialize, {
          deadline: Date.now() + 5000,
        });
        call.on('data', (r: ProtoDetectStreamResponse) => responses.push(r));
        call.on('error', () => undefined);
        call.on('status', (status: grpc.StatusObject) => resolve({ status, responses }));
        for (const m of messages) call.write(m);
        call.end();
      });
    const start = { direction: 'DIRECTION_OUTPUT' as const, config: null, fail_mode: 'FAIL_MODE_OPEN' as const, detector_timeout_ms: 0, window_chars: 0, hold_back_chars: 0 };
    try {
      const noStart = await run([{ text: 'hello' }]);
      expect(noStart.status.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(noStart.status.metadata.get('x-error-code')).toEqual(['stream_start_missing']);
      const twice = await run([{ start }, { start, text: 'x' }]);
      expect(twice.status.code).toBe(grpc.status.INVALID_ARGUMENT);
      const empty = await run([]);
      expect(empty.status.code).toBe(grpc.status.INVALID_ARGUMENT);
      const halfClose = await run([{ start, text: 'a short text' }]);
      expect(halfClose.status.code).toBe(grpc.status.OK);
      expect(halfClose.responses).toHaveLength(1);
      expect(halfClose.responses[0]).toMatchObject({ done: true, released_up_to: 12, received: 12, scanned: true });
    } finally {
      raw.close();
    }
  });

  it('declares DetectStream as a bidirectional streaming method', () => {
    const method = detectionStreamMethod('DetectStream');
    expect(method.path).toBe('/detection.v1.DetectionService/DetectStream');
    expect([method.requestStream, method.responseStream]).toEqual([true, true]);
    expect(detectionPackageDefinition['detection.v1.DetectStreamRequest']).toBeDefined();
  });
});
