import fs from 'node:fs';
import path from 'node:path';
import { cutoffFor } from '#src/detection/decide';
import { createDetectionEngine, type DetectionEngine } from '#src/detection/engine';
import { defaultRegistry } from '#src/detection/registry';
import { isDetectorType, THRESHOLD_LEVELS, type DetectorType } from '#src/shared/detector-catalog';
import type { DetectionPolicy, Threshold } from '#src/shared/policy';
import { EVAL_FLOOR_THRESHOLD, floorFor } from './eval-floors';
import { CLASSIFIER_CATEGORIES, generateLogs, PACKAGE_ROOT, sourceCodeCorpus, type CorpusFile } from './text-corpus';

/**
 * `npm run eval`: measured accuracy of the signature detectors through the real engine (normalisation,
 * views, merging, thresholds).
 *
 *  1. Every test/fixtures/detection/*.jsonl (one JSON per line: {"id","detector","text","label": 0|1,
 *     "note"}) is run case by case with a policy enabling just that detector, at each threshold L1..L4.
 *     A case is predicted positive when a finding of that detector fires. Precision, recall and F1 are
 *     printed per detector and threshold; the run fails when a detector's F1 at L2 is below its floor
 *     (eval-floors.ts).
 *  2. Noise: about 1 MiB of ordinary source code (read from node_modules) plus 200 KB of generated log
 *     lines is scanned with every implemented signature detector (every implemented type outside the
 *     classifier categories) at L1; any fired finding fails the run.
 */

const FIXTURE_DIR = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'detection');
const THRESHOLDS = THRESHOLD_LEVELS.map((l) => l.value) as Threshold[];
const CODE_CORPUS_CHARS = 1024 * 1024;
const LOG_CORPUS_CHARS = 200 * 1024;
const EVAL_DETECTOR_TIMEOUT_MS = 60_000;

interface FixtureCase {
  id: string;
  detector: string;
  text: string;
  label: 0 | 1;
  note: string;
  file: string;
}

interface Counts {
  tp: number;
  fp: number;
  fn: number;
  tn: number;
}

interface Scores extends Counts {
  precision: number;
  recall: number;
  f1: number;
}

interface DetectorReport {
  detector: string;
  n: number;
  positives: number;
  byThreshold: Partial<Record<Threshold, Scores>>;
  misses: string[];
  skipped?: string;
  floor?: number;
  failed: boolean;
}

function policyFor(type: DetectorType, threshold: Threshold): DetectionPolicy {
  const entry = { detector_type: type, threshold, action: 'log' as const };
  return {
    cacheKey: `eval:${type}:${threshold}`,
    policyMode: 'IO',
    inputDetectors: [entry],
    outputDetectors: [entry],
    allowList: { entries: [], match_type: 'contains' },
    denyList: { entries: [], match_type: 'contains' },
    customDetectors: [],
  };
}

export function loadFixtures(dir = FIXTURE_DIR): { cases: FixtureCase[]; errors: string[] } {
  const cases: FixtureCase[] = [];
  const errors: string[] = [];
  if (!fs.existsSync(dir)) return { cases, errors };
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort()) {
    const lines = fs.readFileSync(path.join(dir, file), 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        const c = JSON.parse(line) as Partial<FixtureCase>;
        if (typeof c.detector !== 'string' || typeof c.text !== 'string' || (c.label !== 0 && c.label !== 1)) {
          throw new Error('needs string "detector", string "text" and "label" 0 or 1');
        }
        cases.push({ id: String(c.id ?? `${file}:${i + 1}`), detector: c.detector, text: c.text, label: c.label, note: String(c.note ?? ''), file });
      } catch (err) {
        errors.push(`${file}:${i + 1}: ${err instanceof Error ? err.message : String(err)}`);
      }
    });
  }
  return { cases, errors };
}

