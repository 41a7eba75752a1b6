import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { EmailDetector } from '../../../src/detection/detectors/pii/email-detector';
import { DetectorRegistry, listDetectorTypes } from '../../../src/detection/registry';
import { startDetectionServer, type DetectionLogger, type StartedDetectionServer } from '../../../src/detection/server';
import { createDetectionClient, type DetectionClient } from '../../../src/shared/detection-client';
import { DETECTOR_CATALOG } from '../../../src/shared/detector-catalog';
import type { DetectionPolicy, Direction } from '../../../src/shared/policy';
import { rejectionOf } from '../../helpers/rejection';
import {
  DETECTION_MAX_TEXT_BYTES,
  detectionMethod,
  type ProtoDetectRequest,
  type ProtoDetectResponse,
} from '../../../src/shared/proto';

const policy = (overrides: Partial<DetectionPolicy> = {}): DetectionPolicy => ({
  cacheKey: 'policy-1:v1',
  policyMode: 'IO',
  inputDetectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'block' }],
  outputDetectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'log' }],
  allowList: { entries: [], match_type: 'contains' },
  denyList: { entries: [], match_type: 'contains' },
  customDetectors: [],
  ...overrides,
});

function recordingLogger() {
  const errors: Array<{ obj: object; msg?: string }> = [];
  const logger: DetectionLogger = { info: () => undefined, warn: () => undefined, error: (obj, msg) => errors.push({ obj, msg }) };
  return { logger, errors };
}

