import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { CLASSIFIER_TYPES } from '#src/detection/classifiers/backend';
import { createBuiltinBackend, loadBuiltinModel } from '#src/detection/classifiers/builtin/builtin-backend';
import { scoreDocument } from '#src/detection/classifiers/builtin/document-scoring';
import { classifierDetectorFactory } from '#src/detection/classifiers/classifier-detector';
import { ClassifierRouter } from '#src/detection/classifiers/router';
import { windowSpans, WINDOW_OVERLAP, WINDOW_SIZE, WINDOW_SLACK } from '#src/detection/classifiers/windows';
import { createDetectionEngine } from '#src/detection/engine';
import { DetectorRegistry } from '#src/detection/registry';
import type { DetectorFactory } from '#src/detection/detector';
import type { DetectorType } from '#src/shared/detector-catalog';
import type { DetectionPolicy } from '#src/shared/policy';
import { writeSpeedSection } from './classifier-report';
import { readmeTexts } from './text-corpus';

/**
 * `npm run bench:classifiers`: the builtin backend's speed on one core (this process is single-threaded):
 * model load, one window (2 KB) through the model, a whole 2 KB and 100 KB text through the production
 * scoring path (views × windows), and a Detect through the engine with all 15 classifier detectors
 * enabled (router, shared calls, findings, verdict). Every iteration scores a fresh text (the shared-call
 * cache is keyed by content and would otherwise answer from memory). Appends the results to
 * bench/CLASSIFIERS.md (speed section).
 */

const TARGETS = { loadMs: 1000, p99_2k: 1, p99_100k: 20 };

const WORDS = (
  'the of and to in is was for on that with as by it at from this be are have or an which one had not but all were when we ' +
  'there can been has more if will would their what so about out up into them some could time than first other very after ' +
  'function return const value error request response server client data table query index cache build deploy test ' +
  'customer order invoice account support ticket refund policy please thanks regards meeting schedule report'
).split(' ');

function text(seed: number, length: number): string {
  let a = seed >>> 0;
  const rand = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const parts: string[] = [];
  let size = 0;
  while (size < length) {
    const n = 5 + Math.floor(rand() * 14);
    const s = Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');
    const piece = `${s.charAt(0).toUpperCase()}${s.slice(1)}${rand() < 0.1 ? '?' : '.'}${rand() < 0.1 ? '\n\n' : ' '}`;
    parts.push(piece);
    size += piece.length;
  }
  return parts.join('').slice(0, length);
}

interface Stats {
  n: number;
  p50: number;
  p99: number;
  mean: number;
}

async function measure(iterations: number, run: (i: number) => unknown): Promise<Stats> {
  for (let i = 0; i < Math.min(50, iterations); i++) await run(-1 - i); // warm-up (JIT), texts from the pool's end
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t = performance.now();
    await run(i);
    times.push(performance.now() - t);
  }
  times.sort((x, y) => x - y);
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))] as number;
  return { n: iterations, p50: q(0.5), p99: q(0.99), mean: times.reduce((s, x) => s + x, 0) / times.length };
}

const policy = (): DetectionPolicy => ({
  cacheKey: 'bench-classifiers',
  policyMode: 'IO',
  inputDetectors: CLASSIFIER_TYPES.map((t) => ({ detector_type: t, threshold: 'L2' as const, action: 'block' as const })),
  outputDetectors: [],
  allowList: { entries: [], match_type: 'contains' },
  denyList: { entries: [], match_type: 'contains' },
  customDetectors: [],
});

