import fs from 'node:fs';
import path from 'node:path';
import { BuiltinModel } from '#src/detection/classifiers/builtin/builtin-model';
import { loadDatasets, sha256 } from '#src/detection/classifiers/builtin/training/dataset';
import { evaluateHeldout } from '#src/detection/classifiers/builtin/training/evaluation';
import { trainingFingerprint } from '#src/detection/classifiers/builtin/training/fingerprint';
import { heuristicReport } from '#src/detection/classifiers/builtin/training/heuristic-report';
import { summarise, writeManifest, type Manifest } from '#src/detection/classifiers/builtin/training/manifest';
import { assignSplits, CALIBRATION_FRACTION, HELDOUT_FRACTION } from '#src/detection/classifiers/builtin/training/split';
import { HASHING, LAMBDA, MAX_ITERATIONS, SOURCE_BALANCE_POWER, TOLERANCE, trainAll } from '#src/detection/classifiers/builtin/training/trainer';
import { DAVIDSON_HARASSMENT_KEEP, TWEET_NEGATIVE_WEIGHT } from '#src/detection/classifiers/builtin/training/labels';
import { cliArg as arg, datasetsDir, MODEL_DIR, PACKAGE_ROOT } from './classifier-report';
import { WINDOW_OVERLAP, WINDOW_SIZE } from '#src/detection/classifiers/windows';

/**
 * `npm run train`: trains the builtin classifier heads from the labelled datasets (--data <dir> or DATASETS_DIR) and
 * writes src/detection/classifiers/builtin/model/{model.json,manifest.json} (or --out <dir>).
 * Deterministic: the same data gives the same model.json byte for byte (manifest.json also records the
 * date and timings). Takes a few minutes on one core.
 */

function main(): void {
  const dataDir = datasetsDir();
  const outDir = path.resolve(arg('out') ?? MODEL_DIR);
  const started = Date.now();
  const log = (msg: string) => console.log(`[train ${((Date.now() - started) / 1000).toFixed(1)}s] ${msg}`);
  const data = loadDatasets(dataDir);
  log(`read ${data.rows.length} rows from ${dataDir}`);
  const split = assignSplits(data.rows);
  log(`split: ${JSON.stringify(split)}`);
  const result = trainAll(data.rows, log);
  const modelJson = `${JSON.stringify(result.artefact)}\n`;
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'model.json'), modelJson);
  log(`wrote model.json (${(modelJson.length / 1024).toFixed(0)} KiB)`);
  const model = new BuiltinModel(result.artefact);
  const evaluation = evaluateHeldout(model, data.rows);
  log('evaluated the held-out split');
  const manifest: Manifest = {
    model: 'builtin-linear/1',
    family:
      `L2-regularised logistic regression (L-BFGS, full batch) per head over hashed word 1-${HASHING.wordMax}-grams + character ${HASHING.charMin}-${HASHING.charMax}-grams ` +
      '(sublinear TF, L2-normalised per block) + heuristic signal features; int8 weights; piecewise-linear calibration knots (benign-FPR budgets / F1-optimal)',
    createdAt: new Date().toISOString(),
    trainingSeconds: Math.round((Date.now() - started) / 1000),
    data: { directory: path.relative(PACKAGE_ROOT, dataDir), files: data.files },
    split: { heldoutFraction: HELDOUT_FRACTION, calibrationFraction: CALIBRATION_FRACTION, ...split, counts: splitCounts(data.rows) },
    hyperParameters: {
      hashing: HASHING,
      windows: { size: WINDOW_SIZE, overlap: WINDOW_OVERLAP },
      lambda: LAMBDA,
      maxIterations: MAX_ITERATIONS,
      tolerance: TOLERANCE,
      classWeights: `balanced per head; attack heads' positives weighted by rows(source)^-${SOURCE_BALANCE_POWER}; a row's weight is split evenly over its windows`,
      tweetNegativeWeight: TWEET_NEGATIVE_WEIGHT,
      davidsonHarassmentKeep: DAVIDSON_HARASSMENT_KEEP,
    },
    heads: result.heads,
    artefact: { file: 'model.json', bytes: Buffer.byteLength(modelJson), sha256: sha256(modelJson) },
    trainingCode: trainingFingerprint(),
    heuristics: heuristicReport(data.rows),
    heldout: summarise(evaluation),
  };
  writeManifest(path.join(outDir, 'manifest.json'), manifest);
  log(`wrote manifest.json; done in ${manifest.trainingSeconds} s`);
}

function splitCounts(rows: ReturnType<typeof loadDatasets>['rows']): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const r of rows) {
    const file = (out[r.file] ??= { train: 0, calibration: 0, heldout: 0 });
    file[r.split] = (file[r.split] ?? 0) + 1;
  }
  return out;
}

main();
