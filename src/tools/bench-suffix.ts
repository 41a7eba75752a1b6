import { performance } from 'node:perf_hooks';
import { loadSuffixScorer } from '../detection/classifiers/builtin/suffix-perplexity';
import { readPackageTexts } from './suffix-corpus';
import { PACKAGE_ROOT } from './text-corpus';

/**
 * `npm run bench:suffix`: time of scoreAdversarialSuffix per 2 KB of README text (400 chunks, 10
 * rounds) and per 100 KB, after a warm-up, plus the artefact's load time. A minute at most.
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
  const small = time(chunks, 10);
  const large = time([big], 30);
  console.log(`artefact load ${loadMs.toFixed(1)} ms`);
  console.log(`2 KB README chunks: p50 ${small.p50.toFixed(1)} µs, p99 ${small.p99.toFixed(1)} µs`);
  console.log(`100 KB README text: p50 ${(large.p50 / 1000).toFixed(2)} ms, p99 ${(large.p99 / 1000).toFixed(2)} ms`);
}

main();
