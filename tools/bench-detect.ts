import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import RE2 from 're2';
import { createDetectionEngine, type DetectionEngine } from '#src/detection/engine';
import { buildViews } from '#src/detection/normalize';
import { defaultRegistry } from '#src/detection/registry';
import { TextIndex } from '#src/detection/text-index';
import { findAll } from '#src/detection/regex-scan';
import type { DetectorType } from '#src/shared/detector-catalog';
import type { DetectionPolicy } from '#src/shared/policy';
import { writeSection } from './results-sections';
import { blockPolicy } from './bench-procs';
import { CLASSIFIER_CATEGORIES, generateProse, PACKAGE_ROOT, sourceCodeText } from './text-corpus';

/**
 * `npm run bench:detect`: throughput and latency of the whole signature stage (normalisation, views,
 * every implemented signature detector, verdict) on one core, for 1 KB .. 1 MB of prose (with a sprinkle
 * of PII) and of source code. Baselines measured in the same run make the numbers comparable across
 * machines: one RE2 scan of the same text for a pattern that never matches (the cost of walking the text
 * once in RE2, UTF-8 conversion included), and `text.normalize('NFKC')`. Every iteration scans a fresh
 * string (RE2 caches the UTF-8 form of the last string it saw, which real traffic never hits).
 * Results are printed and written to bench/RESULTS.md under "Detection (signature stage)".
 */

const SIZES = [1024, 10 * 1024, 100 * 1024, 1024 * 1024];
const VARIANTS = 3;
/** Per size: at least this many iterations and this much time. */
const MIN_ITERATIONS: Readonly<Record<number, number>> = { 1024: 3000, 10240: 600, 102400: 60, 1048576: 12 };
const MIN_SECONDS = 1.5;
const TARGET_PROSE_MBPS = 50;
const TARGET_P99_1KB_MS = 1;
const RESULTS_FILE = path.join(PACKAGE_ROOT, 'bench', 'RESULTS.md');
const SECTION_TITLE = '## Detection (signature stage)';

interface Row {
  kind: 'prose' | 'code';
  size: number;
  iterations: number;
  mbps: number;
  /** Throughput over CPU time (process user + system): steadier than wall time on a shared machine. */
  cpuMbps: number;
  p50: number;
  p99: number;
  re2Mbps: number;
  nfkcMbps: number;
  heapBeforeMb: number;
  heapAfterMb: number;
  findings: number;
}

