import path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { Action, Direction, MatchType, PolicyMode, Threshold } from './policy';

/**
 * The detection gRPC contract (`proto/detection/v1/detection.proto`) loaded at runtime, plus hand-written
 * TypeScript shapes of its messages as @grpc/proto-loader decodes them with LOADER_OPTIONS (enums as
 * their string names, int64 as numbers, defaults filled in, absent sub-messages as null).
 *
 * Path: this file lives in `src/shared/` (jest, ts) and compiles to `dist/shared/` (tsc rootDir src); both
 * are two levels below the package root, and the proto directory is not copied into dist, so the path is
 * resolved from `__dirname` back to the root in both cases.
 */
export const PROTO_ROOT = path.resolve(__dirname, '..', '..', 'proto');
/** Relative to PROTO_ROOT: the file name reflection clients see. */
export const DETECTION_PROTO_FILE = 'detection/v1/detection.proto';
export const DETECTION_PROTO_PATH = path.join(PROTO_ROOT, DETECTION_PROTO_FILE);

export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

export const detectionPackageDefinition: protoLoader.PackageDefinition = protoLoader.loadSync(DETECTION_PROTO_FILE, {
  ...LOADER_OPTIONS,
  includeDirs: [PROTO_ROOT],
});

export const DETECTION_SERVICE_NAME = 'detection.v1.DetectionService';

/** Largest text the detection service accepts, in UTF-8 bytes (the gRPC message limit is ~16 MiB). */
export const DETECTION_MAX_TEXT_BYTES = 10 * 1024 * 1024;

/** Largest gRPC message either side sends or accepts: the largest text plus its policy. */
export const DETECTION_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * nghttp2 memory cap, in MB, of every HTTP/2 session between the services (client `maxSessionMemory`,
 * server `grpc-node.max_session_memory`). Node's default is 10 MB: one 9 MB request buffered on the
 * session and the next stream is refused with NGHTTP2_ENHANCE_YOUR_CALM. The gateway's unary channels
 * admit at most 32 MiB (large requests) and 64 MiB (small ones) at once (detection-client.ts).
 */
export const DETECTION_SESSION_MEMORY_MB = 128;

/** The service definition to pass to `grpc.Server#addService` (proto-loader's shape is grpc-js's). */
export const detectionServiceDefinition = detectionPackageDefinition[DETECTION_SERVICE_NAME] as grpc.ServiceDefinition;

/** A typed view of one unary method of the detection service (the single place the loader's types are cast). */
export function detectionMethod<Req, Res>(name: 'Detect' | 'ListDetectorTypes'): grpc.MethodDefinition<Req, Res> {
  const method = detectionServiceDefinition[name];
  if (!method) throw new Error(`detection.proto has no method ${name}`);
  return method as grpc.MethodDefinition<Req, Res>;
}

/** A typed view of the bidirectional streaming method of the detection service. */
export function detectionStreamMethod<Req, Res>(name: 'DetectStream'): grpc.MethodDefinition<Req, Res> {
  const method = detectionServiceDefinition[name];
  if (!method) throw new Error(`detection.proto has no method ${name}`);
  return method as grpc.MethodDefinition<Req, Res>;
}

/** The field number of `field` in message `messageName` of detection.proto (e.g. DetectRequest.config = 3). */
export function detectionFieldNumber(messageName: string, field: string): number {
  const definition = detectionPackageDefinition[`detection.v1.${messageName}`] as protoLoader.MessageTypeDefinition<object, object> | undefined;
  const fields = (definition?.type as { field?: Array<{ name: string; number: number }> } | undefined)?.field ?? [];
  const found = fields.find((f) => f.name === field);
  if (!found) throw new Error(`detection.proto has no field ${messageName}.${field}`);
  return found.number;
}

// ---- enums (string names, as the loader decodes them) ----

export type ProtoDirection = 'DIRECTION_UNSPECIFIED' | 'DIRECTION_INPUT' | 'DIRECTION_OUTPUT';
export type ProtoPolicyMode = 'POLICY_MODE_UNSPECIFIED' | 'POLICY_MODE_IO' | 'POLICY_MODE_I' | 'POLICY_MODE_O';
export type ProtoThreshold =
  | 'THRESHOLD_UNSPECIFIED'
  | 'THRESHOLD_L1'
  | 'THRESHOLD_L2'
  | 'THRESHOLD_L3'
  | 'THRESHOLD_L4';
