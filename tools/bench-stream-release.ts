import { createDetectionEngine } from '#src/detection/engine';
import { StreamScanner, type StreamRelease } from '#src/detection/stream-scanner';
import { STREAM_HOLD_BACK_CHARS } from '#src/shared/detection-stream';
import { DETECTOR_CATALOG } from '#src/shared/detector-catalog';
import type { DetectionPolicy } from '#src/shared/policy';

/**
 * CPU of the detection thread per streamed answer, and how early its text is released, with the fixed
 * release rule (hold-back H = 128) against adaptive release (detection/stream-release.ts), in one
 * process, the two alternating (node dist/tools/bench-stream-release.js after npm run build).
 *
 * Each stream is the output DetectStream of one answer: `EVENTS` chunks of 24 characters, as the
 * benchmark upstream sends them (tools/bench-upstream.ts), pushed one by one, then finished. Texts:
 * `numbered` = the benchmark upstream's (each event begins with its number: "1 The answer continues w"),
 * `prose` = the same prose without the numbers. Policy: every signature detector (block) plus, unless
 * BENCH_CLASSIFIERS=0, the builtin prompt_attack and jailbreak classifiers, on output.
 *
 * Reports per stream: CPU ms (process.cpuUsage, the scans run on this thread), scans, characters
 * scanned, and the characters received when the first character was released (the "first token" in
 * characters: what the client waits for). Settings: BENCH_ROUNDS (default 5), BENCH_STREAMS (per round
 * and case, default 200), BENCH_WINDOW (the carry-over window, default 256 as the gateway's),
 * BENCH_DENY=1 (add ten multi-word deny-list entries).
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 200);
const CLASSIFIERS = process.env.BENCH_CLASSIFIERS !== '0';
const EVENT_CHARS = 24;
/** The gateway's default STREAM_SCAN_WINDOW_CHARS. */
const WINDOW = Number(process.env.BENCH_WINDOW ?? 256);
const PROSE = 'The answer continues with a plain and harmless sentence about gardening and the weather. ';

const eventText = (numbered: boolean, i: number, j: number) =>
  numbered
    ? `${i} ${PROSE.repeat(2)}`.slice(0, EVENT_CHARS)
    : `${PROSE.repeat(3)}`.slice((i * 7 + j) % PROSE.length, ((i * 7 + j) % PROSE.length) + EVENT_CHARS);

const policy: DetectionPolicy = {
  cacheKey: 'bench-stream-release',
  policyMode: 'IO',
  inputDetectors: [],
  outputDetectors: DETECTOR_CATALOG.filter((d) => d.category !== 'content_moderation' && (CLASSIFIERS || d.category !== 'prompt_defense')).map((d) => ({
    detector_type: d.value,
    threshold: 'L2' as const,
    action: 'block' as const,
  })),
  allowList: { entries: [], match_type: 'contains' },
  // BENCH_DENY=1: ten multi-word deny entries (the release point then also reads the views of its last H characters).
  denyList: {
    entries: process.env.BENCH_DENY === '1' ? Array.from({ length: 10 }, (_, i) => `forbidden project phrase number ${'abcdefghij'[i]} here`) : [],
    match_type: 'contains',
  },
  customDetectors: [],
};

interface Sample {
  cpuMs: number;
  scans: number;
  scannedChars: number;
  firstReleaseAt: number;
}

async function oneStream(engine: ReturnType<typeof createDetectionEngine>, release: StreamRelease, events: number, numbered: boolean, j: number): Promise<Sample> {
  const cpu0 = process.cpuUsage();
  const scanner = new StreamScanner(engine, { direction: 'output', config: policy, windowChars: WINDOW, release, holdBackChars: STREAM_HOLD_BACK_CHARS });
  let scans = 0;
  let firstReleaseAt = 0;
  for (let i = 1; i <= events; i++) {
    const u = await scanner.push(eventText(numbered, i, j));
    if (u) scans += 1;
    if (u && u.releasedUpTo > 0 && firstReleaseAt === 0) firstReleaseAt = u.received;
  }
  const last = await scanner.finish();
  scans += 1;
  if (firstReleaseAt === 0) firstReleaseAt = last.received;
  if (last.blocked) throw new Error(`a benign stream was blocked: ${last.blockReason}`);
  const c = process.cpuUsage(cpu0);
  return { cpuMs: (c.user + c.system) / 1000, scans, scannedChars: scanner.scannedChars, firstReleaseAt };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const range = (xs: number[], digits = 3) => {
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return lo.toFixed(digits) === hi.toFixed(digits) ? lo.toFixed(digits) : `${lo.toFixed(digits)}–${hi.toFixed(digits)}`;
};

async function main(): Promise<void> {
  const engine = createDetectionEngine();
  const cases = [
    { name: 'short (10 events, 240 chars)', events: 10 },
    { name: 'long (200 events, 4,800 chars)', events: 200 },
  ];
  const results = new Map<string, { cpu: number[]; scans: number; scanned: number; first: number }>();
  // Warm-up: compile the configuration, load the classifiers, JIT.
  for (const release of ['fixed', 'adaptive'] as const) for (let j = 0; j < 20; j++) await oneStream(engine, release, 20, j % 2 === 0, j);
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of cases) {
      for (const numbered of [true, false]) {
        const order: StreamRelease[] = round % 2 === 0 ? ['fixed', 'adaptive'] : ['adaptive', 'fixed'];
        for (const release of order) {
          const samples: Sample[] = [];
          for (let j = 0; j < STREAMS; j++) samples.push(await oneStream(engine, release, c.events, numbered, j));
          const key = `${c.name} | ${numbered ? 'numbered' : 'prose'} | ${release}`;
          const r = results.get(key) ?? { cpu: [], scans: 0, scanned: 0, first: 0 };
          r.cpu.push(mean(samples.map((s) => s.cpuMs)));
          r.scans = mean(samples.map((s) => s.scans));
          r.scanned = mean(samples.map((s) => s.scannedChars));
          r.first = mean(samples.map((s) => s.firstReleaseAt));
          results.set(key, r);
        }
      }
    }
  }
  console.log(`Window ${WINDOW}; deny entries ${policy.denyList.entries.length}; policy: ${policy.outputDetectors.length} detectors (${CLASSIFIERS ? 'signatures + builtin classifiers' : 'signatures only'}), H = ${STREAM_HOLD_BACK_CHARS}; ${ROUNDS} rounds × ${STREAMS} streams per case; CPU = mean per stream, range over rounds.`);
  console.log('| stream | text | release | CPU ms / stream | scans / stream | chars scanned / stream | chars received at first release |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [key, r] of results) {
    console.log(`| ${key} | ${range(r.cpu)} | ${r.scans.toFixed(1)} | ${Math.round(r.scanned)} | ${Math.round(r.first)} |`);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
