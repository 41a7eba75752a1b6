import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation, protoPath as healthProtoPath } from 'grpc-health-check';
import { ERROR_CODE_METADATA_KEY } from '../shared/detection-client';
import { invalidRequest, isAppError } from '../shared/errors';
import {
  DETECTION_MAX_MESSAGE_BYTES,
  DETECTION_SERVICE_NAME,
  DETECTION_SESSION_MEMORY_MB,
  detectionPackageDefinition,
  detectionServiceDefinition,
  LOADER_OPTIONS,
  type ProtoDetectRequest,
  type ProtoDetectResponse,
  type ProtoDetectStreamRequest,
  type ProtoDetectStreamResponse,
  type ProtoListDetectorTypesRequest,
  type ProtoListDetectorTypesResponse,
} from '../shared/proto';
import { createDetectionEngine, type DetectionEngine } from './engine';
import { defaultRegistry, type DetectorRegistry } from './registry';
import { checkStreamChunk, fromProtoRequest, fromProtoStreamStart, toProtoResponse, toProtoStreamResponse } from './request-mapper';
import { StreamScanner, type StreamUpdate } from './stream-scanner';

/**
 * The detection gRPC service: Detect, DetectStream and ListDetectorTypes, plus the standard grpc.health.v1 health
 * service and server reflection. `buildDetectionServer` wires an unbound server (tests and main decide
 * where it listens); `startDetectionServer` binds it.
 */

/** The subset of a pino logger the server uses (`(obj, msg)` calls only). */
export interface DetectionLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const silentLogger: DetectionLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** Requests may carry up to 10 MiB of text plus configuration; larger messages are refused by gRPC. */
export const MAX_RECEIVE_MESSAGE_BYTES = DETECTION_MAX_MESSAGE_BYTES;

/**
 * Per connection (one HTTP/2 session each): message limits that fit the largest request, and nghttp2's
 * session memory set explicitly (grpc-js would otherwise lift the cap entirely) to the size the
 * clients' in-flight admission stays far below.
 */
const SERVER_OPTIONS: grpc.ServerOptions = {
  'grpc.max_receive_message_length': MAX_RECEIVE_MESSAGE_BYTES,
  'grpc.max_send_message_length': DETECTION_MAX_MESSAGE_BYTES,
  'grpc-node.max_session_memory': DETECTION_SESSION_MEMORY_MB,
};

export interface BuildDetectionServerOptions {
  logger?: DetectionLogger;
  registry?: DetectorRegistry;
}

export interface DetectionServer {
  server: grpc.Server;
  health: HealthImplementation;
  engine: DetectionEngine;
}

export function buildDetectionServer(options: BuildDetectionServerOptions = {}): DetectionServer {
  const logger = options.logger ?? silentLogger;
  const registry = options.registry ?? defaultRegistry;
  const engine = createDetectionEngine({ registry });
  const server = new grpc.Server(SERVER_OPTIONS);

  const detect: grpc.handleUnaryCall<ProtoDetectRequest, ProtoDetectResponse> = (call, callback) => {
    const work = async () => toProtoResponse(await engine.evaluate(fromProtoRequest(call.request)));
    respond({ method: 'Detect', logger, callback, work });
  };
  const listDetectorTypes: grpc.handleUnaryCall<ProtoListDetectorTypesRequest, ProtoListDetectorTypesResponse> = (
    _call,
    callback,
  ) => {
    const work = async () => ({ detector_types: registry.listDetectorTypes() });
    respond({ method: 'ListDetectorTypes', logger, callback, work });
  };
  const detectStream: grpc.handleBidiStreamingCall<ProtoDetectStreamRequest, ProtoDetectStreamResponse> = (call) =>
    serveStream({ call, engine, logger });
  server.addService(detectionServiceDefinition, {
    Detect: detect,
    DetectStream: detectStream,
    ListDetectorTypes: listDetectorTypes,
  });

  const health = new HealthImplementation({ '': 'SERVING', [DETECTION_SERVICE_NAME]: 'SERVING' });
  health.addToServer(server);
  new ReflectionService({ ...detectionPackageDefinition, ...healthPackageDefinition() }).addToServer(server);
  return { server, health, engine };
}

/** The health proto as shipped by grpc-health-check, so reflection clients can describe it too. */
function healthPackageDefinition(): protoLoader.PackageDefinition {
  const includeDir = path.resolve(path.dirname(healthProtoPath), '..', '..');
  const file = path.relative(includeDir, healthProtoPath);
  return protoLoader.loadSync(file, { ...LOADER_OPTIONS, includeDirs: [includeDir] });
}

interface RespondArgs<Res> {
  method: string;
  logger: DetectionLogger;
  callback: grpc.sendUnaryData<Res>;
  work: () => Promise<Res>;
}

