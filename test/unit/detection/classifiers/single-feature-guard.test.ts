import { CLASSIFIER_TYPES } from '../../../../src/detection/classifiers/backend';
import { loadBuiltinModel } from '../../../../src/detection/classifiers/builtin/builtin-backend';
import { ATTACK_HEADS, BuiltinModel, SINGLE_FEATURE_CAP } from '../../../../src/detection/classifiers/builtin/builtin-model';
import type { SparseVector } from '../../../../src/detection/classifiers/builtin/features';
import type { BuiltinArtefact } from '../../../../src/detection/classifiers/builtin/model-format';
import artefact from '../../../../src/detection/classifiers/builtin/model/model.json';
import { splitWindows } from '../../../../src/detection/classifiers/windows';
import { evaluate } from '../../../../src/detection/engine';
import { blockPolicy } from '../../../../tools/bench-procs';
import { parityTexts } from './parity-texts';

/**
 * The single-feature guard (BuiltinModel.logits): no one hashed feature adds more than
 * SINGLE_FEATURE_CAP logits to a moderation head. Found through bench:perf: one of its benign prompts,
 * "(request 230pz)" being the only difference, was blocked as hate (0.79) because the word "230pz"
 * hashes into the bucket of a slur's character 4-gram, the hate head's largest weight.
 */

const unguarded = new BuiltinModel(artefact as unknown as BuiltinArtefact, Infinity);
const guarded = loadBuiltinModel();
const HATE = 'moderated_content/hate';
const L2 = 0.75;

const COLLIDING =
  'One more thing (request 230pz). Compare walking and cycling as ways to get some light exercise after work. Rewrite this paragraph so that it sounds friendlier and a little shorter. What is a sensible way to organise recipes so they are easy to find';

/** Each hashed entry's own contribution to every head, in logits (one-entry vectors through the unguarded model, minus its bias). */
function largestContributions(v: SparseVector, buckets: number): Float64Array {
  const bias = unguarded.logits({ index: new Int32Array(0), value: new Float32Array(0), length: 0 });
  const top = new Float64Array(unguarded.heads.length);
  for (let i = 0; i < v.length; i++) {
    if ((v.index[i] as number) >= buckets) continue;
    const z = unguarded.logits({ index: Int32Array.of(v.index[i] as number), value: Float32Array.of(v.value[i] as number), length: 1 });
    for (let h = 0; h < top.length; h++) top[h] = Math.max(top[h] as number, (z[h] as number) - (bias[h] as number));
  }
  return top;
}

describe('builtin model: single-feature guard', () => {
  it('the colliding benign prompt: hate at L2 without the guard, below it with it, and not blocked end to end', async () => {
    expect(unguarded.scoreWindow(COLLIDING)[HATE]).toBeGreaterThanOrEqual(L2);
    expect(guarded.scoreWindow(COLLIDING)[HATE]).toBeLessThan(L2);
    // The same prompt without the id is far from L2 either way: the id alone made the verdict.
    const plain = COLLIDING.replace(' (request 230pz)', '');
    expect(unguarded.scoreWindow(plain)[HATE]).toBeLessThan(0.5);
    const r = await evaluate({ text: COLLIDING, direction: 'input', config: blockPolicy([HATE, 'moderated_content/harassment'], 'single-feature-guard') });
    expect(r.blocked).toBe(false);
  });

  it('takes off exactly the largest hashed feature’s excess over the cap, from moderation heads only', () => {
    const buckets = 1 << unguarded.hasher.params.bits;
    let windows = 0;
    let changed = 0;
    for (const text of [...parityTexts(), COLLIDING]) {
      for (const w of splitWindows(text)) {
        const f = unguarded.features(w.text);
        const before = unguarded.logits(f.vector);
        const after = guarded.logits(f.vector);
        const top = largestContributions(f.vector, buckets);
        unguarded.heads.forEach((head, h) => {
          const excess = (ATTACK_HEADS as readonly string[]).includes(head.name) ? 0 : Math.max(0, (top[h] as number) - SINGLE_FEATURE_CAP);
          expect((before[h] as number) - (after[h] as number)).toBeCloseTo(excess, 9);
          if (excess > 0) changed++;
        });
        windows++;
      }
    }
    expect(windows).toBeGreaterThan(150);
    // The guard did something on this set (the colliding prompt at least), so the check above is not vacuous.
    expect(changed).toBeGreaterThan(0);
  });

  it('never raises a score', () => {
    for (const text of parityTexts()) {
      for (const w of splitWindows(text)) {
        const a = unguarded.scoreWindow(w.text);
        const b = guarded.scoreWindow(w.text);
        for (const t of CLASSIFIER_TYPES) expect(b[t] as number).toBeLessThanOrEqual((a[t] as number) + 1e-12);
      }
    }
  });
});
