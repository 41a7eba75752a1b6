import { Reader } from 'protobufjs/minimal';
import type { Action } from './policy';
import type { DetectCategory, DetectFinding, DetectorOutcome, DetectResult } from './detection-client';
import type { DetectStreamUpdate } from './detection-stream';
import type { FailMode, OutcomeStatus } from './proto';

/**
 * The detection service's answers (proto/detection/v1: DetectResponse, DetectStreamResponse) decoded straight from
 * the wire into the gateway's shapes (DetectResult, DetectStreamUpdate). The generic path (the proto-loader
 * deserializer, then a mapping) built three objects per message — protobufjs' decoded message, its `toObject` copy
 * with enum names, then ours — and two Detect calls per request answer with every configured detector's outcome:
 * about 4 MB of the ~45 MB the gateway's main thread allocated in 300 sequential requests (bench/RESULTS.md,
 * "the p99 at concurrency 1"). Same reading as before, value for value (a unit test compares both on random and
 * malformed messages): proto3 defaults for absent fields, the last value of a repeated scalar wins, unknown fields
 * are skipped, and an enum value this client does not know reads as the safe side (action block, fail mode
 * closed, outcome error). A malformed message throws (the caller reports the service as unavailable).
 */

const WIRE_VARINT = 0;
const WIRE_64BIT = 1;
const WIRE_LENGTH = 2;

const ACTIONS: readonly Action[] = ['block', 'block', 'log', 'alert'];
const FAIL_MODES: readonly FailMode[] = ['closed', 'closed', 'open'];
const OUTCOME_STATUSES: readonly OutcomeStatus[] = ['error', 'ok', 'error', 'timeout', 'unavailable'];

const action = (n: number): Action => ACTIONS[n] ?? 'block';
const failMode = (n: number): FailMode => FAIL_MODES[n] ?? 'closed';
const outcomeStatus = (n: number): OutcomeStatus => OUTCOME_STATUSES[n] ?? 'error';

/** The field's wire type must be the one its declared type is encoded with (protobufjs would misread it otherwise too). */
function expect(tag: number, wire: number): void {
  if ((tag & 7) !== wire) throw new Error(`invalid wire type ${tag & 7} for field ${tag >>> 3}`);
}

/** An enum or uint32 field (varint; a negative int32 enum is sign-extended to 64 bits: its low 32 bits are its value). */
function varint32(r: Reader, tag: number): number {
  expect(tag, WIRE_VARINT);
  return r.int32();
}

/** A uint64 counter as a JavaScript number (proto-loader's `longs: Number`). */
function uint64(r: Reader, tag: number): number {
  expect(tag, WIRE_VARINT);
  const v = r.uint64() as unknown as number | { low: number; high: number };
  return typeof v === 'number' ? v : (v.high >>> 0) * 4294967296 + (v.low >>> 0);
}

function double(r: Reader, tag: number): number {
  expect(tag, WIRE_64BIT);
  return r.double();
}

function bool(r: Reader, tag: number): boolean {
  expect(tag, WIRE_VARINT);
  return r.bool();
}

function string(r: Reader, tag: number): string {
  expect(tag, WIRE_LENGTH);
  return r.string();
}

/** The end offset of an embedded message field. */
function embedded(r: Reader, tag: number): number {
  expect(tag, WIRE_LENGTH);
  const length = r.uint32();
  const end = r.pos + length;
  if (end > r.len) throw new RangeError(`index out of range: ${r.pos} + ${length} > ${r.len}`);
  return end;
}

function category(r: Reader, end: number): DetectCategory {
  const c: DetectCategory = { type: '', confidence: 0, action: 'block' };
  while (r.pos < end) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      case 1:
        c.type = string(r, tag);
        break;
      case 2:
        c.confidence = double(r, tag);
        break;
      case 3:
        c.action = action(varint32(r, tag));
        break;
      default:
        r.skipType(tag & 7);
    }
  }
  return c;
}

