import type { Dispatcher } from 'undici';
import { z } from 'zod';
import type { ClassifierBackend, ClassifierScores, ClassifierType } from '../backend';
import { BackendError } from './backend-errors';
import { joinUrl, postJson } from './http-json';

/**
 * An OpenAI-compatible moderation endpoint: `POST {baseUrl}/moderations` with `{model, input}` and a
 * bearer key; the 13 categories of `results[0].category_scores` map one to one onto
 * `moderated_content/*` (slashes and hyphens of the API become underscores), scores become confidences.
 * Every configured category must be present with a score in 0..1: a missing or out-of-range score is
 * a malformed answer (a throw), never a pass.
 */

/** OpenAI category key → detector type. */
export const MODERATION_CATEGORY_MAP = {
  harassment: 'moderated_content/harassment',
  'harassment/threatening': 'moderated_content/harassment_threatening',
  hate: 'moderated_content/hate',
  'hate/threatening': 'moderated_content/hate_threatening',
  illicit: 'moderated_content/illicit',
  'illicit/violent': 'moderated_content/illicit_violent',
  'self-harm': 'moderated_content/self_harm',
  'self-harm/intent': 'moderated_content/self_harm_intent',
  'self-harm/instructions': 'moderated_content/self_harm_instructions',
  sexual: 'moderated_content/sexual',
  'sexual/minors': 'moderated_content/sexual_minors',
  violence: 'moderated_content/violence',
  'violence/graphic': 'moderated_content/violence_graphic',
} as const satisfies Record<string, ClassifierType>;

export type ModerationCategory = keyof typeof MODERATION_CATEGORY_MAP;
export const MODERATION_TYPES = Object.values(MODERATION_CATEGORY_MAP) as ClassifierType[];
const CATEGORY_OF = new Map<ClassifierType, ModerationCategory>(
  Object.entries(MODERATION_CATEGORY_MAP).map(([category, type]) => [type, category as ModerationCategory]),
);

const score = z.number().min(0).max(1);
const moderationResponseSchema = z.object({
  results: z
    .array(
      z.object({
        // Only the scores are used; null values (some compatible servers) fail the check below per category.
        category_scores: z.record(z.string(), z.unknown()),
      }),
    )
    .min(1),
});

export interface OpenAiModerationOptions {
  /** e.g. https://api.openai.com/v1 (the endpoint is `${baseUrl}/moderations`). */
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** The subset of moderated_content/* this instance is asked for (default all 13). */
  types?: readonly ClassifierType[];
  dispatcher: Dispatcher;
}

export class OpenAiModerationBackend implements ClassifierBackend {
  readonly name = 'openai-moderation';
  readonly types: readonly ClassifierType[];
  private readonly url: string;

  constructor(private readonly options: OpenAiModerationOptions) {
    const types = options.types ?? MODERATION_TYPES;
    for (const t of types) {
      if (!CATEGORY_OF.has(t)) throw new Error(`openai-moderation cannot score ${t}`);
    }
    this.types = [...types];
    this.url = joinUrl(options.baseUrl, '/moderations');
  }

  async classify(text: string, signal: AbortSignal): Promise<ClassifierScores> {
    const raw = await postJson({
      name: this.name,
      dispatcher: this.options.dispatcher,
      url: this.url,
      bearer: this.options.apiKey,
      body: { model: this.options.model, input: text },
      signal,
    });
    const parsed = moderationResponseSchema.safeParse(raw);
    if (!parsed.success) throw new BackendError('malformed', `${this.name}: response lacks results[0].category_scores`);
    const scores = (parsed.data.results[0] as { category_scores: Record<string, unknown> }).category_scores;
    const out: ClassifierScores = {};
    for (const type of this.types) {
      const category = CATEGORY_OF.get(type) as ModerationCategory;
      const value = score.safeParse(scores[category]);
      if (!value.success) {
        throw new BackendError('malformed', `${this.name}: category_scores["${category}"] is missing or not a number in 0..1`);
      }
      out[type] = value.data;
    }
    return out;
  }
}
