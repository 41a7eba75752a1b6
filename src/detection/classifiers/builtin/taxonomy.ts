import type { ClassifierType } from '../backend';

/**
 * What the builtin backend scores and how its outputs map to classifier types.
 *
 * HEADS are the trained binary logistic-regression models (one weight vector each over the same hashed
 * features). Moderation categories with enough labelled rows get a head of their own; the four with
 * almost none (harassment_threatening 26 rows, hate_threatening 8, violence_graphic 6,
 * self_harm_intent 2) are DERIVED: their parent's model score combined with a lexicon of the child's
 * defining trait (lexicons.ts), see builtin-model.ts.
 *
 * Parent closure (the data's label sets are closed: child ⇒ parent): a parent's final score is the max
 * of its own score and its children's, so a child never scores above its parent.
 */

export const HEADS = [
  'prompt_attack',
  'jailbreak',
  'harassment',
  'hate',
  'sexual',
  'sexual_minors',
  'violence',
  'self_harm',
  'self_harm_instructions',
  'illicit',
  'illicit_violent',
] as const;

export type HeadName = (typeof HEADS)[number];

export const MODERATION_CATEGORIES = [
  'harassment',
  'harassment_threatening',
  'hate',
  'hate_threatening',
  'sexual',
  'sexual_minors',
  'violence',
  'violence_graphic',
  'self_harm',
  'self_harm_intent',
  'self_harm_instructions',
  'illicit',
  'illicit_violent',
] as const;

export type ModerationCategory = (typeof MODERATION_CATEGORIES)[number];

/** child → parent, as in the dataset README. */
export const PARENT: Readonly<Partial<Record<ModerationCategory, ModerationCategory>>> = {
  harassment_threatening: 'harassment',
  hate_threatening: 'hate',
  sexual_minors: 'sexual',
  violence_graphic: 'violence',
  self_harm_intent: 'self_harm',
  self_harm_instructions: 'self_harm',
  illicit_violent: 'illicit',
};

/** Categories without a head of their own: parent model + lexicon. */
export const DERIVED_CATEGORIES = ['harassment_threatening', 'hate_threatening', 'violence_graphic', 'self_harm_intent'] as const;
export type DerivedCategory = (typeof DERIVED_CATEGORIES)[number];

/**
 * The score a derived category gets from its parent alone, without lexicon evidence, is capped below the
 * lowest cut-off (L4 0.30): parent-only evidence is not evidence of the child's trait (an offensive tweet
 * is not a threat), so only the lexicon makes a derived category fire. Measured: with a cap of 0.45
 * (firing at L4 on parent evidence) harassment_threatening fired at L4 on 58% of the held-out negatives.
 */
export const DERIVED_PARENT_CAP = 0.25;

export function moderationType(category: ModerationCategory): ClassifierType {
  return `moderated_content/${category}`;
}

export function isModerationCategory(value: string): value is ModerationCategory {
  return (MODERATION_CATEGORIES as readonly string[]).includes(value);
}
