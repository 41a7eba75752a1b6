import { isDetectorType } from '../../src/shared/detector-catalog';
import { EVAL_FLOORS, floorFor } from '../../tools/eval-floors';
import { loadFixtures, scores } from '../../tools/eval';

/** The labelled corpus is well-formed (the accuracy itself is measured by `npm run eval`, not here). */
describe('detection fixtures', () => {
  const { cases, errors } = loadFixtures();

  it('parses every line of every test/fixtures/detection/*.jsonl', () => {
    expect(errors).toEqual([]);
    expect(cases.length).toBeGreaterThan(0);
  });

  it('uses unique ids and catalog detector types', () => {
    const ids = cases.map((c) => c.id);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
    expect([...new Set(cases.map((c) => c.detector))].filter((d) => !isDetectorType(d))).toEqual([]);
  });

  it('has at least 100 e-mail cases, positives and hard negatives', () => {
    const email = cases.filter((c) => c.detector === 'pii/email');
    expect(email.length).toBeGreaterThanOrEqual(100);
    expect(email.filter((c) => c.label === 1).length).toBeGreaterThanOrEqual(50);
    expect(email.filter((c) => c.label === 0).length).toBeGreaterThanOrEqual(40);
  });
});

describe('eval helpers', () => {
  it('documents a floor per signature detector, and the secrets family', () => {
    expect(EVAL_FLOORS['pii/email']).toBe(0.98);
    expect(floorFor('pii/phone_number')).toBe(0.95);
    expect(floorFor('pii/name')).toBe(0.85);
    expect(floorFor('secrets/anything')).toBe(0.9);
    expect(floorFor('jailbreak')).toBeUndefined();
  });

  it('computes precision, recall and F1', () => {
    expect(scores({ tp: 8, fp: 2, fn: 0, tn: 10 })).toMatchObject({ precision: 0.8, recall: 1 });
    expect(scores({ tp: 8, fp: 2, fn: 0, tn: 10 }).f1).toBeCloseTo(0.8889, 3);
    expect(scores({ tp: 0, fp: 0, fn: 5, tn: 1 })).toMatchObject({ precision: 1, recall: 0, f1: 0 });
  });
});
