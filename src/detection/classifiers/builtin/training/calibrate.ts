import type { CalibrationSpec } from '../calibration';
import { cutoffForFpr } from './metrics';

/**
 * Fits a head's calibration knots (calibration.ts) on the calibration split, from the head's raw text
 * scores (max logit over the text's windows). Two objectives, matching what each level must mean:
 *
 * 'fpr' (prompt_attack, jailbreak: the target is recall at a benign false-positive budget)
 *    L1 = benign FPR 0.1%, L2 = 0.5%, L3 = 2%, L4 = the lower of benign FPR 6% and the score that keeps
 *    95% of the positives, but never beyond benign FPR 15%.
 * 'f1' (moderation heads: the target is F1 at L2)
 *    L2 = the F1-optimal score on the calibration split, but no lower than benign FPR 0.5%;
 *    L1 = no lower than benign FPR 0.1% and than 0.1% FPR over all negatives;
 *    L3 = the score keeping 85% of positives, but no lower than benign FPR 2%; L4 as for 'fpr'.
 *
 * The budgets sit below the targets (L1 ≤ 0.5%, L2 ≤ 2%) because a 1,300-row benign calibration set
 * estimates them with noise (an L1 budget of 0.4% gave jailbreak 0.7% on the held-out benign prompts).
 * Knots are then ordered outward from L2 (L1 ≥ L2 + gap, L3 ≤ L2 − gap, …).
 *
 * Platt scaling was the first design (knot = Platt⁻¹(cut-off), capped by the budgets) and was dropped by
 * measurement: Platt levels follow the class prior of the training mix, which is arbitrary here; at
 * p = 0.75 prompt_attack kept only 63% recall at 1.25% benign FPR and the rare moderation categories
 * 20–48% recall.
 */

export type CalibrationObjective = 'fpr' | 'f1';

/**
 * Issue 15 moved the budgets down (L2 1.75% → 0.5%): measured on benign sources never trained on
 * (eval-lofo.ts), the 1.75% budget let 1.8% of ordinary and 7.7% of injection-looking prompts through
 * at L2, far above the ≤ 1% target; unseen sources run at several times the calibration budget.
 */
export const BENIGN_FPR = { L1: 0.001, L2: 0.005, L3: 0.02, L4: 0.06, L4_MAX: 0.15 } as const;
export const L1_ALL_NEGATIVES_FPR = 0.001;
export const L3_RECALL = 0.85;
export const L4_RECALL = 0.95;
const GAP = 0.05;

export interface CalibrationData {
  positives: number[];
  negatives: number[];
  /** Benign texts (no label at all): the false-positive budgets apply to these. */
  benign: number[];
  /**
   * Per benign text (aligned with `benign`), the confidence the final score already gets from elsewhere
   * (prompt_attack = max(its head, jailbreak, heuristic floors)): the budgets then hold for the
   * combination, not just the head.
   */
  benignFloor?: number[];
}

export function fitCalibration(data: CalibrationData, objective: CalibrationObjective): CalibrationSpec {
  const q = (fpr: number, level: number) => budgetCutoff(data, fpr, CUTOFF_OF_LEVEL[level] as number);
  const keep = (recall: number) => quantile(data.positives, 1 - recall);
  const l4 = Math.max(q(BENIGN_FPR.L4_MAX, 4), Math.min(q(BENIGN_FPR.L4, 4), keep(L4_RECALL)));
  let k2: number;
  let k1: number;
  let k3: number;
  if (objective === 'fpr') {
    k1 = q(BENIGN_FPR.L1, 1);
    k2 = q(BENIGN_FPR.L2, 2);
    k3 = q(BENIGN_FPR.L3, 3);
  } else {
    k2 = Math.max(f1Optimal(data.positives, data.negatives), q(BENIGN_FPR.L2, 2));
    k1 = Math.max(q(BENIGN_FPR.L1, 1), cutoffForFpr(data.negatives, L1_ALL_NEGATIVES_FPR));
    k3 = Math.max(q(BENIGN_FPR.L3, 3), keep(L3_RECALL));
  }
  k1 = Math.max(k1, k2 + GAP);
  k3 = Math.min(k3, k2 - GAP);
  const k4 = Math.min(l4, k3 - GAP);
  return { knots: [k4, k3, k2, k1] };
}

const CUTOFF_OF_LEVEL = [NaN, 0.9, 0.75, 0.5, 0.3];

/**
 * The head score above which benign texts may fire so that, together with the texts that already fire
 * from elsewhere (benignFloor >= cut-off), at most `fpr` of the benign texts fire.
 */
function budgetCutoff(data: CalibrationData, fpr: number, cutoff: number): number {
  if (!data.benignFloor) return cutoffForFpr(data.benign, fpr);
  const floors = data.benignFloor;
  const rest = data.benign.filter((_, i) => (floors[i] as number) < cutoff);
  const allowed = Math.floor(fpr * data.benign.length) - (data.benign.length - rest.length);
  if (allowed < 0 || rest.length === 0) return Math.max(...data.benign) + 1e-6;
  return cutoffForFpr(rest, allowed / rest.length);
}

/** The p-quantile (0..1) of `values` (nearest rank). */
function quantile(values: readonly number[], p: number): number {
  if (values.length === 0) return Infinity;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.floor(p * sorted.length)))] as number;
}

/** The cut-off (a score present in the data) that maximises F1; ties → the higher cut-off. */
export function f1Optimal(positives: readonly number[], negatives: readonly number[]): number {
  const items = [...positives.map((s) => ({ s, p: 1 })), ...negatives.map((s) => ({ s, p: 0 }))].sort((a, b) => b.s - a.s);
  let tp = 0;
  let fp = 0;
  let best = { f1: -1, cut: Infinity };
  for (let i = 0; i < items.length; i++) {
    const it = items[i] as { s: number; p: number };
    if (it.p) tp++;
    else fp++;
    const next = items[i + 1];
    if (next && next.s === it.s) continue; // a cut-off sits between distinct scores
    const f1 = (2 * tp) / (2 * tp + fp + (positives.length - tp));
    if (f1 > best.f1) best = { f1, cut: it.s };
  }
  return best.cut;
}
