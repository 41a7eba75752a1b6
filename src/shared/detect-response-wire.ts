import { Reader } from 'protobufjs/minimal';
import type { Action } from './policy';
import type { DetectCategory, DetectFinding, DetectorOutcome, DetectResult } from './detection-client';
import type { DetectStreamUpdate } from './detection-stream';
import type { FailMode, OutcomeStatus } from './proto';

/**
 * The detection service's answers (proto/detection/v1: DetectResponse, DetectStreamResponse) written by the service
 * straight from its results, and read by the gateway straight into its shapes (DetectResult, DetectStreamUpdate:
 * the same types on both ends).
 *
 * Writing: the generic path (a mapping to the proto-loader shape, then its serializer: `fromObject`, then encode)
 * built two more objects per message on the detection thread; the writer below fills one scratch buffer. Fields at their proto3 default are left out, as
 * proto3 allows (the generic path wrote them out); any proto3 reader reads the same values (unit test).
 *
 * Reading: the generic path (the proto-loader deserializer, then a mapping) built three objects per message —
 * protobufjs' decoded message, its `toObject` copy
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

/** The enums' numbers (proto/detection/v1), written by the writer and read back through `byNumber`. */
const ACTION_NUMBER: Readonly<Record<Action, number>> = { block: 1, log: 2, alert: 3 };
const FAIL_MODE_NUMBER: Readonly<Record<FailMode, number>> = { closed: 1, open: 2 };
const OUTCOME_STATUS_NUMBER: Readonly<Record<OutcomeStatus, number>> = { ok: 1, error: 2, timeout: 3, unavailable: 4 };

/** number → name from a name → number table; 0 (unspecified) and numbers this side does not know read as `safe`. */
function byNumber<T extends string>(numbers: Readonly<Record<T, number>>, safe: T): (n: number) => T {
  const names: T[] = [];
  for (const name of Object.keys(numbers) as T[]) names[numbers[name]] = name;
  return (n) => names[n] ?? safe;
}

const action = byNumber(ACTION_NUMBER, 'block');
const failMode = byNumber(FAIL_MODE_NUMBER, 'closed');
const outcomeStatus = byNumber(OUTCOME_STATUS_NUMBER, 'error');

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

// ---- writing ----

/**
 * A message written into one scratch buffer (per thread, grown as needed), then copied out once: no object per
 * field (protobufjs' Writer keeps a list of operations, ~17 KB for bench:perf's answer). An embedded message's
 * length is reserved as one byte and the body moved right in the rare case it is 128 bytes or longer.
 */
const SCRATCH_BYTES = 64 * 1024;
const SCRATCH_KEEP_BYTES = 1024 * 1024;

class WireWriter {
  private buf = Buffer.allocUnsafe(SCRATCH_BYTES);
  pos = 0;

  reset(): void {
    this.pos = 0;
  }