export type ProtoAction = 'ACTION_UNSPECIFIED' | 'ACTION_BLOCK' | 'ACTION_LOG' | 'ACTION_ALERT';
export type ProtoMatchType = 'MATCH_TYPE_UNSPECIFIED' | 'MATCH_TYPE_CONTAINS' | 'MATCH_TYPE_EXACT' | 'MATCH_TYPE_REGEX';
export type ProtoFailMode = 'FAIL_MODE_UNSPECIFIED' | 'FAIL_MODE_CLOSED' | 'FAIL_MODE_OPEN';
export type ProtoStreamRelease = 'STREAM_RELEASE_UNSPECIFIED' | 'STREAM_RELEASE_ADAPTIVE';
export type ProtoOutcomeStatus =
  | 'OUTCOME_STATUS_UNSPECIFIED'
  | 'OUTCOME_STATUS_OK'
  | 'OUTCOME_STATUS_ERROR'
  | 'OUTCOME_STATUS_TIMEOUT'
  | 'OUTCOME_STATUS_UNAVAILABLE';

/** Fail mode in friendly form; the proto's UNSPECIFIED means closed. */
export type FailMode = 'open' | 'closed';
/** Detector outcome status in friendly form. */
export type OutcomeStatus = 'ok' | 'error' | 'timeout' | 'unavailable';

// ---- messages ----

export interface ProtoDetectorEntry {
  detector_type: string;
  threshold: ProtoThreshold;
  action: ProtoAction;
}

export interface ProtoMatchList {
  entries: string[];
  match_type: ProtoMatchType;
}

export interface ProtoCustomDetector {
  name: string;
  pattern: string;
  action: ProtoAction;
}

export interface ProtoDetectorConfig {
  cache_key: string;
  policy_mode: ProtoPolicyMode;
  input_detectors: ProtoDetectorEntry[];
  output_detectors: ProtoDetectorEntry[];
  allow_list: ProtoMatchList | null;
  deny_list: ProtoMatchList | null;
  custom_detectors: ProtoCustomDetector[];
  /** Empty = the detection service's default regions. */
  pii_regions: string[];
}

export interface ProtoDetectRequest {
  text: string;
  direction: ProtoDirection;
  config: ProtoDetectorConfig | null;
  fail_mode: ProtoFailMode;
  detector_timeout_ms: number;
}

export interface ProtoCategory {
  type: string;
  confidence: number;
  action: ProtoAction;
}

export interface ProtoFinding {
  type: string;
  confidence: number;
  start: number;
  end: number;
  fired: boolean;
  signal: string;
}

export interface ProtoDetectorOutcome {
  type: string;
  status: ProtoOutcomeStatus;
  message: string;
  elapsed_ms: number;
  fail_mode: ProtoFailMode;
}

export interface ProtoDetectResponse {
  blocked: boolean;
  categories: ProtoCategory[];
  findings: ProtoFinding[];
  outcomes: ProtoDetectorOutcome[];
  scanned: boolean;
  allow_listed: boolean;
  elapsed_ms: number;
  block_reason: string;
}

export type ProtoListDetectorTypesRequest = Record<string, never>;

export interface ProtoDetectorTypeInfo {
  value: string;
  label: string;
  category: string;
  implemented: boolean;
}

export interface ProtoListDetectorTypesResponse {
  detector_types: ProtoDetectorTypeInfo[];
}

export interface ProtoDetectStreamStart {
  direction: ProtoDirection;
  config: ProtoDetectorConfig | null;
  fail_mode: ProtoFailMode;
  detector_timeout_ms: number;
  window_chars: number;
  hold_back_chars: number;
  /** Absent or UNSPECIFIED: the fixed hold_back_chars rule. */
  release?: ProtoStreamRelease;
}

export interface ProtoDetectStreamRequest {
  start: ProtoDetectStreamStart | null;
  text: string;
  final: boolean;
  /** Answer even when no scan ran (the client's admission waits for it). */
  ack: boolean;
}

export interface ProtoDetectStreamResponse {
  findings: ProtoFinding[];
  new_categories: ProtoCategory[];
  released_up_to: number;
  received: number;
  blocked: boolean;
  categories: ProtoCategory[];
  block_reason: string;
  outcomes: ProtoDetectorOutcome[];
  scanned: boolean;
  allow_listed: boolean;
  done: boolean;
  elapsed_ms: number;
}

// ---- friendly <-> proto enum tables (shared by the server and the client) ----

