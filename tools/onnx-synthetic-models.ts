import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OnnxGraphBuilder, randomWeights } from './onnx-graph-builder';

/**
 * Synthetic sequence classifiers in the layout of the `onnx` backend (model.onnx, tokenizer.json,
 * config.json), for the tests and bench:onnx. Two architectures:
 *   - mean-pool: token embeddings averaged over the attention mask, then a linear layer. With chosen
 *     weights, known words give known labels (tests);
 *   - transformer: a BERT-shaped encoder (token + position embeddings, N layers of multi-head
 *     self-attention and a GELU feed-forward block with LayerNorm, [CLS] pooler, linear head) with random
 *     weights: a cost proxy for real exported models (bench).
 */

export const SPECIAL_TOKENS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]'] as const;

/** A BERT-style WordPiece tokenizer.json whose vocabulary is the special tokens then `words`. */
export function wordPieceTokenizerJson(words: readonly string[]): Record<string, unknown> {
  const vocab = Object.fromEntries([...SPECIAL_TOKENS, ...words].map((w, i) => [w, i]));
  const added = SPECIAL_TOKENS.map((content, id) => ({
    id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true,
  }));
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: { type: 'BertProcessing', sep: ['[SEP]', 3], cls: ['[CLS]', 2] },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}

export interface MeanPoolSpec {
  vocab: number;
  dim: number;
  /** [vocab × dim], row-major. */
  embeddings: Float32Array;
  /** [dim × labels], row-major. */
  weights: Float32Array;
  bias: Float32Array;
  /** Declare (and use) a token_type_ids input, as BERT exports do. */
  tokenTypes?: boolean;
}

export function buildMeanPoolModel(spec: MeanPoolSpec): { bytes: Uint8Array; params: number } {
  const g = new OnnxGraphBuilder();
  const labels = spec.bias.length;
  const ids = g.input('input_ids', 'int64', ['batch', 'sequence']);
  const mask = g.input('attention_mask', 'int64', ['batch', 'sequence']);
  let emb = g.op('Gather', [g.init('embeddings', [spec.vocab, spec.dim], spec.embeddings), ids]);
  if (spec.tokenTypes) {
    const types = g.input('token_type_ids', 'int64', ['batch', 'sequence']);
    emb = g.op('Add', [emb, g.op('Gather', [g.init('type_embeddings', [2, spec.dim], new Float32Array(2 * spec.dim)), types])]);
  }
  const m3 = g.op('Unsqueeze', [g.op('Cast', [mask], { to: { int: 1 } }), g.ints('axes', [2])]);
  const sum = g.op('ReduceSum', [g.op('Mul', [emb, m3]), g.ints('axes', [1])], { keepdims: { int: 0 } });
  const count = g.op('Max', [g.op('ReduceSum', [m3, g.ints('axes', [1])], { keepdims: { int: 0 } }), g.scalar('one', 1)]);
  const mean = g.op('Div', [sum, count]);
  const w = g.init('classifier', [spec.dim, labels], spec.weights);
  g.op('Add', [g.op('MatMul', [mean, w]), g.init('classifier_bias', [labels], spec.bias)]);
  g.output(g.nameLast('logits'), 'float', ['batch', labels]);
  return { bytes: g.encode(), params: g.params };
}

export interface TransformerSpec {
  vocab: number;
  hidden: number;
  layers: number;
  heads: number;
  ffn: number;
  maxPositions: number;
  labels: number;
  seed?: number;
}

export function buildTransformerModel(spec: TransformerSpec): { bytes: Uint8Array; params: number } {
  const g = new OnnxGraphBuilder();
  const { hidden: h, heads } = spec;
  let seed = spec.seed ?? 1;
  const rand = (dims: number[], scale = 0.02) => g.init('w', dims, randomWeights(dims.reduce((a, b) => a * b, 1), scale, seed++));
  const zeros = (n: number) => g.init('b', [n], new Float32Array(n));
  const ones = (n: number) => g.init('g', [n], new Float32Array(n).fill(1));
  const linear = (x: string, from: number, to: number) => g.op('Add', [g.op('MatMul', [x, rand([from, to])]), zeros(to)]);
  const norm = (x: string) => g.op('LayerNormalization', [x, ones(h), zeros(h)], { axis: { int: -1 }, epsilon: { float: 1e-12 } });

  const ids = g.input('input_ids', 'int64', ['batch', 'sequence']);
  const mask = g.input('attention_mask', 'int64', ['batch', 'sequence']);
  const seqLen = g.op('Gather', [g.op('Shape', [ids]), g.ints('i', [1])], { axis: { int: 0 } });
  const positions = g.op('Slice', [rand([spec.maxPositions, h]), g.ints('starts', [0]), seqLen, g.ints('axes', [0])]);
  let x = norm(g.op('Add', [g.op('Gather', [rand([spec.vocab, h]), ids]), positions]));
  const keep = g.op('Cast', [mask], { to: { int: 1 } });
  const maskBias = g.op('Unsqueeze', [g.op('Mul', [g.op('Sub', [g.scalar('one', 1), keep]), g.scalar('neg', -10000)]), g.ints('axes', [1, 2])]);
  const split = g.ints('shape', [0, 0, heads, h / heads]);
  const merge = g.ints('shape', [0, 0, h]);
  const scale = g.scalar('scale', 1 / Math.sqrt(h / heads));
  for (let layer = 0; layer < spec.layers; layer++) {
    const headsOf = (perm: number[]) => g.op('Transpose', [g.op('Reshape', [linear(x, h, h), split])], { perm: { ints: perm } });
    const q = headsOf([0, 2, 1, 3]);
    const k = headsOf([0, 2, 3, 1]);
    const v = headsOf([0, 2, 1, 3]);
    const scores = g.op('Add', [g.op('Mul', [g.op('MatMul', [q, k]), scale]), maskBias]);
    const probs = g.op('Softmax', [scores], { axis: { int: -1 } });
    const context = g.op('Reshape', [g.op('Transpose', [g.op('MatMul', [probs, v])], { perm: { ints: [0, 2, 1, 3] } }), merge]);
    x = norm(g.op('Add', [x, linear(context, h, h)]));
    const up = linear(x, h, spec.ffn);
    const gelu = g.op('Mul', [g.op('Mul', [up, g.scalar('half', 0.5)]), g.op('Add', [g.scalar('one', 1), g.op('Erf', [g.op('Mul', [up, g.scalar('r2', Math.SQRT1_2)])])])]);
    x = norm(g.op('Add', [x, linear(gelu, spec.ffn, h)]));
  }
  const cls = g.op('Gather', [x, g.init('zero', [], BigInt64Array.of(0n))], { axis: { int: 1 } });
  const pooled = g.op('Tanh', [linear(cls, h, h)]);
  linear(pooled, h, spec.labels);
  g.output(g.nameLast('logits'), 'float', ['batch', spec.labels]);
  return { bytes: g.encode(), params: g.params };
}

/** Writes a model directory for the onnx backend. */
export function writeModelDir(dir: string, files: { model: Uint8Array; tokenizer: object; config: object }): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'model.onnx'), files.model);
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(files.tokenizer));
  writeFileSync(join(dir, 'config.json'), JSON.stringify(files.config, null, 2));
  return dir;
}
