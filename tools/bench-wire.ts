import { decodeDetectResult, decodeDetectStreamUpdate, encodeDetectResult, encodeDetectStreamUpdate } from '#src/shared/detect-response-wire';
import type { DetectResult } from '#src/shared/detection-client';
import type { DetectStreamUpdate } from '#src/shared/detection-stream';
import { ACTION_TO_PROTO, actionFromProto, detectionMethod, detectionStreamMethod, FAIL_MODE_TO_PROTO, outcomeFromProto, OUTCOME_STATUS_TO_PROTO, type ProtoDetectResponse, type ProtoDetectStreamResponse } from '#src/shared/proto';
import { range } from './bench-perf-lib';

/**
 * `npm run bench:wire`: the detection service's answers on the wire, the hand-written writer (detection thread) and
 * reader (gateway) of src/shared/detect-response-wire.ts against the generic paths they replaced (a mapping to the
 * proto-loader shape and its serializer; proto-loader's deserializer and a mapping to the gateway's shape), in this
 * process, alternated BENCH_ROUNDS (5) times. The answers are bench:perf's: 25 detector types, every outcome `ok`, no
 * finding (a benign prompt), as a Detect response and as a DetectStream update. Prints CPU ns per encode and per
 * decode (min–max over the rounds), the bytes each allocates (V8 heap growth over batches that saw no collection),
 * and the ratios hand / generic.
 */

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const N = Number(process.env.BENCH_MESSAGES ?? 100_000);

const TYPES = [
  'prompt_attack', 'jailbreak', 'pii/email', 'pii/credit_card', 'pii/us_social_security_number', 'pii/phone_number', 'pii/ip_address', 'pii/iban_code',
  'pii/address', 'pii/name', 'moderated_content/harassment', 'moderated_content/hate', 'moderated_content/sexual', 'moderated_content/violence',
  'moderated_content/self_harm', 'moderated_content/illicit', 'moderated_content/illicit_violent', 'secrets/api_key', 'secrets/private_key',
  'code/malicious', 'pii/passport', 'pii/drivers_license', 'pii/date_of_birth', 'pii/medical', 'pii/bank_account',
];
const outcomes = TYPES.map((type, i) => ({ type, status: 'OUTCOME_STATUS_OK', message: '', elapsed_ms: 0.013 * i, fail_mode: 'FAIL_MODE_CLOSED' }));
const detect = detectionMethod<unknown, ProtoDetectResponse>('Detect');
const stream = detectionStreamMethod<unknown, ProtoDetectStreamResponse>('DetectStream');
const detectBytes = detect.responseSerialize({ blocked: false, categories: [], findings: [], outcomes, scanned: true, allow_listed: false, elapsed_ms: 0.42, block_reason: '' } as unknown as ProtoDetectResponse);
const streamBytes = stream.responseSerialize({
  findings: [], new_categories: [], released_up_to: 1536, received: 2048, blocked: false, categories: [], block_reason: '', outcomes, scanned: true, allow_listed: false, done: false, elapsed_ms: 0.31,
} as unknown as ProtoDetectStreamResponse);

type ProtoCategory = ProtoDetectResponse['categories'][number];
const category = (c: ProtoCategory) => ({ type: c.type, confidence: c.confidence, action: actionFromProto(c.action) ?? 'block' });
const finding = ({ type, confidence, start, end, fired, signal }: ProtoDetectResponse['findings'][number]) => ({ type, confidence, start, end, fired, signal });

/** The generic path as the clients had it before the decoders (detection-client.ts' fromProtoResponse, detection-stream.ts' fromProtoStreamResponse). */
const generic = {
  detect: (b: Buffer) => {
    const r = detect.responseDeserialize(b);
    return { blocked: r.blocked, scanned: r.scanned, allowListed: r.allow_listed, categories: r.categories.map(category), findings: r.findings.map(finding), outcomes: r.outcomes.map(outcomeFromProto), blockReason: r.block_reason, elapsedMs: r.elapsed_ms };
  },
  stream: (b: Buffer) => {
    const r = stream.responseDeserialize(b);
    return {
      findings: r.findings.map(finding), newCategories: r.new_categories.map(category), releasedUpTo: Number(r.released_up_to), received: Number(r.received), blocked: r.blocked,
      categories: r.categories.map(category), blockReason: r.block_reason, outcomes: r.outcomes.map(outcomeFromProto), scanned: r.scanned, allowListed: r.allow_listed, done: r.done, elapsedMs: r.elapsed_ms,
    };
  },
};

