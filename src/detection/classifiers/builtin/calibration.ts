/**
 * Calibration of a head's raw logit z into a confidence that the global cut-offs (decide.ts: L1 0.90,
 * L2 0.75, L3 0.50, L4 0.30) can be applied to.
 *
 * The map is monotone and piecewise linear through four knots z4 < z3 < z2 < z1 that land on the
 * cut-offs (z4 → 0.30, z3 → 0.50, z2 → 0.75, z1 → 0.90), with exponential tails below z4 (towards 0)
 * and above z1 (towards 1) whose slopes match the neighbouring segments. The knots are fitted on the
 * calibration split (never the training rows, never the held-out rows) so that each level means what
 * it says: L1 very few false positives on benign text, L2 few, L4 almost every positive
 * (training/calibrate.ts has the exact rules and why Platt scaling was not kept).
 */

export const CALIBRATION_CUTOFFS = [0.3, 0.5, 0.75, 0.9] as const;

export interface CalibrationSpec {
  /** Raw-logit knots for the confidences in CALIBRATION_CUTOFFS, strictly increasing. */
  knots: [number, number, number, number];
}

export function calibrate(z: number, spec: CalibrationSpec): number {
  const k = spec.knots;
  const c = CALIBRATION_CUTOFFS;
  if (Number.isNaN(z)) return 0;
  if (z <= k[0]) {
    // Left tail: c0 · exp((z - k0) / t), t chosen so the slope at k0 equals the first segment's.
    const slope = (c[1] - c[0]) / (k[1] - k[0]);
    const t = c[0] / slope;
    return c[0] * Math.exp((z - k[0]) / t);
  }
  if (z >= k[3]) {
    const slope = (c[3] - c[2]) / (k[3] - k[2]);
    const t = (1 - c[3]) / slope;
    return 1 - (1 - c[3]) * Math.exp(-(z - k[3]) / t);
  }
  const lo = z <= k[1] ? 0 : z <= k[2] ? 1 : 2;
  const z0 = k[lo] as number;
  const z1 = k[lo + 1] as number;
  const c0 = c[lo] as number;
  const c1 = c[lo + 1] as number;
  return c0 + ((z - z0) / (z1 - z0)) * (c1 - c0);
}
