import { DEFAULT_HASHING, FeatureHasher, type HashingParams } from '../features';
import { ATTACK_HEADS } from '../builtin-model';
import { ATTACK_SIGNALS } from '../heuristics';
import { ARTEFACT_FORMAT, packWeights, unpackWeights, type BuiltinArtefact, type HeadSpec } from '../model-format';
import { HEADS, type HeadName } from '../taxonomy';
import { fitCalibration } from './calibrate';
import type { Row } from './dataset';
import { featurizeRows, type FeaturizedRows } from './featurize';
import { keptForTraining, labellerFor, type Labeller } from './labels';
import { dot, trainLogistic } from './logistic';
import { rocAuc } from './metrics';

/**
 * Trains every head on the 'train' split, calibrates on the 'calibration' split and packs the artefact.
 * Deterministic: full-batch L-BFGS from zero, no sampling beyond hash-based subsets.
 */

/**
 * Character 4-grams only, into 2^17 buckets: the speed targets need it (bench/CLASSIFIERS.md). Measured
 * against character 3–4-grams in 2^18 buckets (same data, same trainer, held-out split): non-zeros per
 * README-prose window 2,100 → 1,330, hashing + heads about half the time (the weight rows fit the CPU
 * caches twice as well); held-out ROC-AUC per head within ±0.004 (prompt_attack 0.9783 → 0.9782, recall at
 * the calibration split's 1.75% FPR cut 0.759 → 0.757; jailbreak 0.9860 → 0.9863; hate 0.9125 → 0.9083;
 * sexual 0.9941 → 0.9924; self_harm 0.9950 → 0.9960). Earlier: 3–4-grams instead of 3–5 (a third fewer
 * hashes, AUC within ±0.003).
 */
export const HASHING: HashingParams = { ...DEFAULT_HASHING, keepPunctuation: true, bits: 17, charMin: 4, charMax: 4 };

/** L2 strength per head (chosen on the calibration split, see bench/CLASSIFIERS.md). */
export const LAMBDA: Readonly<Record<HeadName, number>> = {
  prompt_attack: 1e-5,
  jailbreak: 1e-5,
  harassment: 1e-5,
  hate: 1e-5,
  sexual: 1e-5,
  sexual_minors: 1e-5,
  violence: 1e-5,
  self_harm: 1e-5,
  self_harm_instructions: 1e-5,
  illicit: 1e-5,
  illicit_violent: 1e-5,
};
export const MAX_ITERATIONS = 150;
/** Source balancing of the attack heads' positives (trainingSet): weight ∝ rows(source)^-power. */
export const SOURCE_BALANCE_POWER = 0.5;
export const TOLERANCE = 1e-5;

export interface HeadReport {
  name: HeadName;
  lambda: number;
  iterations: number;
  loss: number;
  trainRows: { positive: number; negative: number };
  calibrationRows: { positive: number; negative: number; benign: number };
  /** ROC-AUC on the calibration split with the float weights and with the committed int8 weights. */
  calibrationAuc?: { float: number; int8: number };
  seconds: number;
}

export interface TrainResult {
  artefact: BuiltinArtefact;
  heads: HeadReport[];
}

/**
 * `reuse`: heads not in `heads` are copied from this artefact (weights and calibration as they are), so an
 * evaluation can retrain the attack heads alone and still score with the moderation heads (eval-lofo.ts).
 */
/** The feature hasher training extracts with (HASHING, one feature per heuristic signal). */
export function trainingHasher(): FeatureHasher {
  return new FeatureHasher(HASHING, ATTACK_SIGNALS.length);
}