function cpuNsPer<T>(op: (x: T) => unknown, input: T): number {
  let sink = 0;
  const t0 = process.cpuUsage();
  for (let i = 0; i < N; i++) sink += op(input) ? 1 : 0;
  const t = process.cpuUsage(t0);
  if (sink !== N) throw new Error('an operation returned nothing');
  return ((t.user + t.system) * 1000) / N;
}

/** Heap growth per operation over batches of 20 during which no collection ran (a batch with one is skipped). */
function bytesPer<T>(op: (x: T) => unknown, input: T): number {
  let total = 0;
  let batches = 0;
  for (let tries = 0; batches < 200 && tries < 10_000; tries++) {
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 20; i++) op(input);
    const after = process.memoryUsage().heapUsed;
    if (after <= before) continue;
    total += (after - before) / 20;
    batches++;
  }
  return total / batches;
}

const outcome = (o: DetectResult['outcomes'][number]) => ({ type: o.type, status: OUTCOME_STATUS_TO_PROTO[o.status], message: o.message, elapsed_ms: o.elapsedMs, fail_mode: FAIL_MODE_TO_PROTO[o.failMode] });
const protoCategory = (c: DetectResult['categories'][number]) => ({ type: c.type, confidence: c.confidence, action: ACTION_TO_PROTO[c.action] });
/** The detection service's generic path before the writer (request-mapper.ts' toProtoResponse / toProtoStreamResponse, then proto-loader's serializer). */
const genericEncode = {
  detect: (r: DetectResult) =>
    detect.responseSerialize({
      blocked: r.blocked, categories: r.categories.map(protoCategory), findings: r.findings.map((f) => ({ ...f })), outcomes: r.outcomes.map(outcome),
      scanned: r.scanned, allow_listed: r.allowListed, elapsed_ms: r.elapsedMs, block_reason: r.blockReason,
    } as unknown as ProtoDetectResponse),
  stream: (u: DetectStreamUpdate) =>
    stream.responseSerialize({
      findings: u.findings.map((f) => ({ ...f })), new_categories: u.newCategories.map(protoCategory), released_up_to: u.releasedUpTo, received: u.received,
      blocked: u.blocked, categories: u.categories.map(protoCategory), block_reason: u.blockReason, outcomes: u.outcomes.map(outcome), scanned: u.scanned,
      allow_listed: u.allowListed, done: u.done, elapsed_ms: u.elapsedMs,
    } as unknown as ProtoDetectStreamResponse),
};

const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

function compare<T>(name: string, input: T, hand: (x: T) => unknown, old: (x: T) => unknown): void {
  for (let i = 0; i < 20_000; i++) (hand(input), old(input)); // warm-up
  const ns = { hand: [] as number[], generic: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    ns.generic.push(cpuNsPer(old, input));
    ns.hand.push(cpuNsPer(hand, input));
  }
  const alloc = { generic: bytesPer(old, input), hand: bytesPer(hand, input) };
  console.log(
    `${name}: generic ${range(ns.generic.map(Math.round), { unit: ' ns' })}, ${Math.round(alloc.generic)} bytes; ` +
      `hand-written ${range(ns.hand.map(Math.round), { unit: ' ns' })}, ${Math.round(alloc.hand)} bytes; ratio (medians) ${(med(ns.hand) / med(ns.generic)).toFixed(2)}× CPU, ${(alloc.hand / alloc.generic).toFixed(2)}× bytes`,
  );
}

function main(): void {
  const result = decodeDetectResult(detectBytes);
  const update = decodeDetectStreamUpdate(streamBytes);
  console.log(`bench:perf's answers: ${TYPES.length} outcomes, Detect response ${detectBytes.length} bytes (generic writer) / ${encodeDetectResult(result).length} (hand-written), DetectStream update ${streamBytes.length} / ${encodeDetectStreamUpdate(update).length}`);
  compare('write a Detect response (detection thread)', result, encodeDetectResult, genericEncode.detect);
  compare('write a DetectStream update (detection thread)', update, encodeDetectStreamUpdate, genericEncode.stream);
  compare('read a Detect response (gateway)', detectBytes, decodeDetectResult, generic.detect);
  compare('read a DetectStream update (gateway)', streamBytes, decodeDetectStreamUpdate, generic.stream);
}

main();
