import fs from 'node:fs';
import * as net from 'node:net';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation, protoPath as healthProtoPath } from 'grpc-health-check';
import { ERROR_CODE_METADATA_KEY, type DetectResult } from '../shared/detection-client';
import { encodeDetectResult, encodeDetectStreamUpdate } from '../shared/detect-response-wire';
import { invalidRequest, isAppError } from '../shared/errors';
import { REQUEST_ID_METADATA_KEY, validRequestId } from '../shared/request-id';
import {
  DETECTION_MAX_MESSAGE_BYTES,
  DETECTION_SERVICE_NAME,
  DETECTION_SESSION_MEMORY_MB,
  detectionFieldNumber,
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
import { ConfigCache, DEFAULT_CONFIG_CACHE_BYTES, DEFAULT_CONFIG_CACHE_ENTRIES, findField, lengthDelimited, withoutRange, type ConfigLookup } from './config-cache';
import {
  checkStreamChunk,
  fromProtoConfig,
  fromProtoRequest,
  fromProtoStreamStart,
  type ConfigResolver,
} from './request-mapper';
import { StreamScanner, type StreamUpdate } from './stream-scanner';
import type { DetectionMethod, DetectionMetrics } from './metrics';

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
  // No channelz bookkeeping (per-call counters, timestamps and traces nobody reads): ~6% of the server's CPU per Detect.
  'grpc.enable_channelz': 0,
  'grpc.max_receive_message_length': MAX_RECEIVE_MESSAGE_BYTES,
  'grpc.max_send_message_length': DETECTION_MAX_MESSAGE_BYTES,
  'grpc-node.max_session_memory': DETECTION_SESSION_MEMORY_MB,
};

export interface BuildDetectionServerOptions {
  logger?: DetectionLogger;
  registry?: DetectorRegistry;
  /** The compiled-configuration cache (config-cache.ts); default DEFAULT_CONFIG_CACHE_ENTRIES / _BYTES. */
  configCache?: ConfigCache;
  /** Calls, durations and the cache's state (docs/metrics.md); none when absent. */
  metrics?: DetectionMetrics;
}

export interface DetectionServer {
  server: grpc.Server;
  health: HealthImplementation;
  engine: DetectionEngine;
  configCache: ConfigCache;
}

/** A request as the service's deserializers hand it over: the decoded message and where its config comes from. */
interface Decoded<Req> {
  message: Req;
  config: ConfigLookup;
}

const NO_LOOKUP: ConfigLookup = { kind: 'none' };
const DETECT_CONFIG_FIELD = detectionFieldNumber('DetectRequest', 'config');
const STREAM_START_FIELD = detectionFieldNumber('DetectStreamRequest', 'start');
const STREAM_START_CONFIG_FIELD = detectionFieldNumber('DetectStreamStart', 'config');

/**
 * The service definition with request deserializers that consult the config cache before decoding: the
 * `config` field's bytes are found by their tag (no decoding), hashed and looked up; on a hit the message
 * is decoded without them (the cached compiled form is used), otherwise whole, as grpc-js would.
 */
