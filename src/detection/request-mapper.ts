import { z } from 'zod';
import type { DetectResult } from '../shared/detection-client';
import { isDetectorType } from '../shared/detector-catalog';
import { invalidRequest } from '../shared/errors';
import {
  customDetectorSchema,
  EMPTY_MATCH_LIST,
  matchListSchema,
  piiRegionsSchema,
  type DetectionPolicy,
  type DetectorEntry,
  type MatchList,
} from '../shared/policy';
import {
  actionFromProto,
  DETECTION_MAX_TEXT_BYTES,
  directionFromProto,
  failModeFromProto,
  streamReleaseFromProto,
  matchTypeFromProto,
  policyModeFromProto,
  thresholdFromProto,
  type ProtoDetectorConfig,
  type ProtoDetectorEntry,
  type ProtoDetectRequest,
  type ProtoDetectStreamStart,
  type ProtoMatchList,
} from '../shared/proto';
import type { CompiledConfig, EvaluateInput } from './engine';
import type { StreamScannerOptions } from './stream-scanner';

/**
 * The gRPC edge of the engine: validates a decoded DetectRequest into EvaluateInput (every problem is an
 * invalid_request AppError, which the server turns into INVALID_ARGUMENT); answers are written by
 * shared/detect-response-wire.ts. Bounds on lists and patterns are the shared policy schemas', so a configuration the
 * management API accepts is accepted here, and nothing much larger.
 */

/** Largest text accepted, in UTF-8 bytes. */
export const MAX_TEXT_BYTES = DETECTION_MAX_TEXT_BYTES;
const MAX_CACHE_KEY_LENGTH = 512;
const MAX_CUSTOM_DETECTORS = 200;

const customDetectorsSchema = z.array(customDetectorSchema).max(MAX_CUSTOM_DETECTORS);

/**
 * Turns a request's decoded `config` into its validated, compiled form (the server's config cache: a hit
 * ignores `config`, which the server then did not even decode). Throws invalid_request like fromProtoConfig.
 */
export type ConfigResolver = (config: ProtoDetectorConfig | null) => CompiledConfig;

/** `config` validated (and, with a resolver, compiled) for EvaluateInput / StreamScannerOptions. */
function configOf(config: ProtoDetectorConfig | null, resolve: ConfigResolver | undefined): Pick<EvaluateInput, 'config' | 'compiled'> {
  if (!resolve) return { config: fromProtoConfig(config) };
  const compiled = resolve(config);
  return { config: compiled.config, compiled };
}

export function fromProtoRequest(req: ProtoDetectRequest, resolve?: ConfigResolver): EvaluateInput {
  const direction = directionFromProto(req.direction);
  if (!direction) throw invalidRequest('direction must be DIRECTION_INPUT or DIRECTION_OUTPUT', 'invalid_direction');
  if (typeof req.text !== 'string') throw invalidRequest('text is required');
  if (Buffer.byteLength(req.text, 'utf8') > MAX_TEXT_BYTES) {
    throw invalidRequest(`text is larger than ${MAX_TEXT_BYTES} bytes`, 'text_too_large');
  }
  const failMode = failModeFromProto(req.fail_mode);
  if (!failMode) throw invalidRequest('fail_mode has an unknown value');
  return {
    text: req.text,
    direction,
    ...configOf(req.config, resolve),
    failMode,
    detectorTimeoutMs: req.detector_timeout_ms > 0 ? req.detector_timeout_ms : undefined,
  };
}

/** The first message of a DetectStream call: the same validation as Detect, minus the text. */
export function fromProtoStreamStart(start: ProtoDetectStreamStart | null, resolve?: ConfigResolver): StreamScannerOptions {
  if (!start) throw invalidRequest('the first DetectStreamRequest must carry start', 'stream_start_missing');
  const direction = directionFromProto(start.direction);
  if (!direction) throw invalidRequest('direction must be DIRECTION_INPUT or DIRECTION_OUTPUT', 'invalid_direction');
  const failMode = failModeFromProto(start.fail_mode);
  if (!failMode) throw invalidRequest('fail_mode has an unknown value');
  const release = streamReleaseFromProto(start.release);
  if (!release) throw invalidRequest('release has an unknown value');
  return {
    direction,
    ...configOf(start.config, resolve),
    failMode,
    detectorTimeoutMs: start.detector_timeout_ms > 0 ? start.detector_timeout_ms : undefined,
    windowChars: start.window_chars > 0 ? start.window_chars : undefined,
    holdBackChars: start.hold_back_chars > 0 ? start.hold_back_chars : undefined,
    release,
  };
}

