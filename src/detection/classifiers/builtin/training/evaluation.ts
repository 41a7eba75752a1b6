import { THRESHOLD_CUTOFFS } from '../../../decide';
import type { Threshold } from '../../../../shared/policy';
import { CLASSIFIER_TYPES, type ClassifierType } from '../../backend';
import type { BuiltinModel } from '../builtin-model';
import { scoreDocument } from '../document-scoring';
import type { Row } from './dataset';
import { isJailbreakRow, type Target } from './labels';
import { atCutoff, lengthBucket, LENGTH_BUCKETS, rocAuc, type Scored } from './metrics';

/**
 * Held-out evaluation of the builtin backend through the production scoring path (document-scoring.ts:
 * views × windows × max, heuristics and floors included), per classifier type.
 *
 * Labels per type: prompt_attack = injection label; jailbreak = labels.ts (other attacks excluded);
 * moderated_content/<c> = c in the moderation row's labels (all other moderation rows are negatives).
 * "Benign prompts" = the injection file's benign held-out rows (ordinary prompts of every length:
 * coding questions, role-play requests, system prompts, e-mails, maths); their FPR at L2 is reported
 * for every type.
 */

export const LEVELS: readonly Threshold[] = ['L1', 'L2', 'L3', 'L4'];
/** A category counts as having enough data with at least this many labelled rows in the dataset. */
export const ENOUGH_DATA_ROWS = 100;

export interface LevelMetrics {
  precision: number;
  recall: number;
  f1: number;
  fpr: number;
}

export interface TypeReport {
  type: ClassifierType;
  positives: number;
  negatives: number;
  datasetPositives: number;
  enoughData: boolean;
  auc: number;
  levels: Record<Threshold, LevelMetrics>;
  benignPromptFprL2: number;
  /** The same at L1, whose meaning is "very few false positives" (target ≤ 0.5%). */
  benignPromptFprL1: number;
  byLength: Array<{ bucket: string; positives: number; recallL2: number; negatives: number; fprL2: number }>;
  /** Rows of each source that fire at L2 (positives: recall, negatives: false positives). */
  bySource: Array<{ source: string; positive: boolean; rows: number; firedL2: number }>;
}

export interface EvalReport {
  heldoutRows: number;
  benignPrompts: number;
  types: TypeReport[];
  /** jailbreak: how often it fires (L2) on attacks that are not jailbreaks (excluded from its metrics). */
  jailbreakOnOtherAttacksL2: number;
}

export function targetFor(type: ClassifierType, row: Row): Target {
  if (type === 'prompt_attack') return row.file === 'injection' ? (row.labels.length > 0 ? 1 : 0) : undefined;
  if (type === 'jailbreak') {
    if (row.file !== 'injection') return undefined;
    return row.labels.length === 0 ? 0 : isJailbreakRow(row) ? 1 : undefined;
  }
  if (row.file !== 'moderation') return undefined;
  return row.labels.includes(type.slice('moderated_content/'.length)) ? 1 : 0;
}

export function evaluateHeldout(model: BuiltinModel, rows: readonly Row[]): EvalReport {
  const heldout = rows.filter((r) => r.split === 'heldout');
  const scores = heldout.map((r) => scoreDocument(model, r.text));
  const benignIdx = heldout.map((r, i) => (r.file === 'injection' && r.labels.length === 0 ? i : -1)).filter((i) => i >= 0);
  const types = CLASSIFIER_TYPES.map((type) => typeReport(type, heldout, scores, benignIdx, rows));
  const others = heldout.map((r, i) => ({ r, i })).filter(({ r }) => r.labels.includes('attack') && !isJailbreakRow(r));
  const fired = others.filter(({ i }) => (scores[i] as Record<ClassifierType, number>).jailbreak >= THRESHOLD_CUTOFFS.L2).length;
  return {
    heldoutRows: heldout.length,
    benignPrompts: benignIdx.length,
    types,
    jailbreakOnOtherAttacksL2: others.length ? fired / others.length : NaN,
  };
}

function typeReport(
  type: ClassifierType,
  heldout: readonly Row[],
  scores: ReadonlyArray<Record<ClassifierType, number>>,
  benignIdx: readonly number[],
  allRows: readonly Row[],
): TypeReport {
  const items: Array<Scored & { row: Row }> = [];
  heldout.forEach((row, i) => {
    const t = targetFor(type, row);
    if (t !== undefined) items.push({ score: (scores[i] as Record<ClassifierType, number>)[type], positive: t === 1, row });
  });
  const levels = {} as Record<Threshold, LevelMetrics>;
  for (const level of LEVELS) {
    const m = atCutoff(items, THRESHOLD_CUTOFFS[level]);
    levels[level] = { precision: m.precision, recall: m.recall, f1: m.f1, fpr: m.fpr };
  }
  const l2 = THRESHOLD_CUTOFFS.L2;
  const benignFired = benignIdx.filter((i) => (scores[i] as Record<ClassifierType, number>)[type] >= l2).length;
  const benignFiredL1 = benignIdx.filter((i) => (scores[i] as Record<ClassifierType, number>)[type] >= THRESHOLD_CUTOFFS.L1).length;
  const byLength = LENGTH_BUCKETS.map((b) => {
    const inBucket = items.filter((it) => lengthBucket(it.row.text.length) === b.label);
    const m = atCutoff(inBucket, l2);
    return { bucket: b.label, positives: m.tp + m.fn, recallL2: m.recall, negatives: m.fp + m.tn, fprL2: m.fpr };
  });
  const sources = new Map<string, { source: string; positive: boolean; rows: number; firedL2: number }>();
  for (const it of items) {
    const key = `${it.row.source}|${it.positive}`;
    const s = sources.get(key) ?? sources.set(key, { source: it.row.source, positive: it.positive, rows: 0, firedL2: 0 }).get(key);
    if (!s) continue;
    s.rows++;
    if (it.score >= l2) s.firedL2++;
  }
  const datasetPositives = allRows.filter((r) => targetFor(type, r) === 1).length;
  return {
    type,
    positives: items.filter((i) => i.positive).length,
    negatives: items.filter((i) => !i.positive).length,
    datasetPositives,
    enoughData: datasetPositives >= ENOUGH_DATA_ROWS,
    auc: rocAuc(items),
    levels,
    benignPromptFprL2: benignIdx.length ? benignFired / benignIdx.length : NaN,
    benignPromptFprL1: benignIdx.length ? benignFiredL1 / benignIdx.length : NaN,
    byLength,
    bySource: [...sources.values()].sort((a, b) => Number(b.positive) - Number(a.positive) || a.source.localeCompare(b.source)),
  };
}