export function scores(c: Counts): Scores {
  const precision = c.tp + c.fp === 0 ? 1 : c.tp / (c.tp + c.fp);
  const recall = c.tp + c.fn === 0 ? 1 : c.tp / (c.tp + c.fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { ...c, precision, recall, f1 };
}

async function evaluateDetector(engine: DetectionEngine, detector: string, cases: FixtureCase[]): Promise<DetectorReport> {
  const positives = cases.filter((c) => c.label === 1).length;
  const report: DetectorReport = { detector, n: cases.length, positives, byThreshold: {}, misses: [], floor: floorFor(detector), failed: false };
  if (!isDetectorType(detector)) return { ...report, skipped: 'not a detector type of the catalog (not registered)' };
  if (!defaultRegistry.has(detector)) return { ...report, skipped: 'not implemented in this build' };
  for (const threshold of THRESHOLDS) {
    const config = policyFor(detector, threshold);
    const counts: Counts = { tp: 0, fp: 0, fn: 0, tn: 0 };
    for (const c of cases) {
      const result = await engine.evaluate({ text: c.text, direction: 'input', config, detectorTimeoutMs: EVAL_DETECTOR_TIMEOUT_MS });
      const predicted = result.findings.some((f) => f.type === detector && f.fired);
      if (predicted && c.label === 1) counts.tp++;
      else if (predicted) counts.fp++;
      else if (c.label === 1) counts.fn++;
      else counts.tn++;
      if (threshold === EVAL_FLOOR_THRESHOLD && predicted !== (c.label === 1)) {
        const best = Math.max(0, ...result.findings.map((f) => f.confidence));
        report.misses.push(`${predicted ? 'FP' : 'FN'} ${c.id} (max confidence ${best.toFixed(2)}): ${c.note || c.text.slice(0, 60)}`);
      }
    }
    report.byThreshold[threshold] = scores(counts);
  }
  const atFloor = report.byThreshold[EVAL_FLOOR_THRESHOLD];
  report.failed = report.floor !== undefined && atFloor !== undefined && atFloor.f1 < report.floor;
  return report;
}

interface NoiseReport {
  chars: number;
  files: number;
  detectors: string[];
  firedL1: Map<string, string[]>;
  countL2: Map<string, number>;
  problems: string[];
}

async function noiseCheck(engine: DetectionEngine): Promise<NoiseReport> {
  const types = defaultRegistry
    .listDetectorTypes()
    .filter((t) => t.implemented && !CLASSIFIER_CATEGORIES.has(t.category))
    .map((t) => t.value);
  const corpus: CorpusFile[] = [
    ...sourceCodeCorpus(CODE_CORPUS_CHARS),
    ...chunkText('generated-logs', generateLogs({ seed: 20240314, length: LOG_CORPUS_CHARS }), 20 * 1024),
  ];
  const report: NoiseReport = { chars: 0, files: corpus.length, detectors: types, firedL1: new Map(), countL2: new Map(), problems: [] };
  const l1 = policyForAll(types, 'L1');
  for (const file of corpus) {
    report.chars += file.text.length;
    const result = await engine.evaluate({ text: file.text, direction: 'output', config: l1, detectorTimeoutMs: EVAL_DETECTOR_TIMEOUT_MS });
    for (const o of result.outcomes.filter((o) => o.status !== 'ok')) report.problems.push(`${o.type} ${o.status} on ${file.name}: ${o.message}`);
    for (const f of result.findings) {
      const snippet = file.text.slice(Math.max(0, f.start - 20), Math.min(file.text.length, f.end + 20)).replace(/\s+/g, ' ');
      if (f.fired) push(report.firedL1, f.type, `${file.name}@${f.start} (${f.confidence.toFixed(2)}): …${snippet}…`);
      if (f.confidence >= cutoffFor('L2')) report.countL2.set(f.type, (report.countL2.get(f.type) ?? 0) + 1);
    }
  }
  return report;
}

function policyForAll(types: DetectorType[], threshold: Threshold): DetectionPolicy {
  const entries = types.map((t) => ({ detector_type: t, threshold, action: 'log' as const }));
  return { ...policyFor(types[0] ?? 'pii/email', threshold), cacheKey: `eval:all:${threshold}`, inputDetectors: entries, outputDetectors: entries };
}

function chunkText(name: string, text: string, size: number): CorpusFile[] {
  const out: CorpusFile[] = [];
  for (let i = 0; i < text.length; i += size) {
    const end = text.indexOf('\n', Math.min(text.length, i + size));
    const stop = end < 0 ? text.length : end + 1;
    out.push({ name: `${name}#${out.length}`, text: text.slice(i, stop) });
    i = stop - size;
  }
  return out;
}

function push(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key) ?? [];
  list.push(value);
  map.set(key, list);
}