async function main(): Promise<void> {
  const t0 = performance.now();
  const model = loadBuiltinModel();
  const loadMs = performance.now() - t0;
  // Distinct texts for every iteration (warm-up ones too): identical windows would be answered by the
  // shared-call cache in the engine rows, and by branch predictors everywhere.
  const texts2k = Array.from({ length: 3100 }, (_, i) => text(1000 + i, 2048));
  const texts100k = Array.from({ length: 110 }, (_, i) => text(100_000 + i, 100 * 1024));
  const fresh = (pool: string[], i: number) => pool[(i + pool.length) % pool.length] as string;

  const window2k = await measure(3000, (i) => model.scoreWindow(fresh(texts2k, i).slice(0, WINDOW_SIZE)));
  const doc2k = await measure(3000, (i) => scoreDocument(model, fresh(texts2k, i)));
  const doc100k = await measure(60, (i) => scoreDocument(model, fresh(texts100k, i)));
  // Real English (package READMEs, markdown as it is): real word variety, and escapes that add a view.
  const readme100k = readmeTexts(110, 100 * 1024);
  const docReadme = await measure(60, (i) => scoreDocument(model, fresh(readme100k, i)));

  const router = new ClassifierRouter({ backends: [createBuiltinBackend({ model })] });
  const factories = new Map<DetectorType, DetectorFactory>(CLASSIFIER_TYPES.map((t) => [t, classifierDetectorFactory(t, () => router)]));
  const engine = createDetectionEngine({ registry: new DetectorRegistry(factories) });
  const config = policy();
  const detect = (t: string) => engine.evaluate({ text: t, direction: 'input', config, detectorTimeoutMs: 10_000 });
  // Different texts than above (the engine's shared-call cache has not seen them).
  const engine2k = await measure(2000, (i) => detect(`${fresh(texts2k, i)} `));
  const engine100k = await measure(40, (i) => detect(`${fresh(texts100k, i + 60)} `));
  const engineReadme = await measure(40, (i) => detect(`${fresh(readme100k, i + 60)} `));

  const rows: Array<[string, Stats, number | undefined]> = [
    [`one ${WINDOW_SIZE}-char window, model only (features + 11 heads + heuristics)`, window2k, undefined],
    [`2 KB (2,048 chars = ${windowSpans(2048).length} window${windowSpans(2048).length === 1 ? '' : 's'}) text, production scoring path (views × windows)`, doc2k, TARGETS.p99_2k],
    [`100 KB synthetic prose (small vocabulary), production scoring path (${windowSpans(100 * 1024).length} windows)`, doc100k, TARGETS.p99_100k],
    ['100 KB of package READMEs (real English, markdown), production scoring path (views × windows)', docReadme, TARGETS.p99_100k],
    ['2 KB Detect through the engine, 15 classifier detectors', engine2k, undefined],
    ['100 KB synthetic prose Detect through the engine, 15 classifier detectors', engine100k, undefined],
    ['100 KB README Detect through the engine, 15 classifier detectors', engineReadme, undefined],
  ];
  const ms = (x: number) => x.toFixed(3);
  const lines = [
    '## Speed',
    '',
    `Generated by \`npm run bench:classifiers\` on ${new Date().toISOString().slice(0, 10)}: Node ${process.version}, ${os.cpus()[0]?.model ?? 'unknown CPU'},`,
    `one thread (the machine's cores are shared with other work, so these are upper bounds). Windows: ${WINDOW_SIZE} chars, ${WINDOW_OVERLAP} overlap.`,
    '',
    `Model load (JSON parse + gunzip + validation): **${loadMs.toFixed(1)} ms** (target ≤ ${TARGETS.loadMs} ms).`,
    '',
    '| what | iterations | p50 ms | p99 ms | mean ms | target p99 |',
    '|---|---|---|---|---|---|',
    ...rows.map(([what, s, target]) => `| ${what} | ${s.n} | ${ms(s.p50)} | ${ms(s.p99)} | ${ms(s.mean)} | ${target === undefined ? '' : `≤ ${target} ms ${s.p99 <= target ? '(met)' : '(MISSED)'}`} |`),
  ];
  lines.push(
    '',
    `Load average during the run: ${os.loadavg().map((x) => x.toFixed(2)).join(' / ')} on ${os.cpus().length} cores.`,
    '',
    'Where a window\'s time goes (2,000-char windows of the README texts above, median of 9 rounds, AMD EPYC, quiet,',
    '2026-11-22): text preparation ~25 µs; trigger scan + heuristic signals + lexicons ~70 µs (about 30 linear-time',
    'regexes, each skipped unless one of its trigger substrings occurs); feature hashing ~67 µs (~2,000 character',
    '4-grams + ~700 word n-grams, ~1,380 non-zeros, into 2^17 buckets); the 11 heads ~33 µs (one random int8 row per',
    'non-zero); calibration and floors ~7–10 µs: ~230–270 µs per window in all when measured part by part, more',
    'inside a whole document (the parts evict each other\'s cache lines; code and markdown have more distinct n-grams',
    'than prose). Real text costs more than the synthetic prose: 100 KB of package READMEs is ~60 windows plus a',
    'canonical view (percent escapes, HTML references) whose unchanged windows are shared; 100 KB of the training data\'s',
    'benign prompts (code, role-play, system prompts) ~500 µs per window.',
    '',
    'This session (back to back in one process, alternating, start-of-session build vs this build, p50 of 100 scans of',
    '20 texts): 100 KB synthetic prose 19.1 → 13.8 ms; 100 KB of READMEs 58.0 → 21.7 ms; 100 KB of the training data\'s',
    'benign prompts 75.8 → 32.4 ms. From: character 4-grams only into 2^17 buckets (retrained; non-zeros per README',
    'window 2,100 → 1,380, weight table 2.9 → 1.4 MB; held-out AUC per head within ±0.004), the canonical view\'s',
    'windows aligned with the normalised view\'s so unchanged ones are not scored twice (READMEs: 1–14 of 56 windows',
    'scored instead of 56), each hashing block written straight into the output vector instead of merged through a',
    'bucket-sized table (hashing + heads 201 → 145 µs per window), and the spaced-letters regex run only from its first',
    'possible start. Tried and dropped (no gain measured): touching every weight row before the dot product (software',
    'prefetch), an L1-sized open-addressing count table instead of the bucket-sized count array.',
    'Earlier: character 3–4-grams instead of 3–5 (retrained), 16-bit counts and a TF table, the heads\' dot product',
    'unrolled, the squashed form in a byte buffer, one trigger scan shared by signals and lexicons, a first-units trigger',
    'table, sticky starts for the costliest signal patterns, short tails absorbed',
    `into the last window (up to ${WINDOW_SLACK} chars). The targets are p99 on one core; on a loaded machine the p99 is`,
    'dominated by preemption (compare the p50 and mean columns).',
  );
  console.log(lines.join('\n'));
  writeSpeedSection(lines.join('\n'));
  console.log('\nwrote the speed section of bench/CLASSIFIERS.md');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
