import { performance } from 'node:perf_hooks';
import type { SuffixScorer } from '#src/detection/classifiers/builtin/suffix-perplexity';

/**
 * Evaluation of the adversarial-suffix scorer for `npm run train:suffix`: false-positive rate per
 * negative source, recall per suffix style, span accuracy and speed.
 */

export interface Positive {
  text: string;
  /** where the suffix starts and ends (the whole text for a suffix alone). */
  from: number;
  to: number;
  group: string;
}

export interface NegativeStats {
  source: string;
  n: number;
  /** how many fire at each cut-off (score ≥ cut). */
  fired: number[];
  max: number;
}

export interface PositiveStats {
  group: string;
  n: number;
  recall: number[];
  /** of the fired ones: span lies ≥ 80% inside the suffix. */
  spanInside: number;
}

export function negatives(scorer: SuffixScorer, samples: Array<{ text: string; source: string }>, cuts: readonly number[]): NegativeStats[] {
  const bySource = new Map<string, NegativeStats>();
  for (const s of samples) {
    const stats = bySource.get(s.source) ?? { source: s.source, n: 0, fired: cuts.map(() => 0), max: 0 };
    bySource.set(s.source, stats);
    stats.n++;
    const v = scorer.score(s.text);
    const score = v?.score ?? 0;
    stats.max = Math.max(stats.max, score);
    cuts.forEach((c, i) => {
      if (score >= c) stats.fired[i] = (stats.fired[i] as number) + 1;
    });
  }
  return [...bySource.values()].sort((a, b) => a.source.localeCompare(b.source));
}

export function positives(scorer: SuffixScorer, samples: readonly Positive[], cuts: readonly number[]): PositiveStats[] {
  const byGroup = new Map<string, { n: number; fired: number[]; inside: number; firedAtMain: number }>();
  for (const s of samples) {
    const g = byGroup.get(s.group) ?? { n: 0, fired: cuts.map(() => 0), inside: 0, firedAtMain: 0 };
    byGroup.set(s.group, g);
    g.n++;
    const v = scorer.score(s.text);
    if (!v) continue;
    cuts.forEach((c, i) => {
      if (v.score >= c) g.fired[i] = (g.fired[i] as number) + 1;
    });
    if (v.score >= (cuts[0] as number)) {
      g.firedAtMain++;
      const overlap = Math.max(0, Math.min(v.end, s.to) - Math.max(v.start, s.from));
      if (overlap >= 0.8 * (v.end - v.start)) g.inside++;
    }
  }
  return [...byGroup.entries()].map(([group, g]) => ({
    group,
    n: g.n,
    recall: g.fired.map((f) => f / g.n),
    spanInside: g.firedAtMain ? g.inside / g.firedAtMain : 0,
  }));
}

/** Median and p99 microseconds per call over `texts`, after a warm-up. */
export function speed(scorer: SuffixScorer, texts: readonly string[], rounds = 5): { p50: number; p99: number; chars: number } {
  for (const t of texts) scorer.score(t);
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const t of texts) {
      const start = performance.now();
      scorer.score(t);
      times.push((performance.now() - start) * 1000);
    }
  }
  times.sort((a, b) => a - b);
  const chars = texts.reduce((s, t) => s + t.length, 0) / texts.length;
  return { p50: times[Math.floor(times.length / 2)] as number, p99: times[Math.floor(times.length * 0.99)] as number, chars };
}

const pct = (x: number, digits = 1) => `${(100 * x).toFixed(digits)}%`;

export function negativeTable(stats: readonly NegativeStats[], cutNames: readonly string[]): string {
  const head = `| negative source | n | ${cutNames.map((c) => `FPR @ ${c}`).join(' | ')} | max score |\n|---|--:|${cutNames.map(() => '--:').join('|')}|--:|`;
  const rows = stats.map((s) => `| ${s.source} | ${s.n} | ${s.fired.map((f) => `${pct(f / s.n, 2)} (${f})`).join(' | ')} | ${s.max.toFixed(3)} |`);
  return [head, ...rows].join('\n');
}

export function positiveTable(stats: readonly PositiveStats[], cutNames: readonly string[]): string {
  const head = `| positives | n | ${cutNames.map((c) => `recall @ ${c}`).join(' | ')} | span in suffix |\n|---|--:|${cutNames.map(() => '--:').join('|')}|--:|`;
  const rows = stats.map((s) => `| ${s.group} | ${s.n} | ${s.recall.map((r) => pct(r)).join(' | ')} | ${pct(s.spanInside)} |`);
  return [head, ...rows].join('\n');
}
