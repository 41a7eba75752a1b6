/**
 * Binary classification metrics over scores (higher = more positive). Used by the training script
 * (calibration, model selection) and by the evaluation tool.
 */

export interface Scored {
  score: number;
  positive: boolean;
}

/** ROC-AUC by the rank-sum (Mann-Whitney) statistic, ties counted as half. NaN without both classes. */
export function rocAuc(items: readonly Scored[]): number {
  const sorted = [...items].sort((a, b) => a.score - b.score);
  let pos = 0;
  let neg = 0;
  let rankSum = 0;
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j < sorted.length && (sorted[j] as Scored).score === (sorted[i] as Scored).score) j++;
    const avgRank = (i + 1 + j) / 2;
    for (let k = i; k < j; k++) {
      if ((sorted[k] as Scored).positive) {
        pos++;
        rankSum += avgRank;
      } else neg++;
    }
    i = j;
  }
  if (pos === 0 || neg === 0) return NaN;
  return (rankSum - (pos * (pos + 1)) / 2) / (pos * neg);
}

export interface AtCutoff {
  cutoff: number;
  tp: number;
  fp: number;
  fn: number;
  tn: number;
  precision: number;
  recall: number;
  f1: number;
  fpr: number;
}

export function atCutoff(items: readonly Scored[], cutoff: number): AtCutoff {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  let tn = 0;
  for (const it of items) {
    const fired = it.score >= cutoff;
    if (it.positive) fired ? tp++ : fn++;
    else fired ? fp++ : tn++;
  }
  const precision = tp + fp > 0 ? tp / (tp + fp) : NaN;
  const recall = tp + fn > 0 ? tp / (tp + fn) : NaN;
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  return { cutoff, tp, fp, fn, tn, precision, recall, f1, fpr: fp + tn > 0 ? fp / (fp + tn) : NaN };
}

/**
 * The lowest score s such that at most `fpr` of the negatives score >= s (the (k+1)-th largest negative,
 * nudged up, where k = floor(fpr · negatives)).
 */
export function cutoffForFpr(negatives: readonly number[], fpr: number): number {
  if (negatives.length === 0) return -Infinity;
  const sorted = [...negatives].sort((a, b) => b - a);
  const k = Math.floor(fpr * sorted.length);
  if (k >= sorted.length) return -Infinity;
  const v = sorted[k] as number;
  return v + Math.max(1e-9, Math.abs(v) * 1e-9);
}

/** Recall at the cut-off that gives at most `fpr` on the negatives of the same items. */
export function recallAtFpr(items: readonly Scored[], fpr: number): number {
  const cut = cutoffForFpr(
    items.filter((i) => !i.positive).map((i) => i.score),
    fpr,
  );
  return atCutoff(items, cut).recall;
}

export const LENGTH_BUCKETS = [
  { label: '< 200', min: 0, max: 200 },
  { label: '200–1k', min: 200, max: 1000 },
  { label: '1k–3k', min: 1000, max: 3000 },
  { label: '≥ 3k', min: 3000, max: Infinity },
] as const;

export function lengthBucket(length: number): string {
  return (LENGTH_BUCKETS.find((b) => length >= b.min && length < b.max) ?? LENGTH_BUCKETS[3]).label;
}
