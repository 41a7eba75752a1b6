import { normalizeText } from '../../../normalize';
import type { FeatureHasher } from '../features';
import { splitWindows } from '../../windows';
import { windowFeatures, type WindowFeatures } from '../window-features';
import type { SparseMatrix } from './logistic';
import type { Row } from './dataset';

/**
 * Rows → sparse matrix. Each data row becomes one matrix row per window of its normalised text (the
 * same windows the detectors use), so training sees what inference sees; `full` mode makes one matrix
 * row of the whole text instead (kept for comparison, see the manifest).
 */

export interface FeaturizedRows {
  /** Window rows first (0 .. windows-1), then the focus rows (window-features.ts). */
  matrix: SparseMatrix;
  /** Window rows of data row i: windowStart[i] .. windowStart[i+1]. */
  windowStart: Int32Array;
  /** Per window row: the matrix row of its focus, or -1. */
  focusOf: Int32Array;
  /** Per window row: the heuristic and lexicon evidence (for floors, reports). */
  evidence: Array<Pick<WindowFeatures, 'signals' | 'lexicon'>>;
}

export function featurizeRows(rows: readonly Row[], hasher: FeatureHasher, mode: 'windows' | 'full' = 'windows'): FeaturizedRows {
  const indexChunks: Int32Array[] = [];
  const valueChunks: Float32Array[] = [];
  const rowLengths: number[] = [];
  const focusChunks: Array<{ window: number; index: Int32Array; value: Float32Array; length: number }> = [];
  const windowStart = new Int32Array(rows.length + 1);
  const evidence: FeaturizedRows['evidence'] = [];
  rows.forEach((row, i) => {
    windowStart[i] = rowLengths.length;
    const text = normalizeText(row.text).text;
    const parts = mode === 'full' ? [text] : splitWindows(text).map((w) => w.text);
    for (const part of parts) {
      const f = windowFeatures(hasher, part);
      if (f.focus) focusChunks.push({ window: rowLengths.length, ...f.focus });
      indexChunks.push(f.vector.index);
      valueChunks.push(f.vector.value);
      rowLengths.push(f.vector.length);
      evidence.push({ signals: f.signals, lexicon: f.lexicon });
    }
  });
  windowStart[rows.length] = rowLengths.length;
  const windows = rowLengths.length;
  const focusOf = new Int32Array(windows).fill(-1);
  for (const fc of focusChunks) {
    focusOf[fc.window] = rowLengths.length;
    indexChunks.push(fc.index);
    valueChunks.push(fc.value);
    rowLengths.push(fc.length);
  }
  const nnz = rowLengths.reduce((a, b) => a + b, 0);
  const rowPtr = new Int32Array(rowLengths.length + 1);
  const index = new Int32Array(nnz);
  const value = new Float32Array(nnz);
  let at = 0;
  rowLengths.forEach((len, r) => {
    rowPtr[r] = at;
    index.set(indexChunks[r] as Int32Array, at);
    value.set(valueChunks[r] as Float32Array, at);
    at += len;
  });
  rowPtr[rowLengths.length] = at;
  return { matrix: { rowPtr, index, value, rows: rowLengths.length, dimension: hasher.dimension }, windowStart, focusOf, evidence };
}
