import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../../../shared/config';
import { CLASSIFIER_TYPES, type ClassifierType } from '../backend';

/**
 * The operator-supplied model directory of the `onnx` backend (docs/classifier-backends.md):
 *   model.onnx      a sequence-classification graph: inputs input_ids, attention_mask (token_type_ids only
 *                   if the graph declares it), int64 [batch, sequence]; first output logits [batch, labels];
 *   tokenizer.json  the Hugging Face tokenizers file of the model (tokenizer_config.json is read if present);
 *   config.json     this file's schema: the labels in logit order with the detector type each one means
 *                   (null: the label means nothing to detect, e.g. BENIGN), max_length, stride, softmax or
 *                   sigmoid, and the calibration.
 *
 * Calibration: for each level, the raw probability at which that level starts. It is mapped onto the
 * shared cut-offs (decide.ts: L1 0.90, L2 0.75, L3 0.50, L4 0.30) piecewise linearly through
 * (0, 0), (L4, 0.30), (L3, 0.50), (L2, 0.75), (L1, 0.90), (1, 1), so a policy at L2 blocks exactly when
 * the model's probability reaches the configured L2 value. Without calibration the raw probability is
 * the confidence. A label may carry its own calibration, overriding the model-wide one.
 */

export const ONNX_FILES = { model: 'model.onnx', tokenizer: 'tokenizer.json', config: 'config.json' } as const;
const LEVEL_CUTOFFS = { L4: 0.3, L3: 0.5, L2: 0.75, L1: 0.9 } as const;

const probability = z.number().gt(0).lt(1);
const calibrationSchema = z
  .object({ L1: probability, L2: probability, L3: probability, L4: probability })
  .strict()
  .refine((c) => c.L1 > c.L2 && c.L2 > c.L3 && c.L3 > c.L4, 'calibration must satisfy L1 > L2 > L3 > L4');

export const onnxModelConfigSchema = z
  .object({
    labels: z
      .array(z.object({ name: z.string().min(1), type: z.string().nullable(), calibration: calibrationSchema.optional() }).strict())
      .min(1),
    max_length: z.number().int().min(8).max(8192).default(512),
    /** Tokens shared by consecutive chunks of a long window (default: an eighth of max_length, at most 64). */
    stride: z.number().int().min(0).optional(),
    activation: z.enum(['softmax', 'sigmoid']),
    calibration: calibrationSchema.optional(),
  })
  .strict()
  .refine((c) => c.stride === undefined || c.stride < c.max_length / 2, { path: ['stride'], message: 'stride must be less than half of max_length' })
  .refine((c) => c.activation === 'sigmoid' || c.labels.length >= 2, {
    path: ['activation'],
    message: 'softmax needs at least two labels (use sigmoid for a single-logit model)',
  });

export type OnnxCalibration = z.infer<typeof calibrationSchema>;

export interface OnnxLabel {
  name: string;
  /** The detector type it scores, or null (BENIGN and the like). */
  type: ClassifierType | null;
  calibration?: OnnxCalibration;
}

export interface OnnxModelSpec {
  dir: string;
  modelPath: string;
  labels: readonly OnnxLabel[];
  maxLength: number;
  stride: number;
  activation: 'softmax' | 'sigmoid';
  /** tokenizer.json, parsed. */
  tokenizerJson: Record<string, unknown>;
  /** tokenizer_config.json, parsed ({} when absent). */
  tokenizerConfig: Record<string, unknown>;
}

/**
 * Reads and checks a model directory. `types` are the classifier types CLASSIFIER_BACKENDS assigns to
 * onnx: each needs a label. Every problem is reported at once as a ConfigError naming ONNX_MODEL_DIR.
 */
