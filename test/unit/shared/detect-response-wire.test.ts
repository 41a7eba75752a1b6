import type { DetectResult } from '../../../src/shared/detection-client';
import type { DetectStreamUpdate } from '../../../src/shared/detection-stream';
import { decodeDetectResult, decodeDetectStreamUpdate, encodeDetectResult, encodeDetectStreamUpdate } from '../../../src/shared/detect-response-wire';
import { ACTION_TO_PROTO, FAIL_MODE_TO_PROTO, OUTCOME_STATUS_TO_PROTO } from '../../../src/shared/proto';
import { actionFromProto, detectionMethod, detectionStreamMethod, outcomeFromProto, type ProtoDetectResponse, type ProtoDetectStreamResponse } from '../../../src/shared/proto';

/**
 * The hand-written decoders must read every answer exactly as the generic path did: proto-loader's deserializer
 * (the server's own message definitions) and then the mapping the clients used (written out below as it was).
 */
const detect = detectionMethod<unknown, ProtoDetectResponse>('Detect');
const stream = detectionStreamMethod<unknown, ProtoDetectStreamResponse>('DetectStream');

type ProtoCategory = ProtoDetectResponse['categories'][number];
const category = (c: ProtoCategory) => ({ type: c.type, confidence: c.confidence, action: actionFromProto(c.action) ?? 'block' });
const finding = ({ type, confidence, start, end, fired, signal }: ProtoDetectResponse['findings'][number]) => ({ type, confidence, start, end, fired, signal });

function genericResult(bytes: Buffer) {
  const r = detect.responseDeserialize(bytes);
  return {
    blocked: r.blocked,
    scanned: r.scanned,
    allowListed: r.allow_listed,
    categories: r.categories.map(category),
    findings: r.findings.map(finding),
    outcomes: r.outcomes.map(outcomeFromProto),
    blockReason: r.block_reason,
    elapsedMs: r.elapsed_ms,
  };
}

function genericUpdate(bytes: Buffer) {
  const r = stream.responseDeserialize(bytes);
  return {
    findings: r.findings.map(finding),
    newCategories: r.new_categories.map(category),
    releasedUpTo: Number(r.released_up_to),
    received: Number(r.received),
    blocked: r.blocked,
    categories: r.categories.map(category),
    blockReason: r.block_reason,
    outcomes: r.outcomes.map(outcomeFromProto),
    scanned: r.scanned,
    allowListed: r.allow_listed,
    done: r.done,
    elapsedMs: r.elapsed_ms,
  };
}

/** A small deterministic generator (mulberry32), so a failure names its seed. */
function rng(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T,>(xs: readonly T[]): T => xs[int(xs.length)]!;
  return { next, int, pick };
}

const TEXTS = ['', 'pii/email', 'moderated_content/harassment', 'custom/é-ü', 'signature:aws-access-key-id', 'détecteur 😀', 'x'.repeat(300)];
// Known enum names, their numbers, and numbers this client does not know (a newer server), negative ones included.
const ACTIONS = ['ACTION_UNSPECIFIED', 'ACTION_BLOCK', 'ACTION_LOG', 'ACTION_ALERT', 2, 3, 4, 9, -1];
const STATUSES = ['OUTCOME_STATUS_UNSPECIFIED', 'OUTCOME_STATUS_OK', 'OUTCOME_STATUS_ERROR', 'OUTCOME_STATUS_TIMEOUT', 'OUTCOME_STATUS_UNAVAILABLE', 1, 4, 5, 77, -3];
const FAIL_MODES = ['FAIL_MODE_UNSPECIFIED', 'FAIL_MODE_CLOSED', 'FAIL_MODE_OPEN', 2, 3, 6, -2];
const NUMBERS = [0, 0.5, 1, 1e-9, 123.456, -0, Number.MAX_VALUE];

