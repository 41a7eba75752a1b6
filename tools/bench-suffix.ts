import { performance } from 'node:perf_hooks';
import { loadSuffixScorer } from '#src/detection/classifiers/builtin/suffix-perplexity';
import { readPackageTexts } from './suffix-corpus';
import { PACKAGE_ROOT } from './text-corpus';

/**
 * `npm run bench:suffix`: time of scoreAdversarialSuffix per 2 KB of README text (400 chunks) and per
 * 100 KB, after a warm-up, plus the artefact's load time. Five runs; each line gives the run with the
 * lowest p50 (the machine is shared: the others measure its load) and the range of p50 over the runs.
 * Under a minute.
 */

function time(texts: readonly string[], rounds: number): { p50: number; p99: number } {
  const scorer = loadSuffixScorer();
  for (const t of texts) scorer.score(t);
  const us: number[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const t of texts) {
      const start = performance.now();
      scorer.score(t);
      us.push((performance.now() - start) * 1000);
    }
  }
  us.sort((a, b) => a - b);
  return { p50: us[Math.floor(us.length / 2)] as number, p99: us[Math.floor(us.length * 0.99)] as number };
}

function main(): void {
  const loadStart = performance.now();
  loadSuffixScorer();
  const loadMs = performance.now() - loadStart;
  const readmes = readPackageTexts(PACKAGE_ROOT).filter((s) => s.source === 'readme' && s.part !== 'lm');
  const chunks = readmes.slice(0, 400).map((s) => s.text.slice(0, 2048).padEnd(2048, ' '));
  const big = readmes.map((s) => s.text).join('\n').slice(0, 100 * 1024);
  const runs = (f: () => { p50: number; p99: number }) => Array.from({ length: 5 }, f).sort((a, b) => a.p50 - b.p50);
  const small = runs(() => time(chunks, 3));
  const large = runs(() => time([big], 10));
  const best = (r: Array<{ p50: number; p99: number }>, unit: number, digits: number) =>
    `p50 ${((r[0] as { p50: number }).p50 / unit).toFixed(digits)}, p99 ${((r[0] as { p99: number }).p99 / unit).toFixed(digits)} (p50 over the runs ${((r[0] as { p50: number }).p50 / unit).toFixed(digits)}–${((r[r.length - 1] as { p50: number }).p50 / unit).toFixed(digits)})`;
  console.log(`artefact load ${loadMs.toFixed(1)} ms`);
  console.log(`2 KB README chunks, µs: ${best(small, 1, 1)}`);
  console.log(`100 KB README text, ms: ${best(large, 1000, 2)}`);
}

main();