function gcFunction(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

function signatureTypes(): DetectorType[] {
  return defaultRegistry
    .listDetectorTypes()
    .filter((t) => t.implemented && !CLASSIFIER_CATEGORIES.has(t.category))
    .map((t) => t.value);
}

/** A string with the same content but a new identity (and a new flat backing store). */
const fresh = (text: string) => Buffer.from(text, 'utf8').toString('utf8');

function texts(kind: Row['kind'], size: number): string[] {
  return Array.from({ length: VARIANTS }, (_, v) =>
    kind === 'prose' ? generateProse({ seed: 1000 * v + size, length: size, piiEvery: 2048 }) : sourceCodeText(size, v * 7919),
  );
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function measure<T>(inputs: string[], size: number, run: (text: string) => T | Promise<T>) {
  const pool = Array.from({ length: Math.max(8, VARIANTS) }, (_, i) => fresh(inputs[i % inputs.length] as string));
  for (let i = 0; i < Math.min(50, MIN_ITERATIONS[size] ?? 10); i++) await run(pool[i % pool.length] as string); // warm-up
  const latencies: number[] = [];
  let bytes = 0;
  let last: T | undefined;
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < (MIN_ITERATIONS[size] ?? 10) || performance.now() - started < MIN_SECONDS * 1000; i++) {
    const text = pool[i % pool.length] as string;
    if (i % pool.length === pool.length - 1) pool[i % pool.length] = fresh(text); // never reuse a string RE2 has cached
    const t0 = performance.now();
    last = await run(text);
    latencies.push(performance.now() - t0);
    bytes += Buffer.byteLength(text, 'utf8');
  }
  const cpu = process.cpuUsage(cpu0);
  const total = latencies.reduce((a, b) => a + b, 0);
  latencies.sort((a, b) => a - b);
  return {
    mbps: bytes / 1e6 / (total / 1000),
    cpuMbps: bytes / 1e6 / ((cpu.user + cpu.system) / 1e6),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    iterations: latencies.length,
    last,
  };
}

async function benchSize(engine: DetectionEngine, policy: DetectionPolicy, kind: Row['kind'], size: number, gc: () => void): Promise<Row> {
  const inputs = texts(kind, size);
  const never = new RE2('qzxjv{3}', 'gu');
  const re2 = await measure(inputs, size, (t) => findAll(never, t, 1));
  const nfkc = await measure(inputs, size, (t) => t.normalize('NFKC').length);
  gc();
  const heapBefore = process.memoryUsage().heapUsed;
  const stage = await measure(inputs, size, (t) => engine.evaluate({ text: t, direction: 'input', config: policy, detectorTimeoutMs: 60_000 }));
  gc();
  const heapAfter = process.memoryUsage().heapUsed;
  return {
    kind,
    size,
    iterations: stage.iterations,
    mbps: stage.mbps,
    cpuMbps: stage.cpuMbps,
    p50: stage.p50,
    p99: stage.p99,
    re2Mbps: re2.mbps,
    nfkcMbps: nfkc.mbps,
    heapBeforeMb: heapBefore / 1048576,
    heapAfterMb: heapAfter / 1048576,
    findings: stage.last?.findings.length ?? 0,
  };
}

interface Part {
  name: string;
  /** Median wall-clock milliseconds per 1 MB scan. */
  ms: number;
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

/**
 * Where the time goes on 1 MB of one kind of text, in median wall-clock milliseconds per scan (CPU time
 * would count V8's concurrent GC threads too): building the views (normalisation, canonicalisation,
 * decoding), the shared text index, each detector on those views, and a whole evaluation; the rest of the
 * engine (isolation, mapping, merging, verdict) is what the whole takes beyond the parts.
 */
async function breakdown(engine: DetectionEngine, policy: DetectionPolicy, kind: Row['kind'], types: DetectorType[]): Promise<Part[]> {
  const size = 1024 * 1024;
  const reps = 11;
  const inputs = texts(kind, size);
  const signal = new AbortController().signal;
  const times = new Map<string, number[]>();
  const record = (name: string, started: number) => {
    const list = times.get(name) ?? [];
    list.push(performance.now() - started);
    times.set(name, list);
  };
  for (let r = 0; r < reps; r++) {
    const text = fresh(inputs[r % inputs.length] as string);
    let t0 = performance.now();
    const views = buildViews(text);
    record('views', t0);
    // The engine shares one text index per view between the detectors (text-index.ts): built once here too.
    t0 = performance.now();
    const indexes = views.map((view) => new TextIndex(view.text));
    for (const index of indexes) index.digitRuns();
    record('index', t0);
    for (const type of types) {
      const detector = defaultRegistry.get(type);
      if (!detector) continue;
      t0 = performance.now();
      for (const [v, view] of views.entries()) await detector.detect({ text: view.text, direction: 'input', index: indexes[v] }, signal);
      record(type, t0);
    }
    const whole = fresh(inputs[(r + 1) % inputs.length] as string);
    t0 = performance.now();
    await engine.evaluate({ text: whole, direction: 'input', config: policy, detectorTimeoutMs: 60_000 });
    record('whole', t0);
  }
  const ms = (name: string) => median(times.get(name) ?? []);
  const detectorParts = types.map((t) => ({ name: `detector ${t}`, ms: ms(t) })).sort((a, b) => b.ms - a.ms);
  const partsMs = ms('views') + ms('index') + detectorParts.reduce((a, p) => a + p.ms, 0);
  return [
    { name: 'whole stage (evaluate)', ms: ms('whole') },
    { name: 'views: normalisation + decoding', ms: ms('views') },
    { name: 'shared text index (digit runs)', ms: ms('index') },
    ...detectorParts,
    { name: 'engine rest (isolation, mapping, merging, verdict, GC)', ms: Math.max(0, ms('whole') - partsMs) },
  ];
}

function machine(): string {
  const cpuinfo = fs.existsSync('/proc/cpuinfo') ? fs.readFileSync('/proc/cpuinfo', 'utf8') : '';
  const model = /model name\s*:\s*(.+)/.exec(cpuinfo)?.[1]?.trim() ?? os.cpus()[0]?.model ?? 'unknown';
  const load = os.loadavg()[0]?.toFixed(2) ?? '?';
  return `nproc ${os.availableParallelism()}, CPU ${model}, node ${process.version}, ${os.platform()} ${os.arch()}, load average ${load} at the end (other work on the machine slows wall-clock numbers; the CPU-time column is steadier)`;
}

const label = (size: number) => (size >= 1048576 ? `${size / 1048576} MB` : `${size / 1024} KB`);
const f = (x: number, digits = 1) => x.toFixed(digits);

function renderBreakdown(parts: Map<Row['kind'], Part[]>): string[] {
  const kinds = [...parts.keys()];
  const names = [...new Set(kinds.flatMap((k) => (parts.get(k) ?? []).map((p) => p.name)))];
  const cell = (kind: Row['kind'], name: string) => {
    const list = parts.get(kind) ?? [];
    const part = list.find((p) => p.name === name);
    const total = list[0]?.ms ?? 0;
    return part ? `${f(part.ms, 2)} (${total > 0 ? f((100 * part.ms) / total, 0) : '?'}%)` : '-';
  };
  return [
    'Where the time goes, 1 MB inputs, median wall-clock ms per scan over 11 scans (share of the whole stage).',
    'Views and each detector are measured alone on the same views, the whole stage separately; "engine rest" is',
    'the difference (it includes the garbage collection the parts trigger).',
    '',
    `| part | ${kinds.join(' | ')} |`,
    `|---|${kinds.map(() => '---').join('|')}|`,
    ...names.map((name) => `| ${name} | ${kinds.map((k) => cell(k, name)).join(' | ')} |`),
    '',
  ];
}

function render(rows: Row[], types: DetectorType[], date: string, parts: Map<Row['kind'], Part[]>): string {
  const prose1k = rows.find((r) => r.kind === 'prose' && r.size === 1024);
  const proseLarge = rows.filter((r) => r.kind === 'prose' && r.size >= 100 * 1024);
  const proseMbps = Math.min(...proseLarge.map((r) => r.mbps));
  const lines = [
    SECTION_TITLE,
    '',
    `Run ${date} on ${machine()}; single process, one core (\`npm run bench:detect\`).`,
    `Detectors on (every implemented signature detector, L2, block): ${types.join(', ')}.`,
    'Policy has no allow / deny / custom entries. Each iteration scans a fresh string. MB = 10^6 bytes of UTF-8.',
    'Baselines on the same texts in the same run: `re2` = one RE2 scan for a never-matching pattern,',
    '`nfkc` = `text.normalize("NFKC")`; `x re2` / `x nfkc` = how many times slower the whole stage is.',
    '',
    '| input | size | iterations | MB/s | MB/s (CPU time) | p50 ms | p99 ms | re2 MB/s | x re2 | nfkc MB/s | x nfkc | heap before → after (MB) | findings |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.kind} | ${label(r.size)} | ${r.iterations} | ${f(r.mbps)} | ${f(r.cpuMbps)} | ${f(r.p50, 3)} | ${f(r.p99, 3)} | ${f(r.re2Mbps)} | ${f(r.re2Mbps / r.mbps)} | ${f(r.nfkcMbps)} | ${f(r.nfkcMbps / r.mbps)} | ${f(r.heapBeforeMb)} → ${f(r.heapAfterMb)} | ${r.findings} |`,
    ),
    '',
    `Targets: prose >= ${TARGET_PROSE_MBPS} MB/s (100 KB and 1 MB): ${f(proseMbps)} MB/s, ${proseMbps >= TARGET_PROSE_MBPS ? 'met' : 'NOT met'}; ` +
      `p99 < ${TARGET_P99_1KB_MS} ms at 1 KB: ${prose1k ? f(prose1k.p99, 3) : '?'} ms, ${prose1k && prose1k.p99 < TARGET_P99_1KB_MS ? 'met' : 'NOT met'}.`,
    '',
    ...renderBreakdown(parts),
  ];
  return lines.join('\n');
}

function writeResults(section: string): void {
  writeSection(RESULTS_FILE, SECTION_TITLE, section);
}

export async function main(): Promise<number> {
  const gc = gcFunction();
  const types = signatureTypes();
  const policy = blockPolicy(types, 'bench:signature-stage');
  const engine = createDetectionEngine();
  const only = process.argv.slice(2);
  const rows: Row[] = [];
  for (const kind of ['prose', 'code'] as const) {
    if (only.length > 0 && !only.includes(kind)) continue;
    for (const size of SIZES) {
      const row = await benchSize(engine, policy, kind, size, gc);
      rows.push(row);
      console.log(
        `${kind.padEnd(5)} ${label(row.size).padStart(6)}: ${f(row.mbps).padStart(7)} MB/s  p50 ${f(row.p50, 3)} ms  p99 ${f(row.p99, 3)} ms  (re2 ${f(row.re2Mbps)} MB/s, nfkc ${f(row.nfkcMbps)} MB/s)  heap ${f(row.heapBeforeMb)} → ${f(row.heapAfterMb)} MB`,
      );
    }
  }
  const parts = new Map<Row['kind'], Part[]>();
  for (const kind of ['prose', 'code'] as const) {
    if (only.length === 0 || only.includes(kind)) parts.set(kind, await breakdown(engine, policy, kind, types));
  }
  const section = render(rows, types, new Date().toISOString().slice(0, 10), parts);
  console.log(`\n${section}`);
  if (only.length === 0) writeResults(section);
  return 0;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err);
      process.exit(2);
    },
  );
}
