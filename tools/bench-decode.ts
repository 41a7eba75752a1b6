import { decodeDetectResult, decodeDetectStreamUpdate } from '#src/shared/detect-response-decoder';
import { actionFromProto, detectionMethod, detectionStreamMethod, outcomeFromProto, type ProtoDetectResponse, type ProtoDetectStreamResponse } from '#src/shared/proto';
import { range } from './bench-perf-lib';

/**
 * `npm run bench:decode`: the gateway's reading of the detection service's answers, the hand-written decoders
 * (src/shared/detect-response-decoder.ts) against the generic path they replaced (proto-loader's deserializer,
 * then a mapping to the gateway's shape), in this process, alternated BENCH_ROUNDS (5) times. The answers are
 * bench:perf's: 25 detector types, every outcome `ok`, no finding (a benign prompt), as a Detect response and as a
 * DetectStream update. Prints CPU ns per decode (min–max over the rounds) and the bytes each decode allocates
 * (V8 heap growth over batches that saw no collection), and the ratio hand / generic.
 */

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const N = Number(process.env.BENCH_DECODES ?? 100_000);

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

function cpuNsPerDecode(decode: (b: Buffer) => { outcomes: unknown[] }, bytes: Buffer): number {
  let sink = 0;
  const t0 = process.cpuUsage();
  for (let i = 0; i < N; i++) sink += decode(bytes).outcomes.length;
  const t = process.cpuUsage(t0);
  if (sink !== N * TYPES.length) throw new Error('decode lost outcomes');
  return ((t.user + t.system) * 1000) / N;
}

/** Heap growth per decode over batches of 20 during which no collection ran (a batch with one is skipped). */
function bytesPerDecode(decode: (b: Buffer) => unknown, bytes: Buffer): number {
  let total = 0;
  let batches = 0;
  for (let tries = 0; batches < 200 && tries < 10_000; tries++) {
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 20; i++) decode(bytes);
    const after = process.memoryUsage().heapUsed;
    if (after <= before) continue;
    total += (after - before) / 20;
    batches++;
  }
  return total / batches;
}

function main(): void {
  for (const [name, bytes, hand, old] of [
    ['Detect response', detectBytes, decodeDetectResult, generic.detect],
    ['DetectStream update', streamBytes, decodeDetectStreamUpdate, generic.stream],
  ] as const) {
    for (let i = 0; i < 20_000; i++) (hand(bytes), old(bytes)); // warm-up
    const ns = { hand: [] as number[], generic: [] as number[] };
    for (let r = 0; r < ROUNDS; r++) {
      ns.generic.push(cpuNsPerDecode(old, bytes));
      ns.hand.push(cpuNsPerDecode(hand, bytes));
    }
    const alloc = { generic: bytesPerDecode(old, bytes), hand: bytesPerDecode(hand, bytes) };
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    console.log(
      `${name} (${bytes.length} bytes, ${TYPES.length} outcomes): generic ${range(ns.generic.map(Math.round), { unit: ' ns' })}, ${Math.round(alloc.generic)} bytes; ` +
        `hand-written ${range(ns.hand.map(Math.round), { unit: ' ns' })}, ${Math.round(alloc.hand)} bytes; ratio (medians) ${(med(ns.hand) / med(ns.generic)).toFixed(2)}× CPU, ${(alloc.hand / alloc.generic).toFixed(2)}× bytes`,
    );
  }
}

main();
