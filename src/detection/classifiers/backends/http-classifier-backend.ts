import type { Dispatcher } from 'undici';
import { z } from 'zod';
import type { ClassifierBackend, ClassifierScores, ClassifierType } from '../backend';
import { BackendError } from './backend-errors';
import { joinUrl, postJson } from './http-json';
import { defaultOverlap, splitIntoChunks } from './text-chunks';

/**
 * A Hugging Face text-embeddings-inference (TEI) style sequence-classification server:
 * `POST {baseUrl}{path}` (path `/predict` by default, or e.g. `/classify`) with `{"inputs": text}` or,
 * for several chunks, `{"inputs": [text, …]}`. TEI answers `[{"label", "score"}, …]` for one input and
 * `[[…], …]` for a batch (both shapes are accepted for one input). Hosts models such as Prompt Guard 2
 * (BENIGN / MALICIOUS), Prompt Guard 1 (BENIGN / INJECTION / JAILBREAK) or a DeBERTa injection model
 * (SAFE / INJECTION).
 *
 * A label → detector type map decides what the labels mean; a type's score is the highest score of its
 * labels. Every mapped type needs at least one of its labels in each answer (TEI returns all labels),
 * otherwise the answer is malformed. Text longer than `maxChars` (the model's own input limit) is split
 * into overlapping chunks sent as batches of at most `batchSize`, and each type takes its maximum.
 */

const labelScoreSchema = z.object({ label: z.string().min(1), score: z.number().min(0).max(1) });
const singleSchema = z.array(labelScoreSchema).min(1);
const predictResponseSchema = z.union([singleSchema, z.array(singleSchema).min(1)]);
type LabelScores = z.infer<typeof singleSchema>;

/** TEI's default --max-client-batch-size. */
export const DEFAULT_BATCH_SIZE = 32;

export interface HttpClassifierOptions {
  baseUrl: string;
  /** Default `/predict`. */
  path?: string;
  apiKey?: string;
  /** Model label (matched case-insensitively) → detector type. */
  labels: ReadonlyMap<string, ClassifierType>;
  /** The model's own input limit in characters; longer text is split further (default: no split). */
  maxChars?: number;
  batchSize?: number;
  dispatcher: Dispatcher;
}

export class HttpClassifierBackend implements ClassifierBackend {
  readonly name = 'http-classifier';
  readonly types: readonly ClassifierType[];
  private readonly url: string;
  private readonly labels: ReadonlyMap<string, ClassifierType>;

  constructor(private readonly options: HttpClassifierOptions) {
    if (options.labels.size === 0) throw new Error('http-classifier needs at least one label mapping');
    this.labels = new Map([...options.labels].map(([label, type]) => [label.toUpperCase(), type]));
    this.types = [...new Set(this.labels.values())];
    this.url = joinUrl(options.baseUrl, options.path ?? '/predict');
  }

  async classify(text: string, signal: AbortSignal): Promise<ClassifierScores> {
    const { maxChars } = this.options;
    const chunks = maxChars ? splitIntoChunks(text, maxChars, defaultOverlap(maxChars)) : [text];
    const batchSize = Math.max(1, this.options.batchSize ?? DEFAULT_BATCH_SIZE);
    const out: ClassifierScores = {};
    // Batches run one after another: a 100 KB text must not take every connection of the pool at once.
    for (let i = 0; i < chunks.length; i += batchSize) {
      const batch = chunks.slice(i, i + batchSize);
      for (const answer of await this.predict(batch, signal)) {
        const scores = this.scoresOf(answer);
        for (const type of this.types) out[type] = Math.max(out[type] ?? 0, scores[type] as number);
      }
    }
    return out;
  }

  private async predict(batch: string[], signal: AbortSignal): Promise<LabelScores[]> {
    const single = batch.length === 1;
    const raw = await postJson({
      name: this.name,
      dispatcher: this.options.dispatcher,
      url: this.url,
      bearer: this.options.apiKey,
      body: { inputs: single ? batch[0] : batch },
      signal,
    });
    const parsed = predictResponseSchema.safeParse(raw);
    if (!parsed.success) {
      throw new BackendError('malformed', `${this.name}: response is not a list of {label, score} with scores in 0..1`);
    }
    const data = parsed.data;
    const answers: LabelScores[] = isNested(data) ? data : [data];
    if (answers.length !== batch.length) {
      throw new BackendError('malformed', `${this.name}: ${answers.length} answers for ${batch.length} inputs`);
    }
    return answers;
  }

  private scoresOf(answer: LabelScores): ClassifierScores {
    const scores: ClassifierScores = {};
    for (const { label, score } of answer) {
      const type = this.labels.get(label.toUpperCase());
      if (type) scores[type] = Math.max(scores[type] ?? 0, score);
    }
    for (const type of this.types) {
      if (scores[type] === undefined) {
        const wanted = [...this.labels].filter(([, t]) => t === type).map(([l]) => l);
        throw new BackendError('malformed', `${this.name}: answer has none of the labels mapped to ${type} (${wanted.join(', ')})`);
      }
    }
    return scores;
  }
}

function isNested(data: LabelScores | LabelScores[]): data is LabelScores[] {
  return Array.isArray(data[0]);
}
