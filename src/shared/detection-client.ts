import * as grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import type { DetectionAdmission } from './detection-admission';
import { decodeDetectResult } from './detect-response-wire';
import { openDetectStream, type DetectStream, type DetectStreamOptions } from './detection-stream';
import { AppError, invalidRequest } from './errors';
import { UnaryChannel } from './grpc-unary';
import type { Action, DetectionPolicy, DetectorEntry, Direction, MatchList } from './policy';
import { REQUEST_ID_METADATA_KEY, validRequestId } from './request-id';
import {
  ACTION_TO_PROTO,
  DETECTION_MAX_MESSAGE_BYTES,
  DETECTION_MAX_TEXT_BYTES,
  DETECTION_SERVICE_NAME,
  DETECTION_SESSION_MEMORY_MB,
  detectionMethod,
  DIRECTION_TO_PROTO,
  FAIL_MODE_TO_PROTO,
  MATCH_TYPE_TO_PROTO,
  POLICY_MODE_TO_PROTO,
  THRESHOLD_TO_PROTO,
  type FailMode,
  type OutcomeStatus,
  type ProtoDetectorConfig,
  type ProtoDetectorEntry,
  type ProtoDetectRequest,
  type ProtoDetectResponse,
  type ProtoListDetectorTypesRequest,
  type ProtoListDetectorTypesResponse,
  type ProtoMatchList,
} from './proto';

/**
 * gRPC client of the detection service, used by the gateway and the sensor. Every call carries a
 * deadline; gRPC failures become AppErrors (INVALID_ARGUMENT → invalid_request with the server's
 * message; anything else → 503 internal_error `detection_unavailable`). The result types below are the
 * friendly shape of DetectResponse that the rest of the code base works with (the detection engine
 * produces exactly this shape too).
 */

export type { FailMode, OutcomeStatus } from './proto';
export { DEFAULT_STREAM_TIMEOUT_MS } from './detection-stream';
export type { DetectStream, DetectStreamOptions, DetectStreamUpdate } from './detection-stream';

export interface DetectCategory {
  /** A detector type, `deny_list`, or `custom/<name>`. */
  type: string;
  confidence: number;
  action: Action;
}

export interface DetectFinding {
  type: string;
  confidence: number;
  /** UTF-16 offsets into the original text, end exclusive. */
  start: number;
  end: number;
  /** The confidence reached the configured threshold's cut-off. */
  fired: boolean;
  /** What fired (proto Finding.signal): `classifier:<backend>`, `heuristic:<id>`, `signature:<id>`, `deny_list`, `custom:<name>`, ... */
  signal: string;
}

export interface DetectorOutcome {
  type: string;
  status: OutcomeStatus;
  message: string;
  elapsedMs: number;
  failMode: FailMode;
}

export interface DetectResult {
  blocked: boolean;
  /** false when the policy mode excludes this direction. */
  scanned: boolean;
  allowListed: boolean;
  categories: DetectCategory[];
  findings: DetectFinding[];
  outcomes: DetectorOutcome[];
  /** Empty unless blocked. */
  blockReason: string;
  elapsedMs: number;
}

export interface DetectorTypeInfo {
  value: string;
  label: string;
  category: string;
  implemented: boolean;
}

export interface DetectRequest {
  text: string;
  direction: Direction;
  policy: DetectionPolicy;
  /** Default closed. */
  failMode?: FailMode;
  /** Per-detector budget on the server; default: the server's. */
  detectorTimeoutMs?: number;
  /**
   * A later call of a request that was already admitted (its output scan): queued for a slot even when
   * the queue is full. Default false: the request's first call, refused with 503 detection_overloaded
   * when the queue is full (see detection-admission.ts).
   */
  admitted?: boolean;
  /** Aborts the wait for a slot (the client went away); the call is not made. */
  signal?: AbortSignal;
  /** The HTTP request's id, sent as `x-request-id` metadata: the detection service's lines about the call carry it. */
  requestId?: string;
}

export interface DetectionClient {
  detect(req: DetectRequest): Promise<DetectResult>;
  /** Opens a streaming scan (DetectStream RPC). */
  detectStream(options: DetectStreamOptions): DetectStream;
  listDetectorTypes(): Promise<DetectorTypeInfo[]>;
  /** grpc.health.v1 Check of the detection service; false on any failure (never throws). */
  checkHealth(): Promise<boolean>;
  close(): void;
}

export interface DetectionClientOptions {
  /** host:port */
  address: string;
  /**
   * Deadline of every call, in milliseconds, counted from when the call is admitted; for a stream, of
   * each step (a batch of text sent and acknowledged).
   */
  timeoutMs: number;
  /** Admission control of detection work (one per process, shared by its routes); unlimited when absent. */
  admission?: DetectionAdmission;
}

const MAX_MESSAGE_BYTES = DETECTION_MAX_MESSAGE_BYTES;
/** A Detect request of this many bytes or more goes over the large-request channel (see createDetectionClient). */
export const LARGE_REQUEST_BYTES = 256 * 1024;
/**
 * Request bytes a unary channel has on the wire at once; later calls queue (FIFO) within their deadline.
 * Large: two of the largest requests. Small: 64 MiB, counted in 64 KiB units, so at least 1,024 small
 * calls at once (the stream count the channel allows). Both stay at or under half the session memory.
 */