export const DIRECTION_TO_PROTO: Readonly<Record<Direction, ProtoDirection>> = {
  input: 'DIRECTION_INPUT',
  output: 'DIRECTION_OUTPUT',
};
export const POLICY_MODE_TO_PROTO: Readonly<Record<PolicyMode, ProtoPolicyMode>> = {
  IO: 'POLICY_MODE_IO',
  I: 'POLICY_MODE_I',
  O: 'POLICY_MODE_O',
};
export const THRESHOLD_TO_PROTO: Readonly<Record<Threshold, ProtoThreshold>> = {
  L1: 'THRESHOLD_L1',
  L2: 'THRESHOLD_L2',
  L3: 'THRESHOLD_L3',
  L4: 'THRESHOLD_L4',
};
export const ACTION_TO_PROTO: Readonly<Record<Action, ProtoAction>> = {
  block: 'ACTION_BLOCK',
  log: 'ACTION_LOG',
  alert: 'ACTION_ALERT',
};
export const MATCH_TYPE_TO_PROTO: Readonly<Record<MatchType, ProtoMatchType>> = {
  contains: 'MATCH_TYPE_CONTAINS',
  exact: 'MATCH_TYPE_EXACT',
  regex: 'MATCH_TYPE_REGEX',
};
export const FAIL_MODE_TO_PROTO: Readonly<Record<FailMode, ProtoFailMode>> = {
  open: 'FAIL_MODE_OPEN',
  closed: 'FAIL_MODE_CLOSED',
};
export const OUTCOME_STATUS_TO_PROTO: Readonly<Record<OutcomeStatus, ProtoOutcomeStatus>> = {
  ok: 'OUTCOME_STATUS_OK',
  error: 'OUTCOME_STATUS_ERROR',
  timeout: 'OUTCOME_STATUS_TIMEOUT',
  unavailable: 'OUTCOME_STATUS_UNAVAILABLE',
};

/**
 * Reverse lookups that apply the proto's documented defaults for UNSPECIFIED. They take `unknown` because
 * a peer built from a newer proto may send an enum number this loader does not know; such values yield
 * `undefined` and the caller decides (the server rejects them, the client treats them as unknown).
 */
export const directionFromProto = (v: unknown): Direction | undefined =>
  v === 'DIRECTION_INPUT' ? 'input' : v === 'DIRECTION_OUTPUT' ? 'output' : undefined;

export const policyModeFromProto = (v: unknown): PolicyMode | undefined =>
  v === 'POLICY_MODE_UNSPECIFIED' || v === 'POLICY_MODE_IO'
    ? 'IO'
    : v === 'POLICY_MODE_I'
      ? 'I'
      : v === 'POLICY_MODE_O'
        ? 'O'
        : undefined;

export const thresholdFromProto = (v: unknown): Threshold | undefined =>
  v === 'THRESHOLD_UNSPECIFIED' ? 'L2' : reverse(THRESHOLD_TO_PROTO, v);

export const actionFromProto = (v: unknown): Action | undefined =>
  v === 'ACTION_UNSPECIFIED' ? 'block' : reverse(ACTION_TO_PROTO, v);

export const matchTypeFromProto = (v: unknown): MatchType | undefined =>
  v === 'MATCH_TYPE_UNSPECIFIED' ? 'contains' : reverse(MATCH_TYPE_TO_PROTO, v);

export const failModeFromProto = (v: unknown): FailMode | undefined =>
  v === 'FAIL_MODE_UNSPECIFIED' ? 'closed' : reverse(FAIL_MODE_TO_PROTO, v);

/** Release mode of a DetectStream; absent or UNSPECIFIED: fixed (the hold_back_chars rule). */
export const STREAM_RELEASE_TO_PROTO: Readonly<Record<'fixed' | 'adaptive', ProtoStreamRelease>> = {
  fixed: 'STREAM_RELEASE_UNSPECIFIED',
  adaptive: 'STREAM_RELEASE_ADAPTIVE',
};
export const streamReleaseFromProto = (v: unknown): 'fixed' | 'adaptive' | undefined =>
  v === undefined || v === 'STREAM_RELEASE_UNSPECIFIED' ? 'fixed' : v === 'STREAM_RELEASE_ADAPTIVE' ? 'adaptive' : undefined;

export const outcomeStatusFromProto = (v: unknown): OutcomeStatus | undefined => reverse(OUTCOME_STATUS_TO_PROTO, v);

/** A detector outcome of a response in the clients' shape; unknown enum values read as the safe side. */
export function outcomeFromProto(o: ProtoDetectorOutcome): { type: string; status: OutcomeStatus; message: string; elapsedMs: number; failMode: FailMode } {
  return {
    type: o.type,
    status: outcomeStatusFromProto(o.status) ?? 'error',
    message: o.message,
    elapsedMs: o.elapsed_ms,
    failMode: failModeFromProto(o.fail_mode) ?? 'closed',
  };
}

/** Reverse lookups of the tables above, built once (a Map per table). */
const reversed = new WeakMap<object, Map<unknown, string>>();

function reverse<K extends string>(table: Readonly<Record<K, string>>, value: unknown): K | undefined {
  let map = reversed.get(table);
  if (!map) {
    map = new Map(Object.entries(table).map(([key, proto]) => [proto, key]));
    reversed.set(table, map);
  }
  return map.get(value) as K | undefined;
}
