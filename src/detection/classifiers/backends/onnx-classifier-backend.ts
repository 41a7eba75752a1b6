import type { InferenceSession, Tensor } from 'onnxruntime-node';
import { ConfigError } from '../../../shared/config';
import type { ClassifierBackend, ClassifierScores, ClassifierType } from '../backend';
import { BackendError } from './backend-errors';
import { calibrateProbability, type OnnxLabel, type OnnxModelSpec } from './onnx-model-config';
import { TokenChunker, type TextEncoder } from './onnx-token-chunks';
import { Semaphore } from './semaphore';

/**
 * The in-process `onnx` backend: a Hugging Face sequence-classification model exported to ONNX, run by
 * onnxruntime-node on the CPU. onnxruntime-node and the tokenizer library are required only when this
 * backend is built, so a deployment that does not configure it never loads the native runtime.
 *
 * One call scores one router window: tokenised, cut into max_length chunks (onnx-token-chunks.ts), run
 * in batches of at most MAX_BATCH chunks padded to the longest, softmax or sigmoid per row, each label
 * keeps its highest probability over the chunks, calibrated onto the L1–L4 scale (onnx-model-config.ts);
 * a type takes the highest score of its labels.
 *
 * `maxConcurrency` runs execute at once. A caller that gives up (timeout) is answered at once, but its
 * run cannot be interrupted inside the runtime: it keeps its slot until it ends, so abandoned runs never
 * pile up beyond the bound.
 */

type Ort = typeof import('onnxruntime-node');
type Tokenizers = typeof import('@huggingface/tokenizers');

export const MAX_BATCH = 8;
const FED_INPUTS = ['input_ids', 'attention_mask', 'token_type_ids'] as const;

export interface OnnxBackendOptions {
  spec: OnnxModelSpec;
  /** The types CLASSIFIER_BACKENDS assigns to onnx (labels of other types are ignored). */
  types: readonly ClassifierType[];
  /** Threads of one run (intra-op). */
  threads: number;
  maxConcurrency: number;
}

interface Loaded {
  ort: Ort;
  session: InferenceSession;
  output: string;
  idType: 'int64' | 'int32';
  withTokenTypes: boolean;
}

export class OnnxClassifierBackend implements ClassifierBackend {
  readonly name = 'onnx';
  readonly types: readonly ClassifierType[];
  /** Settles when the model is loaded; rejects with a ConfigError naming the problem. */
  readonly ready: Promise<void>;
  readonly chunker: TokenChunker;
  private readonly labels: readonly OnnxLabel[];
  private readonly gate: Semaphore;
  private loaded?: Loaded;

  constructor(private readonly options: OnnxBackendOptions) {
    const { spec } = options;
    this.types = [...options.types];
    this.labels = spec.labels;
    this.gate = new Semaphore(options.maxConcurrency, Number.MAX_SAFE_INTEGER, this.name);
    this.chunker = createChunker(spec);
    this.ready = this.load();
    this.ready.catch(() => undefined); // surfaced by whoever awaits ready (start-up) or classify
  }

  async classify(text: string, signal: AbortSignal): Promise<ClassifierScores> {
    await this.ready;
    const chunks = this.chunker.chunks(text);
    const best = new Float64Array(this.labels.length);
    for (let i = 0; i < chunks.length; i += MAX_BATCH) {
      const probs = await this.runBatch(chunks.slice(i, i + MAX_BATCH), signal);
      for (const row of probs) row.forEach((p, j) => (best[j] = Math.max(best[j] as number, p)));
    }
    const out: ClassifierScores = {};
    for (const type of this.types) out[type] = 0;
    this.labels.forEach((label, j) => {
      if (label.type === null || out[label.type] === undefined) return;
      const score = calibrateProbability(best[j] as number, label.calibration);
      out[label.type] = Math.max(out[label.type] as number, score);
    });
    return out;
  }

  async close(): Promise<void> {
    await this.ready.catch(() => undefined);
    await this.loaded?.session.release();
    this.loaded = undefined;
  }

  private async load(): Promise<void> {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ort = require('onnxruntime-node') as Ort;
    const { spec, threads } = this.options;
    let session: InferenceSession;
    try {
      session = await ort.InferenceSession.create(spec.modelPath, {
        intraOpNumThreads: threads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: 'all',
        logSeverityLevel: 3,
      });
    } catch (err) {
      throw new ConfigError([`ONNX_MODEL_DIR: model.onnx cannot be loaded (${err instanceof Error ? err.message : String(err)})`]);
    }
    const problems = checkSignature(session, this.labels.length);
    if (problems.length > 0) {
      await session.release();
      throw new ConfigError(problems.map((p) => `ONNX_MODEL_DIR: model.onnx ${p}`));
    }
    const ids = session.inputMetadata.find((m) => m.name === 'input_ids');
    this.loaded = {
      ort,
      session,
      output: session.outputNames[0] as string,
      idType: ids?.isTensor && ids.type === 'int32' ? 'int32' : 'int64',
      withTokenTypes: session.inputNames.includes('token_type_ids'),
    };
  }