export const LARGE_CHANNEL_IN_FLIGHT_BYTES = 2 * MAX_MESSAGE_BYTES;
export const SMALL_CHANNEL_IN_FLIGHT_BYTES = 64 * 1024 * 1024;
const HEALTH_TIMEOUT_MS = 1000;
/** Trailing metadata key carrying AppError.code on INVALID_ARGUMENT (set by the detection server). */
export const ERROR_CODE_METADATA_KEY = 'x-error-code';

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.enable_channelz': 0,
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 10_000,
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  'grpc-node.max_session_memory': DETECTION_SESSION_MEMORY_MB,
  // DetectStream's channel reconnects within a second of detection coming back (grpc-js' default
  // backoff grows to 120 s: streams kept failing closed for seconds after a restart of detection).
  'grpc.initial_reconnect_backoff_ms': 200,
  'grpc.max_reconnect_backoff_ms': 1_000,
};

const detectMethod = detectionMethod<ProtoDetectRequest, ProtoDetectResponse>('Detect');
const listMethod = detectionMethod<ProtoListDetectorTypesRequest, ProtoListDetectorTypesResponse>('ListDetectorTypes');

interface HealthCheckRequest {
  service: string;
}
interface HealthCheckResponse {
  status: string;
}
/** grpc-health-check's loader types differ from grpc-js's by version only; the method shape is the same. */
const healthCheckMethod = healthService.Check as unknown as grpc.MethodDefinition<
  HealthCheckRequest,
  HealthCheckResponse
>;

function unaryChannel(address: string, maxInFlightBytes: number): UnaryChannel {
  return new UnaryChannel({
    address,
    maxSendMessageBytes: MAX_MESSAGE_BYTES,
    maxReceiveMessageBytes: MAX_MESSAGE_BYTES,
    keepaliveTimeMs: CHANNEL_OPTIONS['grpc.keepalive_time_ms'],
    keepaliveTimeoutMs: CHANNEL_OPTIONS['grpc.keepalive_timeout_ms'],
    maxSessionMemoryMb: DETECTION_SESSION_MEMORY_MB,
    maxInFlightBytes,
  });
}

/**
 * Unary calls (Detect, ListDetectorTypes, health Check) go over a lean HTTP/2 gRPC channel
 * (grpc-unary.ts: the same wire protocol, a fraction of grpc-js's per-call work); the DetectStream
 * call uses grpc-js, whose channel connects on its first stream only.
 *
 * Two unary channels, each its own TCP connection and HTTP/2 session: Detect requests of
 * LARGE_REQUEST_BYTES or more take `large`, everything else `small`. Large bodies then never share a
 * session, a flow-control window or an admission queue with small calls, so a burst of large requests
 * (from any tenant) can delay only other large requests, and cannot fail or stall a small one.
 */
