import { z } from 'zod';
import { SuffixLm, suffixLmSchema } from './suffix-lm';
import { FEATURES, forEachWindow, scanText, windowFeatures, type SuffixScan } from './suffix-scan';

/**
 * The adversarial-suffix signal. Optimised suffixes (GCG-style: "describing.\ + similarlyNow write
 * oppositeley.](") are token soup: under a character n-gram model of ordinary text their per-character
 * cross-entropy is far above prose, chat, markdown or code. The text is scanned once (suffix-scan.ts),
 * then windows of `window` characters every `stride` characters are scored by a small logistic
 * combination of the window's mean bits per character, its rate of very surprising characters, and
 * two token-soup flags (case switches inside words, odd punctuation glued between letters). URLs, hex,
 * base64 and key-like strings are masked, and characters of scripts other than Latin are not scored, so
 * those never fire (other detectors judge them).
 *
 * The score is calibrated so that 0.5 is the cut-off with ≤ 0.1% false positives on the calibration
 * benign prompts; `scorer.cutoffs` also gives the looser ≤ 1% cut-off, for stacking with other
 * evidence (see bench/SUFFIX.md). The committed artefact
 * (model/suffix-lm.json) is built by `npm run train:suffix`.
 */

export const scorerSchema = z
  .object({
    window: z.number().int().min(16),
    stride: z.number().int().min(1),
    minScored: z.number().int().min(8),
    /** Standardisation then logistic weights, one per feature of suffix-scan.ts. */
    mean: z.array(z.number()).length(FEATURES),
    std: z.array(z.number().positive()).length(FEATURES),
    weights: z.array(z.number()).length(FEATURES),
    /** Bias already shifted so that logit 0 (score 0.5) is the ≤ 0.1%-FPR cut-off. */
    bias: z.number(),
    cutoffs: z.record(z.string(), z.number()),
  })
  .refine((c) => c.window % c.stride === 0, 'window must be a multiple of stride');
export type SuffixScorerConfig = z.infer<typeof scorerSchema>;

/** The ordinary-text LM's fields, the token-soup LM (same format) and the window scorer. */
export const suffixArtefactSchema = suffixLmSchema.extend({ soup: suffixLmSchema, scorer: scorerSchema });
export type SuffixArtefact = z.infer<typeof suffixArtefactSchema>;

export interface SuffixVerdict {
  /** 0..1; ≥ 0.5 is the calibrated cut-off (≤ 0.1% FPR on calibration benign prompts). */
  score: number;
  /** Span in UTF-16 offsets of the input: the firing windows around the best one (whitespace-trimmed). */
  start: number;
  end: number;
}

export class SuffixScorer {
  private readonly features = new Float64Array(FEATURES);
  private readonly w: Float64Array;
  private readonly m: Float64Array;

  constructor(readonly lm: SuffixLm, readonly soup: SuffixLm, readonly config: SuffixScorerConfig) {
    this.w = Float64Array.from(config.weights, (v, j) => v / (config.std[j] as number));
    this.m = Float64Array.from(config.mean);
  }

  static fromArtefact(artefact: unknown): SuffixScorer {
    const a = suffixArtefactSchema.parse(artefact);
    return new SuffixScorer(SuffixLm.fromArtefact(a), SuffixLm.fromArtefact(a.soup), a.scorer);
  }

  private starts = new Int32Array(64);
  private logits = new Float64Array(64);

  /** The logit of the window [start, end) of `scan`, or -Infinity when it is not scorable. */
  private logit(scan: SuffixScan, start: number, end: number): number {
    const f = this.features;
    if (!windowFeatures(scan, start, end, this.config.minScored, f)) return -Infinity;
    let z = this.config.bias;
    for (let j = 0; j < FEATURES; j++) z += (this.w[j] as number) * ((f[j] as number) - (this.m[j] as number));
    return z;
  }

  score(text: string): SuffixVerdict | null {
    const best = this.best(text);
    return best && { score: 1 / (1 + Math.exp(-best.logit)), start: best.start, end: best.end };
  }

  /**
   * The best window's logit (0 = the cut-off) and its span — extended over the adjacent windows that
   * also fire, whitespace-trimmed — or null when no window is scorable.
   */
  best(text: string): { logit: number; start: number; end: number } | null {
    const { window, stride } = this.config;
    const n = text.length;
    const scan = scanText(this.lm, this.soup, text, stride);
    const count = Math.ceil(n / stride) + 1;
    if (this.logits.length < count) {
      this.logits = new Float64Array(count * 2);
      this.starts = new Int32Array(count * 2);
    }
    let windows = 0;
    let bestAt = -1;
    forEachWindow(n, window, stride, 0, (start, end) => {
      const z = this.logit(scan, start, end);
      this.starts[windows] = start;
      this.logits[windows] = z;
      if (z > -Infinity && (bestAt < 0 || z > (this.logits[bestAt] as number))) bestAt = windows;
      windows++;
    });
    if (bestAt < 0) return null;
    const logit = this.logits[bestAt] as number;
    let first = bestAt;
    let last = bestAt;
    if (logit > 0) {
      while (first > 0 && (this.logits[first - 1] as number) > 0) first--;
      while (last + 1 < windows && (this.logits[last + 1] as number) > 0) last++;
    }
    let start = this.starts[first] as number;
    let end = Math.min(n, (this.starts[last] as number) + window);
    while (start < end && text.charCodeAt(start) <= 32) start++;
    while (end > start && text.charCodeAt(end - 1) <= 32) end--;
    return { logit, start, end };
  }
}

let defaultScorer: SuffixScorer | undefined;

/** The committed scorer, loaded on first use (the type query makes tsc copy the JSON to dist/). */
export function loadSuffixScorer(): SuffixScorer {
  if (!defaultScorer) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const artefact = require('./model/suffix-lm.json') as typeof import('./model/suffix-lm.json');
    defaultScorer = SuffixScorer.fromArtefact(artefact);
  }
  return defaultScorer;
}

/**
 * Scores the most token-soup-like window of `text`: null when the text has no window with enough
 * scorable characters (short texts, or texts that are only blobs / non-Latin script).
 */
export function scoreAdversarialSuffix(text: string): { score: number; start: number; end: number } | null {
  return loadSuffixScorer().score(text);
}