function randomParts(g: ReturnType<typeof rng>) {
  const list = <T,>(max: number, make: () => T) => Array.from({ length: g.int(max + 1) }, make);
  return {
    categories: list(4, () => ({ type: g.pick(TEXTS), confidence: g.pick(NUMBERS), action: g.pick(ACTIONS) })),
    findings: list(6, () => ({
      type: g.pick(TEXTS),
      confidence: g.pick(NUMBERS),
      start: g.pick([0, 1, 511, 2 ** 31, 2 ** 32 - 1]),
      end: g.pick([0, 7, 1_000_000, 2 ** 32 - 1]),
      fired: g.next() < 0.5,
      signal: g.pick(TEXTS),
    })),
    outcomes: list(30, () => ({ type: g.pick(TEXTS), status: g.pick(STATUSES), message: g.pick(TEXTS), elapsed_ms: g.pick(NUMBERS), fail_mode: g.pick(FAIL_MODES) })),
  };
}

function randomResponse(g: ReturnType<typeof rng>): Buffer {
  const p = randomParts(g);
  return detect.responseSerialize({
    blocked: g.next() < 0.5,
    categories: p.categories,
    findings: p.findings,
    outcomes: p.outcomes,
    scanned: g.next() < 0.7,
    allow_listed: g.next() < 0.2,
    elapsed_ms: g.pick(NUMBERS),
    block_reason: g.pick(TEXTS),
  } as unknown as ProtoDetectResponse);
}

function randomStreamResponse(g: ReturnType<typeof rng>): Buffer {
  const p = randomParts(g);
  return stream.responseSerialize({
    findings: p.findings,
    new_categories: p.categories,
    released_up_to: g.pick([0, 512, 2 ** 32 + 5, Number.MAX_SAFE_INTEGER]),
    received: g.pick([0, 4096, 2 ** 40]),
    blocked: g.next() < 0.5,
    categories: randomParts(g).categories,
    block_reason: g.pick(TEXTS),
    outcomes: p.outcomes,
    scanned: g.next() < 0.7,
    allow_listed: g.next() < 0.2,
    done: g.next() < 0.3,
    elapsed_ms: g.pick(NUMBERS),
  } as unknown as ProtoDetectStreamResponse);
}

/** Top-level fields this client does not know (numbers 20–23), one of each wire type: varint, 64-bit, length-delimited, 32-bit. */
const UNKNOWN_FIELDS = Buffer.from([0xa0, 0x01, 0x96, 0x01, 0xa9, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 0xb2, 0x01, 3, 0x61, 0x62, 0x63, 0xbd, 0x01, 9, 9, 9, 9]);