/** A chunk of a stream: the same size bound as a whole Detect text. */
export function checkStreamChunk(text: unknown): string {
  if (typeof text !== 'string') throw invalidRequest('text must be a string');
  if (text.length * 3 > MAX_TEXT_BYTES && Buffer.byteLength(text, 'utf8') > MAX_TEXT_BYTES) {
    throw invalidRequest(`a chunk is larger than ${MAX_TEXT_BYTES} bytes`, 'text_too_large');
  }
  return text;
}

export function fromProtoConfig(config: ProtoDetectorConfig | null): DetectionPolicy {
  if (!config) {
    return {
      cacheKey: '',
      policyMode: 'IO',
      inputDetectors: [],
      outputDetectors: [],
      allowList: EMPTY_MATCH_LIST,
      denyList: EMPTY_MATCH_LIST,
      customDetectors: [],
    };
  }
  const policyMode = policyModeFromProto(config.policy_mode);
  if (!policyMode) throw invalidRequest('config.policy_mode has an unknown value');
  if (config.cache_key.length > MAX_CACHE_KEY_LENGTH) {
    throw invalidRequest(`config.cache_key is longer than ${MAX_CACHE_KEY_LENGTH} characters`);
  }
  return {
    cacheKey: config.cache_key,
    policyMode,
    inputDetectors: config.input_detectors.map((e, i) => fromProtoEntry(e, `config.input_detectors[${i}]`)),
    outputDetectors: config.output_detectors.map((e, i) => fromProtoEntry(e, `config.output_detectors[${i}]`)),
    allowList: fromProtoMatchList(config.allow_list, 'config.allow_list'),
    denyList: fromProtoMatchList(config.deny_list, 'config.deny_list'),
    customDetectors: parse(
      customDetectorsSchema,
      config.custom_detectors.map(fromProtoCustom),
      'config.custom_detectors',
    ),
    // Empty (or absent on the wire) = the default regions, decided by the phone detector.
    ...(config.pii_regions.length > 0
      ? { piiRegions: parse(piiRegionsSchema, config.pii_regions, 'config.pii_regions') }
      : {}),
  };
}

function fromProtoEntry(e: ProtoDetectorEntry, where: string): DetectorEntry {
  if (!isDetectorType(e.detector_type)) {
    const message = `${where}.detector_type "${e.detector_type}" is not a known detector type`;
    throw invalidRequest(message, 'unknown_detector_type');
  }
  const threshold = thresholdFromProto(e.threshold);
  const action = actionFromProto(e.action);
  if (!threshold) throw invalidRequest(`${where}.threshold has an unknown value`);
  if (!action) throw invalidRequest(`${where}.action has an unknown value`);
  return { detector_type: e.detector_type, threshold, action };
}

function fromProtoMatchList(list: ProtoMatchList | null, where: string): MatchList {
  if (!list) return EMPTY_MATCH_LIST;
  const matchType = matchTypeFromProto(list.match_type);
  if (!matchType) throw invalidRequest(`${where}.match_type has an unknown value`);
  return parse(matchListSchema, { entries: list.entries, match_type: matchType }, where);
}

function fromProtoCustom(c: ProtoDetectorConfig['custom_detectors'][number], i: number): unknown {
  const action = actionFromProto(c.action);
  if (!action) throw invalidRequest(`config.custom_detectors[${i}].action has an unknown value`);
  return { name: c.name, pattern: c.pattern, action };
}

function parse<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue ? issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('') : '';
  throw invalidRequest(`${where}${path}: ${issue?.message ?? 'invalid value'}`);
}