function serviceDefinition(cache: ConfigCache): grpc.ServiceDefinition {
  const detect = detectionServiceDefinition.Detect as grpc.MethodDefinition<ProtoDetectRequest, ProtoDetectResponse>;
  const stream = detectionServiceDefinition.DetectStream as grpc.MethodDefinition<ProtoDetectStreamRequest, ProtoDetectStreamResponse>;
  const decodeDetect = detect.requestDeserialize;
  const decodeStream = stream.requestDeserialize;
  return {
    ...detectionServiceDefinition,
    Detect: {
      ...detect,
      // Written straight from the engine's result (shared/detect-response-wire.ts), not through proto-loader's objects.
      responseSerialize: encodeDetectResult,
      requestDeserialize: (buf: Buffer): Decoded<ProtoDetectRequest> => {
        const range = cache.enabled ? findField(buf, DETECT_CONFIG_FIELD) : undefined;
        if (!range) return { message: decodeDetect(buf), config: NO_LOOKUP };
        const config = cache.lookup(buf, range.valueStart, range.end);
        return { message: decodeDetect(config.kind === 'hit' ? withoutRange(buf, range) : buf), config };
      },
    },
    DetectStream: {
      ...stream,
      responseSerialize: encodeDetectStreamUpdate,
      requestDeserialize: (buf: Buffer): Decoded<ProtoDetectStreamRequest> => {
        const start = cache.enabled ? findField(buf, STREAM_START_FIELD) : undefined;
        const range = start ? findField(buf, STREAM_START_CONFIG_FIELD, start.valueStart, start.end) : undefined;
        if (!start || !range) return { message: decodeStream(buf), config: NO_LOOKUP };
        const config = cache.lookup(buf, range.valueStart, range.end);
        if (config.kind !== 'hit') return { message: decodeStream(buf), config };
        const startWithoutConfig = Buffer.concat([buf.subarray(start.valueStart, range.start), buf.subarray(range.end, start.end)]);
        return { message: decodeStream(Buffer.concat([lengthDelimited(STREAM_START_FIELD, startWithoutConfig), withoutRange(buf, start)])), config };
      },
    },
  };
}

/** The request's compiled configuration through the cache; undefined (the engine's own path) when it is not cacheable. */
function configResolver(cache: ConfigCache, engine: DetectionEngine, lookup: ConfigLookup): ConfigResolver | undefined {
  if (lookup.kind === 'none') return undefined;
  return (config) => cache.resolve(lookup, () => engine.compile(fromProtoConfig(config)));
}

export function buildDetectionServer(options: BuildDetectionServerOptions = {}): DetectionServer {
  const logger = options.logger ?? silentLogger;
  const registry = options.registry ?? defaultRegistry;
  const engine = createDetectionEngine({ registry });
  const configCache = options.configCache ?? new ConfigCache({ maxEntries: DEFAULT_CONFIG_CACHE_ENTRIES, maxBytes: DEFAULT_CONFIG_CACHE_BYTES });
  const server = new grpc.Server(SERVER_OPTIONS);
  const metrics = options.metrics;
  metrics?.watchConfigCache(configCache);

  const detect: grpc.handleUnaryCall<Decoded<ProtoDetectRequest>, DetectResult> = (call, callback) => {
    const { message, config } = call.request;
    const work = async () => engine.evaluate(fromProtoRequest(message, configResolver(configCache, engine, config)));
    respond({ method: 'Detect', logger: withRequestId(logger, call.metadata), callback, work, metrics });
  };
  const listDetectorTypes: grpc.handleUnaryCall<ProtoListDetectorTypesRequest, ProtoListDetectorTypesResponse> = (
    _call,
    callback,
  ) => {
    const work = async () => ({ detector_types: registry.listDetectorTypes() });
    respond({ method: 'ListDetectorTypes', logger, callback, work, metrics });
  };
  const detectStream: grpc.handleBidiStreamingCall<Decoded<ProtoDetectStreamRequest>, StreamUpdate> = (call) =>
    serveStream({ call, engine, logger: withRequestId(logger, call.metadata), metrics, resolver: (lookup) => configResolver(configCache, engine, lookup) });
  server.addService(serviceDefinition(configCache), {
    Detect: detect,
    DetectStream: detectStream,
    ListDetectorTypes: listDetectorTypes,
  });

  const health = new HealthImplementation({ '': 'SERVING', [DETECTION_SERVICE_NAME]: 'SERVING' });
  health.addToServer(server);
  new ReflectionService({ ...detectionPackageDefinition, ...healthPackageDefinition() }).addToServer(server);
  return { server, health, engine, configCache };
}