describe('detect-response-wire: the detection service\'s answers read straight from the wire', () => {
  it('reads every DetectResponse as the generic deserializer and mapping did (random messages, unknown enum values)', () => {
    for (let seed = 1; seed <= 400; seed++) {
      const bytes = randomResponse(rng(seed));
      expect({ seed, value: decodeDetectResult(bytes) }).toEqual({ seed, value: genericResult(bytes) });
    }
  });

  it('reads every DetectStreamResponse as the generic deserializer and mapping did (uint64 counters past 2^32 included)', () => {
    for (let seed = 1; seed <= 400; seed++) {
      const bytes = randomStreamResponse(rng(seed));
      expect({ seed, value: decodeDetectStreamUpdate(bytes) }).toEqual({ seed, value: genericUpdate(bytes) });
    }
  });

  it('merges two messages on the wire as protobuf does (scalars: the last wins; repeated: appended) and skips unknown fields', () => {
    for (let seed = 1; seed <= 100; seed++) {
      const g = rng(1000 + seed);
      const both = Buffer.concat([randomResponse(g), UNKNOWN_FIELDS, randomResponse(g)]);
      expect({ seed, value: decodeDetectResult(both) }).toEqual({ seed, value: genericResult(both) });
      const updates = Buffer.concat([UNKNOWN_FIELDS, randomStreamResponse(g), randomStreamResponse(g), UNKNOWN_FIELDS]);
      expect({ seed, value: decodeDetectStreamUpdate(updates) }).toEqual({ seed, value: genericUpdate(updates) });
    }
  });

  it('reads an empty message as every field\'s default', () => {
    const empty = Buffer.alloc(0);
    expect(decodeDetectResult(empty)).toEqual(genericResult(empty));
    expect(decodeDetectResult(empty)).toEqual({ blocked: false, scanned: false, allowListed: false, categories: [], findings: [], outcomes: [], blockReason: '', elapsedMs: 0 });
    expect(decodeDetectStreamUpdate(empty)).toEqual(genericUpdate(empty));
  });

  it('throws on a truncated message, and on a field sent with another wire type than its own', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const bytes = randomResponse(rng(2000 + seed));
      if (bytes.length < 4) continue;
      // Cut inside the last field: a varint, a double, or a length-delimited value is left incomplete.
      const cut = bytes.subarray(0, bytes.length - 1);
      let generic: unknown;
      try {
        generic = genericResult(cut);
      } catch (err) {
        generic = err;
      }
      let ours: unknown;
      try {
        ours = decodeDetectResult(cut);
      } catch (err) {
        ours = err;
      }
      // Where the generic path threw, so do we; where a shorter message is still valid (the last byte ended a
      // complete field... never, as every encoded field ends at the message's end), both read the same.
      if (generic instanceof Error) expect(ours).toBeInstanceOf(Error);
      else expect(ours).toEqual(generic);
    }
    // Field 1 (blocked, a bool: varint) sent as a length-delimited value.
    expect(() => decodeDetectResult(Buffer.from([0x0a, 0x01, 0x01]))).toThrow(/wire type 2 for field 1/);
    // An embedded message longer than what is left.
    expect(() => decodeDetectResult(Buffer.from([0x22, 0x10, 0x0a, 0x01, 0x61]))).toThrow(RangeError);
  });

  describe('writing (the detection service)', () => {
    // The generic path the service had: its mapping to the proto-loader shape, then proto-loader's serializer.
    const outcome = (o: DetectResult['outcomes'][number]) => ({ type: o.type, status: OUTCOME_STATUS_TO_PROTO[o.status], message: o.message, elapsed_ms: o.elapsedMs, fail_mode: FAIL_MODE_TO_PROTO[o.failMode] });
    const protoCategory = (c: DetectResult['categories'][number]) => ({ type: c.type, confidence: c.confidence, action: ACTION_TO_PROTO[c.action] });
    const genericEncodeResult = (r: DetectResult) =>
      detect.responseSerialize({
        blocked: r.blocked, categories: r.categories.map(protoCategory), findings: r.findings.map((f) => ({ ...f })), outcomes: r.outcomes.map(outcome),
        scanned: r.scanned, allow_listed: r.allowListed, elapsed_ms: r.elapsedMs, block_reason: r.blockReason,
      } as unknown as ProtoDetectResponse);
    const genericEncodeUpdate = (u: DetectStreamUpdate) =>
      stream.responseSerialize({
        findings: u.findings.map((f) => ({ ...f })), new_categories: u.newCategories.map(protoCategory), released_up_to: u.releasedUpTo, received: u.received,
        blocked: u.blocked, categories: u.categories.map(protoCategory), block_reason: u.blockReason, outcomes: u.outcomes.map(outcome), scanned: u.scanned,
        allow_listed: u.allowListed, done: u.done, elapsed_ms: u.elapsedMs,
      } as unknown as ProtoDetectStreamResponse);

    function randomShaped(g: ReturnType<typeof rng>) {
      const list = <T,>(max: number, make: () => T) => Array.from({ length: g.int(max + 1) }, make);
      const category = () => ({ type: g.pick(TEXTS), confidence: g.pick(NUMBERS), action: g.pick(['block', 'log', 'alert'] as const) });
      return {
        categories: list(4, category),
        newCategories: list(3, category),
        findings: list(6, () => ({ type: g.pick(TEXTS), confidence: g.pick(NUMBERS), start: g.pick([0, 1, 2 ** 31, 2 ** 32 - 1]), end: g.pick([0, 7, 2 ** 32 - 1]), fired: g.next() < 0.5, signal: g.pick(TEXTS) })),
        outcomes: list(30, () => ({ type: g.pick(TEXTS), status: g.pick(['ok', 'error', 'timeout', 'unavailable'] as const), message: g.pick(TEXTS), elapsedMs: g.pick(NUMBERS), failMode: g.pick(['open', 'closed'] as const) })),
      };
    }
    const randomResult = (g: ReturnType<typeof rng>): DetectResult => {
      const p = randomShaped(g);
      return { blocked: g.next() < 0.5, scanned: g.next() < 0.7, allowListed: g.next() < 0.2, categories: p.categories, findings: p.findings, outcomes: p.outcomes, blockReason: g.pick(TEXTS), elapsedMs: g.pick(NUMBERS) };
    };
    const randomUpdate = (g: ReturnType<typeof rng>): DetectStreamUpdate => {
      const p = randomShaped(g);
      return {
        findings: p.findings, newCategories: p.newCategories, releasedUpTo: g.pick([0, 512, 2 ** 32 + 5, Number.MAX_SAFE_INTEGER]), received: g.pick([0, 4096, 2 ** 40]),
        blocked: g.next() < 0.5, categories: p.categories, blockReason: g.pick(TEXTS), outcomes: p.outcomes, scanned: g.next() < 0.7, allowListed: g.next() < 0.2,
        done: g.next() < 0.3, elapsedMs: g.pick(NUMBERS),
      };
    };

    it('writes what the generic path wrote, as any reader reads it (proto-loader\'s deserializer), and reads back to the same value', () => {
      for (let seed = 1; seed <= 400; seed++) {
        const result = randomResult(rng(5000 + seed));
        const ours = encodeDetectResult(result);
        expect({ seed, value: detect.responseDeserialize(ours) }).toEqual({ seed, value: detect.responseDeserialize(genericEncodeResult(result)) });
        expect({ seed, value: decodeDetectResult(ours) }).toEqual({ seed, value: result });
        const update = randomUpdate(rng(9000 + seed));
        const oursUpdate = encodeDetectStreamUpdate(update);
        expect({ seed, value: stream.responseDeserialize(oursUpdate) }).toEqual({ seed, value: stream.responseDeserialize(genericEncodeUpdate(update)) });
        expect({ seed, value: decodeDetectStreamUpdate(oursUpdate) }).toEqual({ seed, value: update });
      }
    });

    it('writes answers larger than its scratch buffer, and embedded messages and strings of 128 bytes and more', () => {
      const g = rng(77);
      const findings = Array.from({ length: 5000 }, (_, i) => ({ type: g.pick(TEXTS), confidence: i / 5000, start: i, end: i + 3, fired: i % 2 === 0, signal: `signature:rule-${i}` }));
      // Past 1 MB too: the writer lets such a scratch buffer go after the answer.
      const big: DetectResult = { ...randomResult(g), findings, blockReason: 'é'.repeat(600_000) };
      const bytes = encodeDetectResult(big);
      expect(bytes.length).toBeGreaterThan(128 * 1024);
      expect(decodeDetectResult(bytes)).toEqual(big);
      expect(detect.responseDeserialize(bytes)).toEqual(detect.responseDeserialize(genericEncodeResult(big)));
      // The writer is reused: a small answer after the big one is exactly the small answer.
      const small = randomResult(rng(78));
      expect(decodeDetectResult(encodeDetectResult(small))).toEqual(small);
    });

    it('leaves out fields at their proto3 default (an empty result is an empty message), and keeps -0', () => {
      const empty: DetectResult = { blocked: false, scanned: false, allowListed: false, categories: [], findings: [], outcomes: [], blockReason: '', elapsedMs: 0 };
      expect(encodeDetectResult(empty)).toHaveLength(0);
      expect(Object.is(decodeDetectResult(encodeDetectResult({ ...empty, elapsedMs: -0 })).elapsedMs, -0)).toBe(true);
      // One ok outcome: only its type, status and fail mode are on the wire (message '' and elapsed 0 are defaults).
      const one = encodeDetectResult({ ...empty, outcomes: [{ type: 'pii/email', status: 'ok', message: '', elapsedMs: 0, failMode: 'closed' }] });
      expect([...one]).toEqual([0x22, 15, 0x0a, 9, ...Buffer.from('pii/email'), 0x10, 1, 0x28, 1]);
    });
  });
});
