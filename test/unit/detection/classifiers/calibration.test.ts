import { calibrate, type CalibrationSpec } from '../../../../src/detection/classifiers/builtin/calibration';
import { BENIGN_FPR, f1Optimal, fitCalibration } from '../../../../src/detection/classifiers/builtin/training/calibrate';
import { atCutoff, cutoffForFpr, rocAuc } from '../../../../src/detection/classifiers/builtin/training/metrics';
import { trainLogistic } from '../../../../src/detection/classifiers/builtin/training/logistic';

const spec: CalibrationSpec = { knots: [-1, 0, 1, 2] };

describe('calibration map', () => {
  it('lands the knots on the cut-offs and is monotone, continuous and within 0..1', () => {
    expect(calibrate(-1, spec)).toBeCloseTo(0.3, 10);
    expect(calibrate(0, spec)).toBeCloseTo(0.5, 10);
    expect(calibrate(1, spec)).toBeCloseTo(0.75, 10);
    expect(calibrate(2, spec)).toBeCloseTo(0.9, 10);
    let last = -1;
    for (let z = -30; z <= 30; z += 0.01) {
      const c = calibrate(z, spec);
      expect(c).toBeGreaterThanOrEqual(last);
      expect(c).toBeGreaterThanOrEqual(0);
      expect(c).toBeLessThanOrEqual(1);
      last = c;
    }
    expect(calibrate(-1 - 1e-9, spec)).toBeCloseTo(0.3, 6);
    expect(calibrate(2 + 1e-9, spec)).toBeCloseTo(0.9, 6);
    expect(calibrate(Number.NaN, spec)).toBe(0);
  });
});

describe('calibration fitting', () => {
  const rand = (() => {
    let s = 7;
    return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  })();
  const normal = () => Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand());
  const negatives = Array.from({ length: 4000 }, () => normal());
  const positives = Array.from({ length: 1000 }, () => 3 + normal());

  const fpr = (k: number) => negatives.filter((x) => x >= k).length / negatives.length;
  const recall = (k: number) => positives.filter((x) => x >= k).length / positives.length;

  it.each(['fpr', 'f1'] as const)('objective %s: knots increase and respect the benign FPR budgets (L1 ≤ 0.5%%, L2 ≤ 2%%)', (objective) => {
    const { knots } = fitCalibration({ positives, negatives, benign: negatives }, objective);
    expect(knots[0]).toBeLessThan(knots[1]);
    expect(knots[1]).toBeLessThan(knots[2]);
    expect(knots[2]).toBeLessThan(knots[3]);
    expect(fpr(knots[3])).toBeLessThanOrEqual(0.005);
    expect(fpr(knots[2])).toBeLessThanOrEqual(0.02);
    expect(recall(knots[0])).toBeGreaterThanOrEqual(0.95);
  });

  it('the fpr objective spends the L2 budget (BENIGN_FPR.L2 = 1.75% benign FPR)', () => {
    const { knots } = fitCalibration({ positives, negatives, benign: negatives }, 'fpr');
    expect(BENIGN_FPR.L2).toBeLessThan(0.02);
    expect(fpr(knots[2])).toBeCloseTo(BENIGN_FPR.L2, 3);
  });

  it('f1Optimal finds the best F1 cut-off', () => {
    expect(f1Optimal([3, 4, 5], [1, 2, 3.5])).toBe(3);
    expect(f1Optimal([5, 6], [1, 2])).toBe(5);
  });
});

describe('metrics', () => {
  it('ROC-AUC with ties, cut-off metrics and FPR cut-offs', () => {
    const items = [
      { score: 0.9, positive: true },
      { score: 0.8, positive: false },
      { score: 0.8, positive: true },
      { score: 0.1, positive: false },
    ];
    expect(rocAuc(items)).toBeCloseTo(0.875, 10);
    expect(atCutoff(items, 0.8)).toMatchObject({ tp: 2, fp: 1, fn: 0, tn: 1, recall: 1, fpr: 0.5 });
    expect(cutoffForFpr([0.1, 0.2, 0.3, 0.4], 0.25)).toBeGreaterThan(0.3);
  });
});

describe('logistic regression (L-BFGS)', () => {
  it('separates a toy problem deterministically', () => {
    // feature 0 → positive, feature 1 → negative
    const rows = 40;
    const rowPtr = Int32Array.from({ length: rows + 1 }, (_, i) => i);
    const index = Int32Array.from({ length: rows }, (_, i) => i % 2);
    const value = new Float32Array(rows).fill(1);
    const input = {
      matrix: { rowPtr, index, value, rows, dimension: 2 },
      rows: Int32Array.from({ length: rows }, (_, i) => i),
      targets: Uint8Array.from({ length: rows }, (_, i) => (i % 2 === 0 ? 1 : 0)),
      weights: new Float64Array(rows).fill(1),
      lambda: 1e-3,
      maxIterations: 100,
    };
    const a = trainLogistic(input);
    const b = trainLogistic(input);
    expect(a.weights[0]).toBeGreaterThan(1);
    expect(a.weights[1]).toBeLessThan(-1);
    expect([...a.weights, a.bias]).toEqual([...b.weights, b.bias]);
  });
});