  private room(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + bytes));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  varint(v: number): void {
    this.room(10);
    // Non-negative values below 2^53 (lengths, uint32, uint64 counters, enum numbers > 0).
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.pos++] = v;
  }

  key(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  string(field: number, v: string): void {
    if (v === '') return;
    this.key(field, WIRE_LENGTH);
    this.room(5 + v.length * 3);
    // One length byte reserved (settleLength makes room for more).
    const at = this.pos++;
    const start = this.pos;
    // Short ASCII strings (detector types, signals) byte by byte: cheaper than a call into Buffer#write.
    if (v.length <= 64) {
      let i = 0;
      for (; i < v.length; i++) {
        const c = v.charCodeAt(i);
        if (c >= 0x80) break;
        this.buf[start + i] = c;
      }
      if (i === v.length) {
        this.pos += i;
        this.settleLength(at, i);
        return;
      }
    }
    const n = this.buf.write(v, start, 'utf8');
    this.pos += n;
    this.settleLength(at, n);
  }

  double(field: number, v: number): void {
    // -0 is written: it is not the default (+0) bit for bit, and the generic path kept it too.
    if (v === 0 && !Object.is(v, -0)) return;
    this.key(field, WIRE_64BIT);
    this.room(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  bool(field: number, v: boolean): void {
    if (!v) return;
    this.key(field, WIRE_VARINT);
    this.varint(1);
  }

  uint(field: number, v: number | undefined): void {
    if (!v) return;
    this.key(field, WIRE_VARINT);
    this.varint(v);
  }

  /** Starts an embedded message; returns where its length byte is (for end()). */
  begin(field: number): number {
    this.key(field, WIRE_LENGTH);
    this.room(1);
    return this.pos++;
  }

  end(at: number): void {
    this.settleLength(at, this.pos - at - 1);
  }

  /** Writes the length `n` of the body after the byte reserved at `at`, moving the body when it needs more bytes. */
  private settleLength(at: number, n: number): void {
    if (n < 0x80) {
      this.buf[at] = n;
      return;
    }
    let extra = 0;
    for (let x = n; x >= 0x80; x = Math.floor(x / 0x80)) extra++;
    this.room(extra);
    this.buf.copy(this.buf, at + 1 + extra, at + 1, this.pos);
    this.pos += extra;
    let p = at;
    let v = n;
    while (v >= 0x80) {
      this.buf[p++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[p] = v;
  }

  /** The message written since reset(), as a buffer of its own; a scratch buffer grown past 1 MB is let go. */
  take(): Buffer {
    const out = Buffer.from(this.buf.subarray(0, this.pos));
    if (this.buf.length > SCRATCH_KEEP_BYTES) this.buf = Buffer.allocUnsafe(SCRATCH_BYTES);
    return out;
  }
}

const writer = new WireWriter();

function putCategory(w: WireWriter, field: number, c: DetectCategory): void {
  const at = w.begin(field);
  w.string(1, c.type);
  w.double(2, c.confidence);
  w.uint(3, ACTION_NUMBER[c.action]);
  w.end(at);
}

function putFinding(w: WireWriter, field: number, f: DetectFinding): void {
  const at = w.begin(field);
  w.string(1, f.type);
  w.double(2, f.confidence);
  w.uint(3, f.start >>> 0);
  w.uint(4, f.end >>> 0);
  w.bool(5, f.fired);
  w.string(6, f.signal);
  w.end(at);
}

function putOutcome(w: WireWriter, field: number, o: DetectorOutcome): void {
  const at = w.begin(field);
  w.string(1, o.type);
  w.uint(2, OUTCOME_STATUS_NUMBER[o.status]);
  w.string(3, o.message);
  w.double(4, o.elapsedMs);
  w.uint(5, FAIL_MODE_NUMBER[o.failMode]);
  w.end(at);
}

/** A DetectResponse (the detection service's answer to Detect). */
export function encodeDetectResult(r: DetectResult): Buffer {
  const w = writer;
  w.reset();
  w.bool(1, r.blocked);
  for (const c of r.categories) putCategory(w, 2, c);
  for (const f of r.findings) putFinding(w, 3, f);
  for (const o of r.outcomes) putOutcome(w, 4, o);
  w.bool(5, r.scanned);
  w.bool(6, r.allowListed);
  w.double(7, r.elapsedMs);
  w.string(8, r.blockReason);
  return w.take();
}

/** A DetectStreamResponse (one answer on a DetectStream call). */
export function encodeDetectStreamUpdate(u: DetectStreamUpdate): Buffer {
  const w = writer;
  w.reset();
  for (const f of u.findings) putFinding(w, 1, f);
  for (const c of u.newCategories) putCategory(w, 2, c);
  w.uint(3, u.releasedUpTo);
  w.uint(4, u.received);
  w.bool(5, u.blocked);
  for (const c of u.categories) putCategory(w, 6, c);
  w.string(7, u.blockReason);
  for (const o of u.outcomes) putOutcome(w, 8, o);
  w.bool(9, u.scanned);
  w.bool(10, u.allowListed);
  w.bool(11, u.done);
  w.double(12, u.elapsedMs);
  return w.take();
}