/** The health proto as shipped by grpc-health-check, so reflection clients can describe it too. */
function healthPackageDefinition(): protoLoader.PackageDefinition {
  const includeDir = path.resolve(path.dirname(healthProtoPath), '..', '..');
  const file = path.relative(includeDir, healthProtoPath);
  return protoLoader.loadSync(file, { ...LOADER_OPTIONS, includeDirs: [includeDir] });
}

/**
 * The server's logger for one call: its lines carry the caller's request id (the gateway's or sensor's
 * HTTP request, sent as `x-request-id` metadata) when there is a valid one.
 */
function withRequestId(logger: DetectionLogger, metadata: grpc.Metadata): DetectionLogger {
  const requestId = validRequestId(metadata.get(REQUEST_ID_METADATA_KEY)[0]);
  if (!requestId) return logger;
  return {
    info: (obj, msg) => logger.info({ ...obj, requestId }, msg),
    warn: (obj, msg) => logger.warn({ ...obj, requestId }, msg),
    error: (obj, msg) => logger.error({ ...obj, requestId }, msg),
  };
}

interface RespondArgs<Res> {
  method: DetectionMethod;
  logger: DetectionLogger;
  callback: grpc.sendUnaryData<Res>;
  work: () => Promise<Res>;
  metrics?: DetectionMetrics;
}

function respond<Res>({ method, logger, callback, work, metrics }: RespondArgs<Res>): void {
  const startedAt = metrics ? performance.now() : 0;
  work().then(
    (response) => {
      metrics?.callEnded(method, startedAt, grpc.status.OK);
      callback(null, response);
    },
    (err: unknown) => {
      const status = toGrpcError(err, method, logger);
      metrics?.callEnded(method, startedAt, status.code ?? grpc.status.UNKNOWN);
      callback(status);
    },
  );
}

type StreamCall = grpc.ServerDuplexStream<Decoded<ProtoDetectStreamRequest>, StreamUpdate>;

interface ServeStreamArgs {
  call: StreamCall;
  engine: DetectionEngine;
  logger: DetectionLogger;
  resolver: (lookup: ConfigLookup) => ConfigResolver | undefined;
  metrics?: DetectionMetrics;
}

/**
 * One DetectStream call. Requests are handled strictly one after another: the call is paused while a
 * request is scanned (so HTTP/2 flow control holds the client back and at most a few chunks are ever
 * buffered), and each response is written with backpressure. A request with `ack` is always answered
 * (by its scan's update, or the running verdict when no scan ran). The call ends with `done` after `final` or
 * after the client half-closes; any error ends it with a status (INVALID_ARGUMENT for bad requests).
 */
