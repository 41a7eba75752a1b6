import type { SuffixLm } from '../suffix-lm';
import { FEATURES, forEachWindow, scanText, windowFeatures } from '../suffix-scan';

/**
 * Fitting the window scorer of the adversarial-suffix signal: window features of labelled texts and a
 * class-balanced, L2-regularised logistic regression on the standardised features (Newton's method: five
 * parameters, so exact and deterministic).
 */

export interface WindowParams {
  window: number;
  stride: number;
  minScored: number;
}

/**
 * Feature rows of the windows of `text` (every `stride` characters, as the scorer cuts them) that start
 * at or after `from`, over [0, to) — to must be the text's end or a multiple of the stride.
 */
export function collectWindows(lm: SuffixLm, soup: SuffixLm, text: string, p: WindowParams, rows: number[][], from = 0, to = text.length, hardest = Infinity): void {
  const scan = scanText(lm, soup, text, p.stride);
  const f = new Float64Array(FEATURES);
  const found: number[][] = [];
  forEachWindow(to, p.window, p.stride, from, (start, end) => {
    if (windowFeatures(scan, start, end, p.minScored, f)) found.push(Array.from(f));
  });
  // the hardest windows of a negative text: those with the most bits per character
  if (found.length > hardest) found.sort((a, b) => (b[0] as number) - (a[0] as number)).length = hardest;
  rows.push(...found);
}

export interface LogisticFit {
  mean: number[];
  std: number[];
  weights: number[];
  bias: number;
}

function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i] as number]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs((m[r] as number[])[c] as number) > Math.abs((m[p] as number[])[c] as number)) p = r;
    [m[c], m[p]] = [m[p] as number[], m[c] as number[]];
    const pivot = (m[c] as number[])[c] as number;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const k = ((m[r] as number[])[c] as number) / pivot;
      for (let j = c; j <= n; j++) (m[r] as number[])[j] = ((m[r] as number[])[j] as number) - k * ((m[c] as number[])[j] as number);
    }
  }
  return m.map((row, i) => (row[n] as number) / (row[i] as number));
}

export function fitLogistic(positives: number[][], negatives: number[][], rowWeights?: readonly number[], lambda = 1e-3, iterations = 30): LogisticFit {
  const all = [...positives, ...negatives];
  const d = FEATURES;
  const mean = Array.from({ length: d }, (_, j) => all.reduce((s, r) => s + (r[j] as number), 0) / all.length);
  const std = Array.from({ length: d }, (_, j) => Math.sqrt(all.reduce((s, r) => s + ((r[j] as number) - (mean[j] as number)) ** 2, 0) / all.length) || 1);
  const x = all.map((r) => [...r.map((v, j) => (v - (mean[j] as number)) / (std[j] as number)), 1]);
  const y = all.map((_, i) => (i < positives.length ? 1 : 0));
  const wPos = all.length / (2 * positives.length);
  const wNeg = all.length / (2 * negatives.length);
  const beta = new Array<number>(d + 1).fill(0);
  for (let it = 0; it < iterations; it++) {
    const g = beta.map((b, j) => (j < d ? lambda * all.length * b : 0));
    const h = beta.map((_, i) => beta.map((__, j) => (i === j && i < d ? lambda * all.length : 0)));
    for (let i = 0; i < x.length; i++) {
      const xi = x[i] as number[];
      let z = 0;
      for (let j = 0; j <= d; j++) z += (beta[j] as number) * (xi[j] as number);
      const p = 1 / (1 + Math.exp(-z));
      const w = (y[i] === 1 ? wPos : wNeg) * (rowWeights?.[i] ?? 1);
      const r = w * (p - (y[i] as number));
      const s = w * p * (1 - p);
      for (let a = 0; a <= d; a++) {
        g[a] = (g[a] as number) + r * (xi[a] as number);
        const ha = h[a] as number[];
        for (let b = 0; b <= d; b++) ha[b] = (ha[b] as number) + s * (xi[a] as number) * (xi[b] as number);
      }
    }
    const step = solve(h, g);
    let change = 0;
    for (let j = 0; j <= d; j++) {
      beta[j] = (beta[j] as number) - (step[j] as number);
      change = Math.max(change, Math.abs(step[j] as number));
    }
    if (change < 1e-9) break;
  }
  return { mean, std, weights: beta.slice(0, d), bias: beta[d] as number };
}

/** The value v such that at most `rate` of `values` are > v (v is one of them, or -Infinity). */
export function upperQuantile(values: readonly number[], rate: number): number {
  const sorted = [...values].sort((a, b) => b - a);
  const allowed = Math.floor(rate * sorted.length);
  return allowed < sorted.length ? (sorted[allowed] as number) : -Infinity;
}

/** The logit of a feature row under a fit. */
export function logitOf(fit: LogisticFit, row: readonly number[]): number {
  let z = fit.bias;
  for (let j = 0; j < FEATURES; j++) z += (fit.weights[j] as number) * (((row[j] as number) - (fit.mean[j] as number)) / (fit.std[j] as number));
  return z;
}

/**
 * A second fit that leans on the operating point: negatives in the top `negTail` of the first fit's
 * logits and positives below the negatives' top `posFloor` weigh `boost` times more (rows in the
 * order positives then negatives, as fitLogistic takes them).
 */
export function tailWeights(fit: LogisticFit, positives: number[][], negatives: number[][], negTail: number, posFloor: number, boost: number): number[] {
  const negLogits = negatives.map((r) => logitOf(fit, r));
  const hardNeg = upperQuantile(negLogits, negTail);
  const floor = upperQuantile(negLogits, posFloor);
  return [...positives.map((r) => (logitOf(fit, r) <= floor ? boost : 1)), ...negLogits.map((z) => (z >= hardNeg ? boost : 1))];
}