export function trainAll(rows: Row[], log: (msg: string) => void, heads: readonly HeadName[] = HEADS, reuse?: BuiltinArtefact): TrainResult {
  const hasher = trainingHasher();
  let t = Date.now();
  const usable = rows.filter((r) => r.split !== 'heldout');
  const features = featurizeRows(usable, hasher);
  const windows = features.windowStart[usable.length] as number;
  log(`featurised ${usable.length} rows: ${windows} windows + ${features.matrix.rows - windows} focus rows, ${features.matrix.index.length} non-zeros (${secondsSince(t)} s)`);
  const duplicates = new Set(rows.filter((r) => r.file === 'moderation').map((r) => r.key));
  const scratch = new Float32Array(features.matrix.value.length);
  const trained: TrainedHead[] = [];
  for (const name of heads) {
    t = Date.now();
    const labeller = labellerFor(name, duplicates);
    const set = trainingSet(usable, features, labeller, isAttack(name));
    const ratios = nbRatios(features.matrix, set.input);
    const matrix = { ...features.matrix, value: scaledValues(features.matrix, ratios, scratch) };
    const model = trainLogistic({ matrix, ...set.input, lambda: LAMBDA[name], maxIterations: MAX_ITERATIONS, tolerance: TOLERANCE });
    // Fold the NB scaling into the weights: w · (x ⊙ r) = (w ⊙ r) · x, so inference needs no ratios.
    for (let j = 0; j < ratios.length; j++) model.weights[j] = (model.weights[j] as number) * (ratios[j] as number);
    const report: HeadReport = {
      name,
      lambda: LAMBDA[name],
      iterations: model.iterations,
      loss: round(model.loss, 6),
      trainRows: set.counts,
      calibrationRows: { positive: 0, negative: 0, benign: 0 },
      seconds: secondsSince(t),
    };
    log(`head ${name}: ${set.counts.positive}+ / ${set.counts.negative}- rows, ${model.iterations} iterations, loss ${report.loss} (${report.seconds} s)`);
    trained.push({ name, weights: model.weights, float: model.weights, bias: model.bias, report, labeller });
  }
  const reused = reuse ? reusedHeads(reuse, hasher.dimension, heads) : [];
  const packed = packWeights([...trained.map((h) => h.weights), ...reused.map((h) => h.weights)]);
  const headCount = trained.length + reused.length;
  const quantised = unpackWeights(packed.data, hasher.dimension, headCount);
  const specs: HeadSpec[] = trained.map((h, k) => {
    const scale = packed.scales[k] as number;
    const weights = new Float64Array(hasher.dimension);
    for (let j = 0; j < hasher.dimension; j++) weights[j] = (quantised[j * headCount + k] as number) * scale;
    h.weights = weights; // from here on: the committed (int8) weights
    const data = calibrationData(usable, features, h, weights);
    const exact = calibrationData(usable, features, h, h.float);
    h.report.calibrationRows = { positive: data.positives.length, negative: data.negatives.length, benign: data.benign.length };
    h.report.calibrationAuc = { float: round(auc(exact), 4), int8: round(auc(data), 4) };
    return { name: h.name, bias: round(h.bias, 8), scale, calibration: fitCalibration(data, h.name === 'prompt_attack' || h.name === 'jailbreak' ? 'fpr' : 'f1') };
  });
  floorAwareCalibration(usable, features, trained, specs);
  for (const r of reused) specs.push({ ...r.spec, scale: packed.scales[specs.length] as number });
  const artefact: BuiltinArtefact = {
    format: ARTEFACT_FORMAT,
    hashing: { ...HASHING },
    signals: ATTACK_SIGNALS.map((s) => s.id),
    heads: specs,
    weights: packed.data,
  };
  return { artefact, heads: trained.map((h) => h.report) };
}

/**
 * NB-LR (Wang & Manning 2012, "NBSVM" with logistic loss): each feature is scaled by its log-count
 * ratio r_j = log((p_j + α) / |p + α|₁) − log((q_j + α) / |q + α|₁), p and q the weighted feature sums
 * over positive and negative training windows. Measured on the prompt-attack head: ROC-AUC 0.968 → 0.974,
 * recall at 2% FPR 0.705 → 0.736 (calibration split cut-off, held-out rows).
 */
export const NB_ALPHA = 0.05;