  /** Probabilities per chunk and label. */
  private async runBatch(chunks: number[][], signal: AbortSignal): Promise<Float64Array[]> {
    const loaded = this.loaded;
    if (!loaded) throw new BackendError('transport', `${this.name}: the model is not loaded`);
    const release = await this.gate.acquire(signal);
    const run = loaded.session.run(this.feeds(loaded, chunks));
    void run.then(release, release);
    const results = await abortable(run, signal, this.name);
    const logits = results[loaded.output] as Tensor;
    const n = this.labels.length;
    if (logits.dims.length !== 2 || logits.dims[0] !== chunks.length || logits.dims[1] !== n) {
      throw new BackendError('malformed', `${this.name}: logits of shape [${logits.dims.join(', ')}], expected [${chunks.length}, ${n}]`);
    }
    const data = logits.data as Float32Array;
    return chunks.map((_, r) => activate(data.subarray(r * n, (r + 1) * n), this.options.spec.activation));
  }

  private feeds(loaded: Loaded, chunks: number[][]): Record<string, Tensor> {
    const width = Math.max(...chunks.map((c) => c.length));
    const size = chunks.length * width;
    const big = loaded.idType === 'int64';
    const ids = big ? new BigInt64Array(size) : new Int32Array(size);
    const mask = big ? new BigInt64Array(size) : new Int32Array(size);
    chunks.forEach((chunk, r) => {
      chunk.forEach((id, c) => {
        ids[r * width + c] = big ? BigInt(id) : id;
        mask[r * width + c] = big ? 1n : 1;
      });
    });
    const dims = [chunks.length, width];
    const feeds: Record<string, Tensor> = {
      input_ids: new loaded.ort.Tensor(loaded.idType, ids, dims),
      attention_mask: new loaded.ort.Tensor(loaded.idType, mask, dims),
    };
    if (loaded.withTokenTypes) feeds.token_type_ids = new loaded.ort.Tensor(loaded.idType, big ? new BigInt64Array(size) : new Int32Array(size), dims);
    return feeds;
  }
}

function createChunker(spec: OnnxModelSpec): TokenChunker {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Tokenizer } = require('@huggingface/tokenizers') as Tokenizers;
  try {
    // Built from the parsed files only: this library never fetches anything itself.
    const tokenizer: TextEncoder = new Tokenizer(spec.tokenizerJson, spec.tokenizerConfig);
    return new TokenChunker(tokenizer, spec.maxLength, spec.stride);
  } catch (err) {
    throw new ConfigError([`ONNX_MODEL_DIR: tokenizer.json cannot be used (${err instanceof Error ? err.message : String(err)})`]);
  }
}

/** What the graph must look like: the inputs this backend feeds, and logits with one column per label. */
function checkSignature(session: InferenceSession, labels: number): string[] {
  const problems: string[] = [];
  for (const name of ['input_ids', 'attention_mask']) {
    if (!session.inputNames.includes(name)) problems.push(`has no input "${name}" (inputs: ${session.inputNames.join(', ')})`);
  }
  const unknown = session.inputNames.filter((n) => !(FED_INPUTS as readonly string[]).includes(n));
  if (unknown.length > 0) problems.push(`needs inputs this backend does not provide: ${unknown.join(', ')}`);
  const out = session.outputMetadata[0];
  if (!out) problems.push('has no output');
  else if (out.isTensor) {
    const last = out.shape[out.shape.length - 1];
    if (out.shape.length !== 2 || (typeof last === 'number' && last !== labels)) {
      problems.push(`output "${out.name}" has shape [${out.shape.join(', ')}], expected [batch, ${labels}] (one logit per label of config.json)`);
    }
  }
  return problems;
}

function activate(logits: Float32Array, activation: 'softmax' | 'sigmoid'): Float64Array {
  const out = new Float64Array(logits.length);
  if (activation === 'sigmoid') {
    logits.forEach((z, i) => (out[i] = 1 / (1 + Math.exp(-z))));
    return out;
  }
  const max = Math.max(...logits);
  let sum = 0;
  logits.forEach((z, i) => (sum += out[i] = Math.exp(z - max)));
  return out.map((v) => v / sum);
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal, name: string): Promise<T> {
  if (signal.aborted) return Promise.reject(reasonOf(signal, name));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(reasonOf(signal, name));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function reasonOf(signal: AbortSignal, name: string): Error {
  return signal.reason instanceof Error ? signal.reason : new BackendError('aborted', `${name}: call aborted`);
}
