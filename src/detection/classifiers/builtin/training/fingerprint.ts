import { createHash } from 'node:crypto';
import { normalizeText } from '../../../normalize';
import { FeatureHasher } from '../features';
import { ATTACK_SIGNALS } from '../heuristics';
import { splitWindows } from '../../windows';
import { windowFeatures } from '../window-features';
import type { SparseVector } from '../features';
import { EVERYDAY_FIXTURES, evaluationFixtureKeys, fixtureLists } from './dataset';
import { syntheticRows } from './synthetic';
import { DAVIDSON_HARASSMENT_KEEP, TWEET_NEGATIVE_WEIGHT } from './labels';
import { HASHING, LAMBDA, MAX_ITERATIONS, SOURCE_BALANCE_POWER, TOLERANCE } from './trainer';

/**
 * What the training code itself puts into model.json, as one hash, so that a change to it cannot leave the
 * committed artefact behind unnoticed (model-fingerprint.test.ts compares it with the manifest). The
 * datasets are outside the repository and have their own SHA-256 in the manifest; this covers what is
 * inside it:
 *
 *  - the hyper-parameters (hashing, regularisation, iterations, the weights of tweets) and the names of the heuristic signals;
 *  - the generated training rows that do not depend on the datasets (short turns, everyday requests, topic
 *    questions: their text, labels and source), after the exclusion of the hand-written everyday fixtures
 *    (a new fixture file removes the generated rows that repeat it);
 *  - the features training extracts (windowFeatures: hashed n-grams, heuristic signals, lexicon hits, the
 *    focus vector) for every window of those rows and of the everyday fixtures, i.e. the feature code
 *    (normalisation, n-grams, heuristics, lexicons) on ~3,000 varied texts.
 *
 * Not covered: a change to the trainer's labelling, weighting or calibration code that leaves the features
 * as they are, and heuristics none of those texts reach; `npm run train` after such a change all the same.
 */

export interface TrainingFingerprint {
  sha256: string;
  /** Texts featurised (generated rows + everyday fixture texts) and their windows. */
  texts: number;
  windows: number;
}

export function trainingFingerprint(): TrainingFingerprint {
  const hash = createHash('sha256');
  const hasher = new FeatureHasher(HASHING, ATTACK_SIGNALS.length);
  hash.update(JSON.stringify({ HASHING, LAMBDA, MAX_ITERATIONS, TOLERANCE, SOURCE_BALANCE_POWER, TWEET_NEGATIVE_WEIGHT, DAVIDSON_HARASSMENT_KEEP, signals: ATTACK_SIGNALS.map((s) => s.id) }));
  const generated = syntheticRows([], evaluationFixtureKeys());
  const fixtures = EVERYDAY_FIXTURES.flatMap((f) => Object.values(fixtureLists(f)).flat());
  let windows = 0;
  const featurise = (text: string) => {
    for (const w of splitWindows(normalizeText(text).text)) {
      const f = windowFeatures(hasher, w.text);
      vector(hash, f.vector);
      if (f.focus) vector(hash, f.focus);
      hash.update(`|${f.signals.hits.join(',')}|${f.lexicon.hits.join(',')}|`);
      windows++;
    }
  };
  for (const r of generated) {
    hash.update(JSON.stringify([r.file, r.source, r.labels, r.text]));
    featurise(r.text);
  }
  for (const text of fixtures) featurise(text);
  return { sha256: hash.digest('hex'), texts: generated.length + fixtures.length, windows };
}

function vector(hash: ReturnType<typeof createHash>, v: SparseVector): void {
  hash.update(new Uint8Array(v.index.buffer, v.index.byteOffset, v.length * 4));
  hash.update(new Uint8Array(v.value.buffer, v.value.byteOffset, v.length * 4));
  hash.update(`#${v.length}`);
}