function nbRatios(matrix: FeaturizedRows['matrix'], set: TrainingSet['input']): Float64Array {
  const d = matrix.dimension;
  const p = new Float64Array(d);
  const q = new Float64Array(d);
  for (let k = 0; k < set.rows.length; k++) {
    const row = set.rows[k] as number;
    const sums = set.targets[k] === 1 ? p : q;
    const w = set.weights[k] as number;
    for (let j = matrix.rowPtr[row] as number, end = matrix.rowPtr[row + 1] as number; j < end; j++) {
      const ix = matrix.index[j] as number;
      sums[ix] = (sums[ix] as number) + (matrix.value[j] as number) * w;
    }
  }
  let sp = 0;
  let sq = 0;
  for (let j = 0; j < d; j++) {
    sp += (p[j] as number) + NB_ALPHA;
    sq += (q[j] as number) + NB_ALPHA;
  }
  const r = new Float64Array(d);
  for (let j = 0; j < d; j++) r[j] = Math.log(((p[j] as number) + NB_ALPHA) / sp) - Math.log(((q[j] as number) + NB_ALPHA) / sq);
  return r;
}

function scaledValues(matrix: FeaturizedRows['matrix'], ratios: Float64Array, out: Float32Array): Float32Array {
  for (let k = 0; k < matrix.value.length; k++) out[k] = (matrix.value[k] as number) * (ratios[matrix.index[k] as number] as number);
  return out;
}

function reusedHeads(reuse: BuiltinArtefact, dimension: number, trainedNow: readonly HeadName[]) {
  // The reused artefact may predate a heuristic signal: its weights are re-laid by signal id (buckets
  // first, then one dense feature per signal; a signal it does not know gets weight 0).
  const buckets = 2 ** reuse.hashing.bits;
  const oldDimension = buckets + reuse.signals.length;
  const all = unpackWeights(reuse.weights, oldDimension, reuse.heads.length);
  const signalIds = ATTACK_SIGNALS.map((s) => s.id);
  const out: Array<{ spec: HeadSpec; weights: Float64Array }> = [];
  reuse.heads.forEach((spec, k) => {
    if ((trainedNow as readonly string[]).includes(spec.name)) return;
    const weights = new Float64Array(dimension);
    const at = (j: number) => (all[j * reuse.heads.length + k] as number) * spec.scale;
    for (let j = 0; j < buckets; j++) weights[j] = at(j);
    reuse.signals.forEach((id, s) => {
      const now = signalIds.indexOf(id);
      if (now >= 0) weights[buckets + now] = at(buckets + s);
    });
    out.push({ spec, weights });
  });
  return out;
}

interface TrainedHead {
  name: HeadName;
  weights: Float64Array;
  float: Float64Array;
  bias: number;
  report: HeadReport;
  labeller: Labeller;
}

/**
 * The final prompt_attack score is max(its head, heuristic floors), so its knots are refitted with what
 * the floors already make fire on each benign calibration text: the benign FPR budgets then hold for the
 * score the detector reports. (Likewise for jailbreak and its floors.)
 */
function floorAwareCalibration(rows: readonly Row[], f: FeaturizedRows, trained: readonly TrainedHead[], specs: HeadSpec[]): void {
  for (const name of ATTACK_HEADS) {
    const k = trained.findIndex((h) => h.name === name);
    if (k < 0) continue;
    const head = trained[k] as TrainedHead;
    const data = calibrationData(rows, f, head, head.weights);
    const benignFloor: number[] = [];
    rows.forEach((r, i) => {
      if (r.split !== 'calibration' || head.labeller.target(r) !== 0 || !head.labeller.benign(r)) return;
      let floor = 0;
      for (let w = f.windowStart[i] as number; w < (f.windowStart[i + 1] as number); w++) {
        const signals = (f.evidence[w] as FeaturizedRows['evidence'][number]).signals;
        floor = Math.max(floor, name === 'jailbreak' ? signals.floor.jailbreak : signals.floor.prompt_attack);
      }
      benignFloor.push(floor);
    });
    (specs[k] as HeadSpec).calibration = fitCalibration({ ...data, benignFloor }, 'fpr');
  }
}

interface TrainingSet {
  input: { rows: Int32Array; targets: Uint8Array; weights: Float64Array };
  counts: { positive: number; negative: number };
}

/** Whether the head also scores the focus around attack signals (builtin-model.ts ATTACK_HEADS). */
function isAttack(name: HeadName): boolean {
  return (ATTACK_HEADS as readonly string[]).includes(name);
}

/**
 * Matrix rows of the training rows (windows, and for attack heads their focus rows), with balanced class
 * weights; a row's weight is split evenly over its matrix rows.
 */