function respond<Res>({ method, logger, callback, work }: RespondArgs<Res>): void {
  work().then(
    (response) => callback(null, response),
    (err: unknown) => callback(toGrpcError(err, method, logger)),
  );
}

type StreamCall = grpc.ServerDuplexStream<ProtoDetectStreamRequest, ProtoDetectStreamResponse>;

interface ServeStreamArgs {
  call: StreamCall;
  engine: DetectionEngine;
  logger: DetectionLogger;
}

/**
 * One DetectStream call. Requests are handled strictly one after another: the call is paused while a
 * request is scanned (so HTTP/2 flow control holds the client back and at most a few chunks are ever
 * buffered), and each response is written with backpressure. A request with `ack` is always answered
 * (by its scan's update, or the running verdict when no scan ran). The call ends with `done` after `final` or
 * after the client half-closes; any error ends it with a status (INVALID_ARGUMENT for bad requests).
 */
function serveStream({ call, engine, logger }: ServeStreamArgs): void {
  let scanner: StreamScanner | undefined;
  let over = false;
  let chain = Promise.resolve();
  const write = (update: StreamUpdate) =>
    new Promise<void>((resolve) => {
      if (call.write(toProtoStreamResponse(update))) resolve();
      else call.once('drain', () => resolve());
    });
  const finish = async () => {
    if (over) return;
    if (!scanner) throw invalidRequest('the first DetectStreamRequest must carry start', 'stream_start_missing');
    over = true;
    await write(await scanner.finish());
    call.end();
  };
  const handle = async (msg: ProtoDetectStreamRequest) => {
    if (over) return;
    if (!scanner) scanner = new StreamScanner(engine, fromProtoStreamStart(msg.start));
    else if (msg.start) throw invalidRequest('start is only allowed in the first DetectStreamRequest');
    const text = checkStreamChunk(msg.text);
    const update = text.length > 0 ? await scanner.push(text) : undefined;
    if (update) await write(update);
    else if (msg.ack && !msg.final) await write(scanner.status());
    if (msg.final) await finish();
  };
  const fail = (err: unknown) => {
    if (over) return;
    over = true;
    call.emit('error', toGrpcError(err, 'DetectStream', logger));
  };
  const enqueue = (step: () => Promise<void>) => {
    chain = chain.then(step).catch(fail);
    return chain;
  };
  call.on('data', (msg: ProtoDetectStreamRequest) => {
    call.pause();
    void enqueue(() => handle(msg)).then(() => {
      if (!over) call.resume();
    });
  });
  call.on('end', () => void enqueue(finish));
  call.on('cancelled', () => {
    over = true;
  });
  call.on('error', () => {
    over = true;
  });
}

/** invalid_request → INVALID_ARGUMENT with its message; anything else → INTERNAL, masked, logged. */
function toGrpcError(err: unknown, method: string, logger: DetectionLogger): Partial<grpc.StatusObject> {
  if (isAppError(err) && err.type === 'invalid_request') {
    logger.warn({ method, code: err.code }, 'detection request rejected');
    const metadata = new grpc.Metadata();
    metadata.set(ERROR_CODE_METADATA_KEY, err.code);
    return { code: grpc.status.INVALID_ARGUMENT, details: err.message, metadata };
  }
  logger.error({ method, err }, 'detection request failed');
  return { code: grpc.status.INTERNAL, details: 'Internal error in the detection service' };
}

export interface StartDetectionServerOptions extends BuildDetectionServerOptions {
  /** host:port; port 0 picks a free port (see `port` of the result). */
  address: string;
}

export interface StartedDetectionServer {
  port: number;
  server: grpc.Server;
  health: HealthImplementation;
  /** Reports NOT_SERVING, lets in-flight calls finish for up to graceMs, then cuts the rest. */
  close(graceMs?: number): Promise<void>;
}

export async function startDetectionServer(options: StartDetectionServerOptions): Promise<StartedDetectionServer> {
  const logger = options.logger ?? silentLogger;
  const { server, health } = buildDetectionServer(options);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(options.address, grpc.ServerCredentials.createInsecure(), (err, boundPort) =>
      err ? reject(err) : resolve(boundPort),
    );
  });
  return { port, server, health, close: (graceMs = 5000) => closeServer({ server, health, graceMs, logger }) };
}

interface CloseArgs {
  server: grpc.Server;
  health: HealthImplementation;
  graceMs: number;
  logger: DetectionLogger;
}

function closeServer({ server, health, graceMs, logger }: CloseArgs): Promise<void> {
  health.setStatus('', 'NOT_SERVING');
  health.setStatus(DETECTION_SERVICE_NAME, 'NOT_SERVING');
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      logger.warn({ graceMs }, 'detection service did not drain in time; forcing shutdown');
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      logger.info({}, 'detection service stopped');
      resolve();
    });
  });
}