export function readOnnxModelDir(dir: string, types: readonly ClassifierType[]): OnnxModelSpec {
  const fail = (problems: string[]) => new ConfigError(problems.map((p) => `ONNX_MODEL_DIR: ${p}`));
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw fail([`"${dir}" is not a directory`]);
  const missing = Object.values(ONNX_FILES).filter((f) => !existsSync(join(dir, f)));
  if (missing.length > 0) throw fail([`${missing.join(', ')} missing in "${dir}"`]);

  const problems: string[] = [];
  const config = parseModelConfig(readJson(join(dir, ONNX_FILES.config), problems), problems);
  const tokenizerJson = readJson(join(dir, ONNX_FILES.tokenizer), problems);
  if (tokenizerJson !== undefined && !isTokenizerJson(tokenizerJson)) {
    problems.push(`${ONNX_FILES.tokenizer} is not a Hugging Face tokenizers file (no "model" object)`);
  }
  const configPath = join(dir, 'tokenizer_config.json');
  const tokenizerConfig = existsSync(configPath) ? readJson(configPath, problems) : {};
  if (config) {
    const covered = new Set(config.labels.map((l) => l.type));
    const uncovered = types.filter((t) => !covered.has(t));
    if (uncovered.length > 0) problems.push(`config.json has no label for ${uncovered.join(', ')} (assigned to onnx by CLASSIFIER_BACKENDS)`);
  }
  if (problems.length > 0 || !config) throw fail(problems);
  return {
    dir,
    modelPath: join(dir, ONNX_FILES.model),
    ...config,
    tokenizerJson: tokenizerJson as Record<string, unknown>,
    tokenizerConfig: (tokenizerConfig ?? {}) as Record<string, unknown>,
  };
}

type ParsedConfig = Pick<OnnxModelSpec, 'labels' | 'maxLength' | 'stride' | 'activation'>;

/** Checks a parsed config.json; pushes every problem (prefixed with config.json and the field). */
export function parseModelConfig(raw: unknown, problems: string[]): ParsedConfig | undefined {
  if (raw === undefined) return undefined;
  const parsed = onnxModelConfigSchema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const path = issue.path.length > 0 ? ` ${issue.path.join('.')}` : '';
      problems.push(`config.json${path}: ${issue.message}`);
    }
    return undefined;
  }
  const c = parsed.data;
  const before = problems.length;
  const seen = new Set<string>();
  const labels: OnnxLabel[] = c.labels.map((l, i) => {
    if (seen.has(l.name)) problems.push(`config.json labels.${i}: label "${l.name}" is listed twice`);
    seen.add(l.name);
    if (l.type !== null && !(CLASSIFIER_TYPES as readonly string[]).includes(l.type)) {
      problems.push(`config.json labels.${i}: "${l.type}" (label "${l.name}") is not a classifier type (expected one of ${CLASSIFIER_TYPES.join(', ')}, or null)`);
    }
    return { name: l.name, type: l.type as ClassifierType | null, calibration: l.calibration ?? c.calibration };
  });
  if (labels.every((l) => l.type === null)) problems.push('config.json labels: no label maps to a detector type');
  if (problems.length > before) return undefined;
  return { labels, maxLength: c.max_length, stride: c.stride ?? Math.min(64, Math.floor(c.max_length / 8)), activation: c.activation };
}

/** A raw probability → a confidence on the shared L1–L4 scale (see the header). */
export function calibrateProbability(p: number, calibration: OnnxCalibration | undefined): number {
  if (!Number.isFinite(p)) return 0;
  const x = Math.min(1, Math.max(0, p));
  if (!calibration) return x;
  const knots: Array<[number, number]> = [
    [0, 0],
    [calibration.L4, LEVEL_CUTOFFS.L4],
    [calibration.L3, LEVEL_CUTOFFS.L3],
    [calibration.L2, LEVEL_CUTOFFS.L2],
    [calibration.L1, LEVEL_CUTOFFS.L1],
    [1, 1],
  ];
  for (let i = 1; i < knots.length; i++) {
    const [x1, y1] = knots[i] as [number, number];
    if (x <= x1) {
      const [x0, y0] = knots[i - 1] as [number, number];
      return y0 + ((x - x0) / (x1 - x0)) * (y1 - y0);
    }
  }
  return 1;
}

function readJson(path: string, problems: string[]): unknown {
  const name = path.split(/[\\/]/).pop() as string;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch (err) {
    problems.push(`${name} is not valid JSON (${err instanceof Error ? err.message : String(err)})`);
    return undefined;
  }
}

function isTokenizerJson(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const model = (value as Record<string, unknown>).model;
  return typeof model === 'object' && model !== null;
}