function finding(r: Reader, end: number): DetectFinding {
  const f: DetectFinding = { type: '', confidence: 0, start: 0, end: 0, fired: false, signal: '' };
  while (r.pos < end) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      case 1:
        f.type = string(r, tag);
        break;
      case 2:
        f.confidence = double(r, tag);
        break;
      case 3:
        f.start = varint32(r, tag) >>> 0;
        break;
      case 4:
        f.end = varint32(r, tag) >>> 0;
        break;
      case 5:
        f.fired = bool(r, tag);
        break;
      case 6:
        f.signal = string(r, tag);
        break;
      default:
        r.skipType(tag & 7);
    }
  }
  return f;
}

function outcome(r: Reader, end: number): DetectorOutcome {
  const o: DetectorOutcome = { type: '', status: 'error', message: '', elapsedMs: 0, failMode: 'closed' };
  while (r.pos < end) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      case 1:
        o.type = string(r, tag);
        break;
      case 2:
        o.status = outcomeStatus(varint32(r, tag));
        break;
      case 3:
        o.message = string(r, tag);
        break;
      case 4:
        o.elapsedMs = double(r, tag);
        break;
      case 5:
        o.failMode = failMode(varint32(r, tag));
        break;
      default:
        r.skipType(tag & 7);
    }
  }
  return o;
}

/** A DetectResponse. */
export function decodeDetectResult(bytes: Uint8Array): DetectResult {
  const r = Reader.create(bytes);
  const out: DetectResult = { blocked: false, scanned: false, allowListed: false, categories: [], findings: [], outcomes: [], blockReason: '', elapsedMs: 0 };
  while (r.pos < r.len) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      case 1:
        out.blocked = bool(r, tag);
        break;
      case 2:
        out.categories.push(category(r, embedded(r, tag)));
        break;
      case 3:
        out.findings.push(finding(r, embedded(r, tag)));
        break;
      case 4:
        out.outcomes.push(outcome(r, embedded(r, tag)));
        break;
      case 5:
        out.scanned = bool(r, tag);
        break;
      case 6:
        out.allowListed = bool(r, tag);
        break;
      case 7:
        out.elapsedMs = double(r, tag);
        break;
      case 8:
        out.blockReason = string(r, tag);
        break;
      default:
        r.skipType(tag & 7);
    }
  }
  return out;
}

/** A DetectStreamResponse. */
export function decodeDetectStreamUpdate(bytes: Uint8Array): DetectStreamUpdate {
  const r = Reader.create(bytes);
  const out: DetectStreamUpdate = {
    findings: [],
    newCategories: [],
    releasedUpTo: 0,
    received: 0,
    blocked: false,
    categories: [],
    blockReason: '',
    outcomes: [],
    scanned: false,
    allowListed: false,
    done: false,
    elapsedMs: 0,
  };
  while (r.pos < r.len) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      case 1:
        out.findings.push(finding(r, embedded(r, tag)));
        break;
      case 2:
        out.newCategories.push(category(r, embedded(r, tag)));
        break;
      case 3:
        out.releasedUpTo = uint64(r, tag);
        break;
      case 4:
        out.received = uint64(r, tag);
        break;
      case 5:
        out.blocked = bool(r, tag);
        break;
      case 6:
        out.categories.push(category(r, embedded(r, tag)));
        break;
      case 7:
        out.blockReason = string(r, tag);
        break;
      case 8:
        out.outcomes.push(outcome(r, embedded(r, tag)));
        break;
      case 9:
        out.scanned = bool(r, tag);
        break;
      case 10:
        out.allowListed = bool(r, tag);
        break;
      case 11:
        out.done = bool(r, tag);
        break;
      case 12:
        out.elapsedMs = double(r, tag);
        break;
      default:
        r.skipType(tag & 7);
    }
  }
  return out;
}