describe('detection gRPC server + detection client', () => {
  let started: StartedDetectionServer;
  let client: DetectionClient;
  const { logger, errors } = recordingLogger();

  beforeAll(async () => {
    started = await startDetectionServer({ address: '127.0.0.1:0', logger });
    client = createDetectionClient({ address: `127.0.0.1:${started.port}`, timeoutMs: 5000 });
  });

  afterAll(async () => {
    client.close();
    await started.close(1000);
  });

  it('binds a real port', () => {
    expect(started.port).toBeGreaterThan(0);
  });

  it('Detect finds an email and blocks per the policy, spans into the original text', async () => {
    const text = 'Please write to jane.doe@corp.io about it';
    const result = await client.detect({ text, direction: 'input', policy: policy() });
    expect(result.blocked).toBe(true);
    expect(result.scanned).toBe(true);
    expect(result.allowListed).toBe(false);
    expect(result.categories).toEqual([{ type: 'pii/email', confidence: 0.95, action: 'block' }]);
    expect(result.findings).toHaveLength(1);
    expect(text.slice(result.findings[0]?.start, result.findings[0]?.end)).toBe('jane.doe@corp.io');
    expect(result.findings[0]?.signal).toBe('signature:pii/email'); // proto Finding.signal over the wire
    expect(result.outcomes).toEqual([
      { type: 'pii/email', status: 'ok', message: '', elapsedMs: expect.any(Number), failMode: 'closed' },
    ]);
    expect(result.blockReason).toContain('pii/email');
    expect(result.elapsedMs).toBeGreaterThanOrEqual(0);
  });

  it('clean text has no category and is not blocked', async () => {
    const result = await client.detect({ text: 'The weather is nice today.', direction: 'output', policy: policy() });
    expect(result).toMatchObject({ blocked: false, scanned: true, categories: [], findings: [], blockReason: '' });
  });

  it('reports custom and deny categories over the wire', async () => {
    const result = await client.detect({
      text: 'ticket TCK-7 mentions project nightjar',
      direction: 'input',
      failMode: 'open',
      policy: policy({
        inputDetectors: [],
        denyList: { entries: ['NIGHTJAR'], match_type: 'contains' },
        customDetectors: [{ name: 'ticket', pattern: 'TCK-\\d+', action: 'alert' }],
      }),
    });
    expect(result.categories).toEqual([
      { type: 'deny_list', confidence: 1, action: 'block' },
      { type: 'custom/ticket', confidence: 1, action: 'alert' },
    ]);
    expect(result.outcomes).toEqual([]);
  });

  it('reports a configured but unimplemented detector as unavailable over the wire', async () => {
    const registry = new DetectorRegistry(new Map([['pii/email', () => new EmailDetector()]]));
    const own = await startDetectionServer({ address: '127.0.0.1:0', registry });
    const ownClient = createDetectionClient({ address: `127.0.0.1:${own.port}`, timeoutMs: 5000 });
    try {
      const result = await ownClient.detect({
        text: 'x',
        direction: 'input',
        failMode: 'open',
        policy: policy({ inputDetectors: [{ detector_type: 'jailbreak', threshold: 'L1', action: 'block' }] }),
      });
      expect(result.outcomes).toEqual([
        { type: 'jailbreak', status: 'unavailable', message: expect.stringContaining('not implemented'), elapsedMs: 0, failMode: 'open' },
      ]);
      expect(result.blocked).toBe(false);
    } finally {
      ownClient.close();
      await own.close(500);
    }
  });

  it('health Check says SERVING', async () => {
    await expect(client.checkHealth()).resolves.toBe(true);
  });

  it('ListDetectorTypes lists the catalog (the 24 spec types and any documented additions)', async () => {
    const types = await client.listDetectorTypes();
    expect(types.map((t) => t.value)).toEqual(DETECTOR_CATALOG.map((d) => d.value));
    expect(types.length).toBeGreaterThanOrEqual(24);
    expect(types.find((t) => t.value === 'pii/email')).toEqual({
      value: 'pii/email',
      label: 'Email Address',
      category: 'data_leakage_prevention',
      implemented: true,
    });
    expect(types.filter((t) => t.implemented).map((t) => t.value)).toEqual(
      listDetectorTypes().filter((t) => t.implemented).map((t) => t.value),
    );
  });

  it('an invalid direction is an invalid_request with the server message', async () => {
    const err = await rejectionOf(client.detect({ text: 'x', direction: 'sideways' as Direction, policy: policy() }));
    expect(err).toMatchObject({ type: 'invalid_request', status: 400, code: 'invalid_direction' });
    expect(err.message).toContain('direction must be');
  });

  it('a custom pattern RE2 rejects is an invalid_request naming it', async () => {
    const bad = policy({ customDetectors: [{ name: 'broken', pattern: '(?<=x)y', action: 'block' }] });
    const err = await rejectionOf(client.detect({ text: 'xy', direction: 'input', policy: bad }));
    expect(err).toMatchObject({ type: 'invalid_request', code: 'invalid_pattern' });
    expect(err.message).toContain('custom detector "broken"');
  });

  it('text over 10 MiB is an invalid_request (client-side check)', async () => {
    const text = 'a'.repeat(DETECTION_MAX_TEXT_BYTES + 1);
    const err = await rejectionOf(client.detect({ text, direction: 'input', policy: policy() }));
    expect(err).toMatchObject({ type: 'invalid_request', code: 'text_too_large' });
  });

  it('the server itself answers INVALID_ARGUMENT to text over 10 MiB and to DIRECTION_UNSPECIFIED', async () => {
    const raw = new grpc.Client(`127.0.0.1:${started.port}`, grpc.credentials.createInsecure(), {
      'grpc.max_send_message_length': 16 * 1024 * 1024,
    });
    const method = detectionMethod<Partial<ProtoDetectRequest>, ProtoDetectResponse>('Detect');
    const rawDetect = (req: Partial<ProtoDetectRequest>) =>
      new Promise<grpc.ServiceError | null>((resolve) => {
        raw.makeUnaryRequest(method.path, method.requestSerialize, method.responseDeserialize, req, { deadline: Date.now() + 5000 }, (err) =>
          resolve(err),
        );
      });
    try {
      const big = await rawDetect({ text: 'a'.repeat(DETECTION_MAX_TEXT_BYTES + 1), direction: 'DIRECTION_INPUT' });
      expect(big?.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(big?.details).toContain('text is larger than');
      const unspecified = await rawDetect({ text: 'x', direction: 'DIRECTION_UNSPECIFIED' });
      expect(unspecified?.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(unspecified?.metadata.get('x-error-code')).toEqual(['invalid_direction']);
      expect(await rawDetect({ text: 'x', direction: 'DIRECTION_OUTPUT' })).toBeNull();
    } finally {
      raw.close();
    }
  });

  it('serves reflection (grpc.reflection.v1) listing the detection and health services', async () => {
    const reflectionProto = path.join(path.dirname(require.resolve('@grpc/reflection')), '..', 'proto', 'grpc', 'reflection', 'v1', 'reflection.proto');
    const def = protoLoader.loadSync(reflectionProto, { keepCase: true, defaults: true, oneofs: true });
    const Reflection = (grpc.loadPackageDefinition(def).grpc as grpc.GrpcObject).reflection as grpc.GrpcObject;
    const Ctor = (Reflection.v1 as grpc.GrpcObject).ServerReflection as grpc.ServiceClientConstructor;
    const reflection = new Ctor(`127.0.0.1:${started.port}`, grpc.credentials.createInsecure());
    type ListReply = { list_services_response?: { service: Array<{ name: string }> } };
    const open = reflection.ServerReflectionInfo;
    if (!open) throw new Error('reflection client has no ServerReflectionInfo');
    const services = await new Promise<string[]>((resolve, reject) => {
      const stream = open.call(reflection, { deadline: Date.now() + 5000 }) as grpc.ClientDuplexStream<object, ListReply>;
      stream.on('data', (msg: ListReply) => {
        resolve((msg.list_services_response?.service ?? []).map((svc) => svc.name));
        stream.end();
      });
      stream.on('error', reject);
      stream.write({ list_services: '' });
    });
    reflection.close();
    expect(services).toEqual(expect.arrayContaining(['detection.v1.DetectionService', 'grpc.health.v1.Health']));
  });

  it('logged no error for any of the rejected requests above (they are client errors)', () => {
    expect(errors).toEqual([]);
  });
});

describe('detection server failure modes', () => {
  it('masks unexpected errors as INTERNAL (client: 503 detection_unavailable) and logs the real one', async () => {
    class BrokenRegistry extends DetectorRegistry {
      override listDetectorTypes(): never {
        throw new Error('database password is hunter2');
      }
    }
    const { logger, errors } = recordingLogger();
    const server = await startDetectionServer({ address: '127.0.0.1:0', logger, registry: new BrokenRegistry(new Map()) });
    const client = createDetectionClient({ address: `127.0.0.1:${server.port}`, timeoutMs: 2000 });
    try {
      const err = await rejectionOf(client.listDetectorTypes());
      expect(err).toMatchObject({ type: 'internal_error', status: 503, code: 'detection_unavailable', message: 'Detection service unavailable' });
      const cause = err.cause as grpc.ServiceError;
      expect(cause.code).toBe(grpc.status.INTERNAL);
      expect(cause.details).not.toContain('hunter2');
      expect(errors).toHaveLength(1);
      expect(String((errors[0]?.obj as { err: Error }).err.message)).toContain('hunter2');
    } finally {
      client.close();
      await server.close(500);
    }
  });

  it('a stopped server makes the client unhealthy and detect a 503 detection_unavailable', async () => {
    const server = await startDetectionServer({ address: '127.0.0.1:0' });
    const client = createDetectionClient({ address: `127.0.0.1:${server.port}`, timeoutMs: 1000 });
    try {
      await expect(client.checkHealth()).resolves.toBe(true);
      await server.close(500);
      await expect(client.checkHealth()).resolves.toBe(false);
      const err = await rejectionOf(client.detect({ text: 'x', direction: 'input', policy: policy() }));
      expect(err).toMatchObject({ type: 'internal_error', status: 503, code: 'detection_unavailable' });
    } finally {
      client.close();
    }
  });
});

describe('request ids across the gRPC hop', () => {
  let started: StartedDetectionServer;
  let client: DetectionClient;
  const warnings: Array<Record<string, unknown>> = [];
  beforeAll(async () => {
    const logger: DetectionLogger = { info: () => undefined, warn: (obj) => warnings.push(obj as Record<string, unknown>), error: () => undefined };
    started = await startDetectionServer({ address: '127.0.0.1:0', logger });
    client = createDetectionClient({ address: `127.0.0.1:${started.port}`, timeoutMs: 5000 });
  });
  afterAll(async () => {
    client.close();
    await started.close(1000);
  });

  it("the detection service's lines about a call carry the caller's request id (Detect and DetectStream); an invalid one is not sent", async () => {
    const sideways = 'sideways' as Direction;
    await rejectionOf(client.detect({ text: 'x', direction: sideways, policy: policy(), requestId: 'gw-req-1' }));
    const stream = client.detectStream({ direction: sideways, policy: policy(), requestId: 'gw-stream-1' });
    await rejectionOf(stream.end());
    await rejectionOf(client.detect({ text: 'x', direction: sideways, policy: policy(), requestId: 'bad id\r\nx-injected: 1' }));
    await rejectionOf(client.detect({ text: 'x', direction: sideways, policy: policy() }));
    expect(warnings).toEqual([
      { method: 'Detect', code: 'invalid_direction', requestId: 'gw-req-1' },
      { method: 'DetectStream', code: 'invalid_direction', requestId: 'gw-stream-1' },
      { method: 'Detect', code: 'invalid_direction' },
      { method: 'Detect', code: 'invalid_direction' },
    ]);
  });
});
