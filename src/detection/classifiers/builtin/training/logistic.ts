/**
 * Binary logistic regression with L2 regularisation, trained by L-BFGS (full batch, so deterministic:
 * no sampling, no learning rate), on a sparse row matrix. The bias is not regularised.
 *
 *   loss(w, b) = Σ_i s_i · log(1 + exp(-y_i (w·x_i + b))) / Σ_i s_i  +  λ/2 · |w|²
 */

export interface SparseMatrix {
  /** Row i spans rowPtr[i] .. rowPtr[i+1] of index / value. */
  rowPtr: Int32Array;
  index: Int32Array;
  value: Float32Array;
  rows: number;
  dimension: number;
}

export interface TrainInput {
  matrix: SparseMatrix;
  /** Rows to train on (subset of the matrix). */
  rows: Int32Array;
  /** 1 or 0 per entry of `rows`. */
  targets: Uint8Array;
  /** Sample weight per entry of `rows`. */
  weights: Float64Array;
  lambda: number;
  maxIterations: number;
  /** Stop when the relative loss decrease over 5 iterations falls below this. */
  tolerance?: number;
}

export interface LinearModel {
  weights: Float64Array;
  bias: number;
  iterations: number;
  loss: number;
}

export function dot(matrix: SparseMatrix, row: number, weights: Float64Array | Float32Array): number {
  let z = 0;
  for (let k = matrix.rowPtr[row] as number, end = matrix.rowPtr[row + 1] as number; k < end; k++) {
    z += (weights[matrix.index[k] as number] as number) * (matrix.value[k] as number);
  }
  return z;
}

/** Loss and gradient at params = [w..., b] (gradient written into `grad`). */
function lossAndGradient(input: TrainInput, params: Float64Array, grad: Float64Array, totalWeight: number): number {
  const { matrix, rows, targets, weights, lambda } = input;
  const d = matrix.dimension;
  const bias = params[d] as number;
  grad.fill(0);
  let loss = 0;
  let gb = 0;
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] as number;
    const z = dot(matrix, row, params) + bias;
    const y = targets[r] === 1 ? 1 : -1;
    const s = (weights[r] as number) / totalWeight;
    const m = y * z;
    // log(1 + e^-m), stable for both signs
    loss += s * (m > 0 ? Math.log1p(Math.exp(-m)) : -m + Math.log1p(Math.exp(m)));
    const p = 1 / (1 + Math.exp(-z));
    const g = s * (p - (targets[r] as number));
    gb += g;
    for (let k = matrix.rowPtr[row] as number, end = matrix.rowPtr[row + 1] as number; k < end; k++) {
      const j = matrix.index[k] as number;
      grad[j] = (grad[j] as number) + g * (matrix.value[k] as number);
    }
  }
  let reg = 0;
  for (let j = 0; j < d; j++) {
    const w = params[j] as number;
    reg += w * w;
    grad[j] = (grad[j] as number) + lambda * w;
  }
  grad[d] = gb;
  return loss + (lambda / 2) * reg;
}

function vdot(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

const MEMORY = 10;

export function trainLogistic(input: TrainInput): LinearModel {
  const n = input.matrix.dimension + 1;
  const totalWeight = input.weights.reduce((a, b) => a + b, 0);
  let x = new Float64Array(n);
  let g = new Float64Array(n);
  let f = lossAndGradient(input, x, g, totalWeight);
  const sList: Float64Array[] = [];
  const yList: Float64Array[] = [];
  const history: number[] = [f];
  const tolerance = input.tolerance ?? 1e-6;
  let iter = 0;
  const direction = new Float64Array(n);
  const alpha = new Array<number>(MEMORY).fill(0);
  for (; iter < input.maxIterations; iter++) {
    // Two-loop recursion: direction = -H·g
    for (let i = 0; i < n; i++) direction[i] = -(g[i] as number);
    for (let k = sList.length - 1; k >= 0; k--) {
      const s = sList[k] as Float64Array;
      const y = yList[k] as Float64Array;
      const a = vdot(s, direction) / vdot(y, s);
      alpha[k] = a;
      for (let i = 0; i < n; i++) direction[i] = (direction[i] as number) - a * (y[i] as number);
    }
    if (sList.length > 0) {
      const s = sList[sList.length - 1] as Float64Array;
      const y = yList[yList.length - 1] as Float64Array;
      const gamma = vdot(s, y) / vdot(y, y);
      for (let i = 0; i < n; i++) direction[i] = (direction[i] as number) * gamma;
    } else {
      const gn = Math.sqrt(vdot(g, g)) || 1;
      for (let i = 0; i < n; i++) direction[i] = (direction[i] as number) / gn;
    }
    for (let k = 0; k < sList.length; k++) {
      const s = sList[k] as Float64Array;
      const y = yList[k] as Float64Array;
      const b = vdot(y, direction) / vdot(y, s);
      const a = alpha[k] as number;
      for (let i = 0; i < n; i++) direction[i] = (direction[i] as number) + (a - b) * (s[i] as number);
    }
    const slope = vdot(g, direction);
    if (!(slope < 0)) break; // not a descent direction: converged (numerically)
    // Backtracking line search (Armijo).
    let step = 1;
    const xNew = new Float64Array(n);
    const gNew = new Float64Array(n);
    let fNew = Infinity;
    for (let tries = 0; tries < 30; tries++) {
      for (let i = 0; i < n; i++) xNew[i] = (x[i] as number) + step * (direction[i] as number);
      fNew = lossAndGradient(input, xNew, gNew, totalWeight);
      if (fNew <= f + 1e-4 * step * slope) break;
      step *= 0.5;
    }
    if (!(fNew < f)) break;
    const s = new Float64Array(n);
    const y = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      s[i] = (xNew[i] as number) - (x[i] as number);
      y[i] = (gNew[i] as number) - (g[i] as number);
    }
    if (vdot(s, y) > 1e-12) {
      sList.push(s);
      yList.push(y);
      if (sList.length > MEMORY) {
        sList.shift();
        yList.shift();
      }
    }
    x = xNew;
    g = gNew;
    f = fNew;
    history.push(f);
    const back = history[history.length - 6];
    if (back !== undefined && (back - f) / Math.max(Math.abs(back), 1e-12) < tolerance) break;
  }
  return { weights: x.subarray(0, n - 1), bias: x[n - 1] as number, iterations: iter, loss: f };
}