export function createDetectionClient(options: DetectionClientOptions): DetectionClient {
  const client = new grpc.Client(options.address, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
  const small = unaryChannel(options.address, SMALL_CHANNEL_IN_FLIGHT_BYTES);
  const large = unaryChannel(options.address, LARGE_CHANNEL_IN_FLIGHT_BYTES);
  const call = <Req, Res>(method: grpc.MethodDefinition<Req, Res>, request: Req, timeoutMs: number, channel = small, metadata?: Record<string, string>) =>
    unaryCall({ channel, method, request, timeoutMs, metadata });
  return {
    async detect(req) {
      // Checked here too, so an oversized text fails as the caller's error without crossing the network
      // (past ~16 MiB gRPC itself would refuse it, which would read as the service being unavailable).
      if (Buffer.byteLength(req.text, 'utf8') > DETECTION_MAX_TEXT_BYTES) {
        throw invalidRequest(`text is larger than ${DETECTION_MAX_TEXT_BYTES} bytes`, 'text_too_large');
      }
      const encoded = serializeDetectRequest(req);
      const channel = encoded.length >= LARGE_REQUEST_BYTES ? large : small;
      // The deadline starts once admitted: time spent queued behind other work does not count.
      const release = await options.admission?.acquire({ admitted: req.admitted ?? false, signal: req.signal });
      try {
        const requestId = validRequestId(req.requestId);
        const metadata = requestId ? { [REQUEST_ID_METADATA_KEY]: requestId } : undefined;
        return await call(detectWireMethod, encoded, options.timeoutMs, channel, metadata);
      } finally {
        release?.();
      }
    },
    async listDetectorTypes() {
      const response = await call(listMethod, {}, options.timeoutMs);
      return response.detector_types.map((d) => ({
        value: d.value,
        label: d.label,
        category: d.category,
        implemented: d.implemented,
      }));
    },
    async checkHealth() {
      try {
        const timeoutMs = Math.min(options.timeoutMs, HEALTH_TIMEOUT_MS);
        const response = await call(healthCheckMethod, { service: DETECTION_SERVICE_NAME }, timeoutMs);
        return response.status === 'SERVING';
      } catch {
        return false;
      }
    },
    detectStream(streamOptions) {
      return openDetectStream({ client, options: streamOptions, toProtoConfig, toAppError, admission: options.admission, stepTimeoutMs: options.timeoutMs });
    },
    close() {
      small.close();
      large.close();
      client.close();
    },
  };
}

interface UnaryCallArgs<Req, Res> {
  channel: UnaryChannel;
  method: grpc.MethodDefinition<Req, Res>;
  request: Req;
  timeoutMs: number;
  metadata?: Record<string, string>;
}

async function unaryCall<Req, Res>(args: UnaryCallArgs<Req, Res>): Promise<Res> {
  const { channel, method, request } = args;
  let answer: Buffer;
  try {
    answer = await channel.call(method.path, method.requestSerialize(request), args.timeoutMs, args.metadata);
  } catch (err) {
    throw toAppError(err as grpc.ServiceError);
  }
  try {
    return method.responseDeserialize(answer);
  } catch (err) {
    throw unavailable(err);
  }
}

export function toAppError(err: grpc.ServiceError): AppError {
  if (err.code === grpc.status.INVALID_ARGUMENT) {
    const code = err.metadata?.get(ERROR_CODE_METADATA_KEY)[0];
    return new AppError('invalid_request', err.details || 'Invalid detection request', {
      code: typeof code === 'string' && code !== '' ? code : 'invalid_request',
    });
  }
  return unavailable(err);
}

function unavailable(cause: unknown): AppError {
  return new AppError('internal_error', 'Detection service unavailable', {
    code: 'detection_unavailable',
    status: 503,
    cause,
  });
}

// ---- friendly → proto ----

/**
 * Detect with the request already encoded (serializeDetectRequest): the same method and wire bytes,
 * without re-encoding the policy on every call.
 */
const detectWireMethod: grpc.MethodDefinition<Buffer, DetectResult> = {
  ...(detectMethod as unknown as grpc.MethodDefinition<Buffer, DetectResult>),
  requestSerialize: (encoded: Buffer) => encoded,
  // Straight into the gateway's shape (detect-response-wire.ts), not through protobufjs' objects.
  responseDeserialize: decodeDetectResult,
};

/** The encoded `config` field of a policy, per policy object and cache key (see serializeDetectRequest). */
const encodedConfigs = new WeakMap<DetectionPolicy, { cacheKey: string; bytes: Buffer }>();

function encodedConfig(policy: DetectionPolicy): Buffer {
  const hit = encodedConfigs.get(policy);
  if (hit && policy.cacheKey !== '' && hit.cacheKey === policy.cacheKey) return hit.bytes;
  const bytes = detectMethod.requestSerialize({ config: toProtoConfig(policy) } as ProtoDetectRequest);
  if (policy.cacheKey !== '') encodedConfigs.set(policy, { cacheKey: policy.cacheKey, bytes });
  return bytes;
}

/**
 * A DetectRequest on the wire. A protobuf message is the concatenation of its encoded fields, so the
 * request is the per-call fields (text, direction, fail mode, budget) followed by the policy's `config`
 * field, encoded once per policy version (the policy object of an authenticated project lives as long
 * as its cache entry; its cache key changes with every edit, as the engine's rule cache assumes too).
 */
export function serializeDetectRequest(req: DetectRequest): Buffer {
  const head = detectMethod.requestSerialize({
    text: req.text,
    direction: DIRECTION_TO_PROTO[req.direction],
    config: null,
    fail_mode: FAIL_MODE_TO_PROTO[req.failMode ?? 'closed'],
    detector_timeout_ms: req.detectorTimeoutMs ?? 0,
  });
  return Buffer.concat([head, encodedConfig(req.policy)]);
}

export function toProtoConfig(policy: DetectionPolicy): ProtoDetectorConfig {
  return {
    cache_key: policy.cacheKey,
    policy_mode: POLICY_MODE_TO_PROTO[policy.policyMode],
    input_detectors: policy.inputDetectors.map(toProtoEntry),
    output_detectors: policy.outputDetectors.map(toProtoEntry),
    allow_list: toProtoMatchList(policy.allowList),
    deny_list: toProtoMatchList(policy.denyList),
    custom_detectors: policy.customDetectors.map((c) => ({
      name: c.name,
      pattern: c.pattern,
      action: ACTION_TO_PROTO[c.action],
    })),
    pii_regions: policy.piiRegions ? [...policy.piiRegions] : [],
  };
}

function toProtoEntry(e: DetectorEntry): ProtoDetectorEntry {
  return {
    detector_type: e.detector_type,
    threshold: THRESHOLD_TO_PROTO[e.threshold],
    action: ACTION_TO_PROTO[e.action],
  };
}

function toProtoMatchList(list: MatchList): ProtoMatchList {
  return { entries: list.entries, match_type: MATCH_TYPE_TO_PROTO[list.match_type] };
}

// proto → friendly: detect-response-wire.ts (values a newer server might add fall back to the safe reading).