function trainingSet(rows: readonly Row[], f: FeaturizedRows, labeller: Labeller, attack: boolean): TrainingSet {
  const picked: Array<{ i: number; target: 0 | 1; weight: number }> = [];
  const totals = [0, 0];
  const positivesBySource = new Map<string, number>();
  rows.forEach((r, i) => {
    if (r.split !== 'train' || !keptForTraining(r)) return;
    const target = labeller.target(r);
    if (target === undefined) return;
    picked.push({ i, target, weight: labeller.weight(r) });
    if (target === 1) positivesBySource.set(r.source, (positivesBySource.get(r.source) ?? 0) + 1);
  });
  // Attack heads: positives are re-weighted by 1/sqrt(rows of their source), normalised to a mean of 1,
  // so the in-the-wild jailbreaks (60% of the attack rows) do not drown the indirect injections, hijacks
  // and short overrides of the smaller sources (SOURCE_BALANCE_POWER; 0 = off).
  if (attack && SOURCE_BALANCE_POWER > 0) {
    const factor = (s: string) => (positivesBySource.get(s) ?? 1) ** -SOURCE_BALANCE_POWER;
    const positives = picked.filter((p) => p.target === 1);
    const mean = positives.reduce((a, p) => a + factor((rows[p.i] as Row).source), 0) / Math.max(1, positives.length);
    for (const p of positives) p.weight *= factor((rows[p.i] as Row).source) / mean;
  }
  for (const p of picked) totals[p.target] = (totals[p.target] as number) + p.weight;
  const all = (totals[0] as number) + (totals[1] as number);
  const balance = [all / (2 * (totals[0] as number)), all / (2 * (totals[1] as number))];
  const out = { rows: [] as number[], targets: [] as number[], weights: [] as number[] };
  for (const p of picked) {
    const matrixRows: number[] = [];
    for (let w = f.windowStart[p.i] as number; w < (f.windowStart[p.i + 1] as number); w++) {
      matrixRows.push(w);
      const focus = f.focusOf[w] as number;
      if (attack && focus >= 0) matrixRows.push(focus);
    }
    for (const m of matrixRows) {
      out.rows.push(m);
      out.targets.push(p.target);
      out.weights.push((p.weight * (balance[p.target] as number)) / matrixRows.length);
    }
  }
  const positive = picked.filter((p) => p.target === 1).length;
  return {
    input: { rows: Int32Array.from(out.rows), targets: Uint8Array.from(out.targets), weights: Float64Array.from(out.weights) },
    counts: { positive, negative: picked.length - positive },
  };
}

/** A window's raw score: its logit, or for attack heads the higher of it and its focus's. */
function windowScore(f: FeaturizedRows, w: number, weights: Float64Array, bias: number, attack: boolean): number {
  const z = dot(f.matrix, w, weights) + bias;
  const focus = f.focusOf[w] as number;
  return attack && focus >= 0 ? Math.max(z, dot(f.matrix, focus, weights) + bias) : z;
}

/** Raw text scores (max over the row's windows) of the calibration split. */
function calibrationData(rows: readonly Row[], f: FeaturizedRows, head: TrainedHead, weights: Float64Array) {
  const data = { positives: [] as number[], negatives: [] as number[], benign: [] as number[] };
  const attack = isAttack(head.name);
  rows.forEach((r, i) => {
    if (r.split !== 'calibration') return;
    const target = head.labeller.target(r);
    if (target === undefined) return;
    let score = -Infinity;
    for (let w = f.windowStart[i] as number; w < (f.windowStart[i + 1] as number); w++) {
      score = Math.max(score, windowScore(f, w, weights, head.bias, attack));
    }
    (target === 1 ? data.positives : data.negatives).push(score);
    if (target === 0 && head.labeller.benign(r)) data.benign.push(score);
  });
  return data;
}

function auc(data: { positives: number[]; negatives: number[] }): number {
  return rocAuc([...data.positives.map((score) => ({ score, positive: true })), ...data.negatives.map((score) => ({ score, positive: false }))]);
}

function secondsSince(t: number): number {
  return Math.round((Date.now() - t) / 100) / 10;
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