const pct = (x: number) => x.toFixed(3);

function printTable(reports: DetectorReport[]): void {
  const header = ['detector'.padEnd(32), 'n'.padStart(5), 'pos'.padStart(5), ...THRESHOLDS.map((t) => `${t} P / R / F1`.padEnd(21)), 'floor'];
  console.log(header.join(' '));
  console.log('-'.repeat(header.join(' ').length));
  for (const r of reports) {
    const cells = THRESHOLDS.map((t) => {
      const s = r.byThreshold[t];
      return (s ? `${pct(s.precision)} ${pct(s.recall)} ${pct(s.f1)}` : '-').padEnd(21);
    });
    const floor = r.skipped ? `SKIPPED: ${r.skipped}` : r.floor === undefined ? '(none)' : `${r.floor.toFixed(2)} ${r.failed ? 'FAIL' : 'ok'}`;
    console.log([r.detector.padEnd(32), String(r.n).padStart(5), String(r.positives).padStart(5), ...cells, floor].join(' '));
  }
}

export async function main(): Promise<number> {
  const engine = createDetectionEngine();
  const { cases, errors } = loadFixtures();
  for (const e of errors) console.error(`fixture error: ${e}`);
  const byDetector = new Map<string, FixtureCase[]>();
  for (const c of cases) byDetector.set(c.detector, [...(byDetector.get(c.detector) ?? []), c]);
  const reports: DetectorReport[] = [];
  for (const [detector, list] of [...byDetector.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    reports.push(await evaluateDetector(engine, detector, list));
  }
  console.log(`\nDetection accuracy (${cases.length} cases from ${FIXTURE_DIR}); floors apply to F1 at ${EVAL_FLOOR_THRESHOLD}\n`);
  printTable(reports);
  for (const r of reports.filter((r) => r.misses.length > 0)) {
    console.log(`\n${r.detector}: misclassified at ${EVAL_FLOOR_THRESHOLD} (${r.misses.length})`);
    for (const m of r.misses.slice(0, 15)) console.log(`  ${m}`);
    if (r.misses.length > 15) console.log(`  … ${r.misses.length - 15} more`);
  }

  const noise = await noiseCheck(engine);
  const firedTotal = [...noise.firedL1.values()].reduce((n, l) => n + l.length, 0);
  console.log(`\nNoise: ${(noise.chars / 1024).toFixed(0)} KiB of source code and logs (${noise.files} texts), detectors at L1: ${noise.detectors.join(', ')}`);
  console.log(`  findings at L1: ${firedTotal}${firedTotal === 0 ? ' (ok)' : ' (FAIL)'}`);
  for (const [type, list] of noise.firedL1) {
    console.log(`  ${type}: ${list.length}`);
    for (const s of list.slice(0, 10)) console.log(`    ${s}`);
  }
  if (noise.countL2.size > 0) console.log(`  for information, findings at L2: ${[...noise.countL2].map(([t, n]) => `${t}=${n}`).join(', ')}`);
  for (const p of noise.problems) console.log(`  PROBLEM: ${p}`);

  const failedDetectors = reports.filter((r) => r.failed).map((r) => r.detector);
  const ok = failedDetectors.length === 0 && firedTotal === 0 && noise.problems.length === 0 && errors.length === 0;
  console.log(ok ? '\neval: PASS' : `\neval: FAIL${failedDetectors.length ? ` (below floor: ${failedDetectors.join(', ')})` : ''}`);
  return ok ? 0 : 1;
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
