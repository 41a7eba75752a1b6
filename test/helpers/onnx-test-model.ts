import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildMeanPoolModel, SPECIAL_TOKENS, wordPieceTokenizerJson, writeModelDir } from '../../tools/onnx-synthetic-models';

/**
 * A tiny injection / jailbreak classifier built by the tests (no download): WordPiece tokenizer over a
 * small vocabulary, token embeddings on three axes (benign, injection, jailbreak) averaged over the
 * attention mask, logits = 10 × the average, labels BENIGN / INJECTION / JAILBREAK, softmax.
 *
 * So the probabilities are known in advance: "ignore previous instructions" → [CLS] + 3 injection words
 * + [SEP], mean (0, 0.6, 0), logits (0, 6, 0), P(INJECTION) = e^6 / (e^6 + 2) ≈ 0.9950; "hello world" →
 * mean (0.5, 0, 0), P(INJECTION) = 1 / (e^5 + 2) ≈ 0.0067. Unknown words ([UNK]) lean benign (0.5, 0, 0).
 */

export const BENIGN_WORDS = ['hello', 'world', 'please', 'the', 'and', 'a', 'recipe', 'for', 'mayonnaise', 'use', 'metric', 'units', 'write', 'poem'];
export const INJECTION_WORDS = ['ignore', 'previous', 'instructions', 'disregard', 'reveal', 'system', 'prompt'];
export const JAILBREAK_WORDS = ['dan', 'jailbreak', 'unrestricted', 'roleplay', 'anything', 'now'];
const WORDS = [...BENIGN_WORDS, ...INJECTION_WORDS, ...JAILBREAK_WORDS];

export const TEST_LABELS = [
  { name: 'BENIGN', type: null },
  { name: 'INJECTION', type: 'prompt_attack' },
  { name: 'JAILBREAK', type: 'jailbreak' },
];

/** Raw-probability thresholds of the test model's levels (config.json "calibration"). */
export const TEST_CALIBRATION = { L1: 0.99, L2: 0.95, L3: 0.8, L4: 0.5 };

export function testModelBytes(options: { tokenTypes?: boolean } = {}): Uint8Array {
  const vocab = SPECIAL_TOKENS.length + WORDS.length;
  const embeddings = new Float32Array(vocab * 3);
  embeddings.set([0.5, 0, 0], 1 * 3); // [UNK]
  WORDS.forEach((word, i) => {
    const axis = BENIGN_WORDS.includes(word) ? 0 : INJECTION_WORDS.includes(word) ? 1 : 2;
    embeddings[(SPECIAL_TOKENS.length + i) * 3 + axis] = 1;
  });
  const weights = Float32Array.of(10, 0, 0, 0, 10, 0, 0, 0, 10);
  return buildMeanPoolModel({ vocab, dim: 3, embeddings, weights, bias: new Float32Array(3), tokenTypes: options.tokenTypes }).bytes;
}

export function testTokenizerJson(): Record<string, unknown> {
  return wordPieceTokenizerJson(WORDS);
}

export function testModelConfig(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { labels: TEST_LABELS, max_length: 64, stride: 8, activation: 'softmax', calibration: TEST_CALIBRATION, ...overrides };
}

/** Writes the test model into a fresh temporary directory and returns its path. */
export function writeTestModelDir(
  options: { config?: Record<string, unknown>; tokenTypes?: boolean; model?: Uint8Array } = {},
): string {
  const dir = mkdtempSync(join(tmpdir(), 'onnx-model-'));
  return writeModelDir(dir, {
    model: options.model ?? testModelBytes({ tokenTypes: options.tokenTypes }),
    tokenizer: testTokenizerJson(),
    config: options.config ?? testModelConfig(),
  });
}