function serveStream({ call, engine, logger, resolver, metrics }: ServeStreamArgs): void {
  let scanner: StreamScanner | undefined;
  let over = false;
  // The call is counted once, when it ends (finished, failed or cancelled).
  const startedAt = metrics ? performance.now() : 0;
  let counted = !metrics;
  const ended = (code: number) => {
    if (counted) return;
    counted = true;
    metrics!.streamClosed();
    metrics!.callEnded('DetectStream', startedAt, code);
  };
  metrics?.streamOpened();
  let chain = Promise.resolve();
  const write = (update: StreamUpdate) =>
    new Promise<void>((resolve) => {
      if (call.write(update)) resolve();
      else call.once('drain', () => resolve());
    });
  const finish = async () => {
    if (over) return;
    if (!scanner) throw invalidRequest('the first DetectStreamRequest must carry start', 'stream_start_missing');
    over = true;
    await write(await scanner.finish());
    call.end();
    ended(grpc.status.OK);
  };
  const handle = async ({ message: msg, config }: Decoded<ProtoDetectStreamRequest>) => {
    if (over) return;
    if (!scanner) scanner = new StreamScanner(engine, fromProtoStreamStart(msg.start, resolver(config)));
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
    const status = toGrpcError(err, 'DetectStream', logger);
    ended(status.code ?? grpc.status.UNKNOWN);
    call.emit('error', status);
  };
  const enqueue = (step: () => Promise<void>) => {
    chain = chain.then(step).catch(fail);
    return chain;
  };
  call.on('data', (msg: Decoded<ProtoDetectStreamRequest>) => {
    call.pause();
    void enqueue(() => handle(msg)).then(() => {
      if (!over) call.resume();
    });
  });
  call.on('end', () => void enqueue(finish));
  call.on('cancelled', () => {
    over = true;
    ended(grpc.status.CANCELLED);
  });
  call.on('error', () => {
    over = true;
    ended(grpc.status.UNKNOWN);
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
  /** host:port; port 0 picks a free port (see `port` of the result). Or `unix:/path`. */
  address: string;
  /**
   * A Unix domain socket to listen on as well (co-located callers dial `unix:<path>`): a stale socket
   * file left by a process that is gone is replaced; one a running server answers on is an error.
   */
  socketPath?: string;
}

export interface StartedDetectionServer {
  port: number;
  /** The Unix domain socket it listens on too, when asked to. */
  socketPath?: string;
  server: grpc.Server;
  health: HealthImplementation;
  /** Reports NOT_SERVING (grpc.health.v1) and keeps serving: the start of a graceful stop (SHUTDOWN_DRAIN_DELAY_MS). */
  drain(): void;
  /** Reports NOT_SERVING, lets in-flight calls finish for up to graceMs, then cuts the rest. */
  close(graceMs?: number): Promise<void>;
}

export async function startDetectionServer(options: StartDetectionServerOptions): Promise<StartedDetectionServer> {
  const logger = options.logger ?? silentLogger;
  const { server, health } = buildDetectionServer(options);
  const bind = (address: string) =>
    new Promise<number>((resolve, reject) => {
      server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, boundPort) => (err ? reject(err) : resolve(boundPort)));
    });
  const { socketPath } = options;
  try {
    const port = await bind(options.address);
    if (socketPath !== undefined) {
      await claimSocketPath(socketPath);
      await bind(`unix:${socketPath}`);
    }
    const close = async (graceMs = 5000) => {
      await closeServer({ server, health, graceMs, logger });
      if (socketPath !== undefined) fs.rmSync(socketPath, { force: true });
    };
    const drain = () => notServing(health);
    return { port, ...(socketPath !== undefined && { socketPath }), server, health, drain, close };
  } catch (err) {
    server.forceShutdown();
    throw err;
  }
}

/** Makes `socketPath` free to bind: removes a stale socket file (nothing answers on it); refuses a live one or any other file. */
async function claimSocketPath(socketPath: string): Promise<void> {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(socketPath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    fs.mkdirSync(path.dirname(socketPath), { recursive: true });
    return;
  }
  if (!stat.isSocket()) throw new Error(`detection socket path ${socketPath} exists and is not a socket`);
  const live = await new Promise<boolean>((resolve) => {
    const probe = net.connect({ path: socketPath });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (live) throw new Error(`detection socket ${socketPath} is in use by a running process`);
  fs.rmSync(socketPath, { force: true });
}

interface CloseArgs {
  server: grpc.Server;
  health: HealthImplementation;
  graceMs: number;
  logger: DetectionLogger;
}

function notServing(health: HealthImplementation): void {
  health.setStatus('', 'NOT_SERVING');
  health.setStatus(DETECTION_SERVICE_NAME, 'NOT_SERVING');
}

function closeServer({ server, health, graceMs, logger }: CloseArgs): Promise<void> {
  notServing(health);
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

/** The server options a configuration asks for (the same on the main thread and in the detection worker). */
export function detectionServerOptions(config: import('../shared/config').Config, socketPath: string | undefined): StartDetectionServerOptions {
  return {
    address: config.DETECTION_ADDRESS,
    ...(socketPath !== undefined && { socketPath }),
    configCache: new ConfigCache({ maxEntries: config.DETECTION_CONFIG_CACHE_ENTRIES, maxBytes: DEFAULT_CONFIG_CACHE_BYTES }),
  };
}
