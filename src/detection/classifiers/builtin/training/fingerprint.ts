import { createHash } from 'node:crypto';
import { ATTACK_SIGNALS } from '../heuristics';
import { EVERYDAY_FIXTURES, evaluationFixtureKeys, fixtureLists, textKey, type Row } from './dataset';
import { featurizeRows } from './featurize';
import { DAVIDSON_HARASSMENT_KEEP, TWEET_NEGATIVE_WEIGHT } from './labels';
import { syntheticRows } from './synthetic';
import { HASHING, LAMBDA, MAX_ITERATIONS, SOURCE_BALANCE_POWER, TOLERANCE, trainingHasher } from './trainer';

/**
 * What the training code itself puts into model.json, as one hash, so that a change to it cannot leave the
 * committed artefact behind unnoticed (manifest.test.ts compares it with the manifest). The datasets are
 * outside the repository and have their own SHA-256 in the manifest; this covers what is inside it:
 *
 *  - the hyper-parameters (hashing, regularisation, iterations, the weights of tweets) and the names of the heuristic signals;
 *  - the generated training rows that do not depend on the datasets (short turns, everyday requests, topic
 *    questions: their text, labels and source), after the exclusion of the hand-written everyday fixtures
 *    (a new fixture file removes the generated rows that repeat it);
 *  - the features training extracts from those rows and from the everyday fixtures, by training's own
 *    featurizeRows (hashed n-grams, heuristic signals, lexicon hits, focus vectors, per window), i.e. the
 *    feature code (normalisation, windows, n-grams, heuristics, lexicons) on ~4,600 varied texts.
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
  hash.update(JSON.stringify({ HASHING, LAMBDA, MAX_ITERATIONS, TOLERANCE, SOURCE_BALANCE_POWER, TWEET_NEGATIVE_WEIGHT, DAVIDSON_HARASSMENT_KEEP, signals: ATTACK_SIGNALS.map((s) => s.id) }));
  const generated = syntheticRows([], evaluationFixtureKeys());
  for (const r of generated) hash.update(JSON.stringify([r.file, r.source, r.labels, r.text]));
  const fixtures: Row[] = EVERYDAY_FIXTURES.flatMap((f) => Object.values(fixtureLists(f)).flat()).map((text) => ({
    file: 'moderation',
    text,
    source: 'everyday_fixture',
    labels: [],
    key: textKey(text),
    split: 'train',
  }));
  const rows = [...generated, ...fixtures];
  const { matrix, windowStart, focusOf, evidence } = featurizeRows(rows, trainingHasher());
  for (const a of [matrix.rowPtr, matrix.index, matrix.value, windowStart, focusOf]) hash.update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  for (const e of evidence) hash.update(`|${e.signals.hits.join(',')}|${e.lexicon.hits.join(',')}`);
  return { sha256: hash.digest('hex'), texts: rows.length, windows: windowStart[rows.length] as number };
}
