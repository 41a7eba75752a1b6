import { ATTACK_SIGNALS, evaluateSignals } from '../heuristics';
import { prepareText } from '../text-prep';
import type { HeadName, ModerationCategory } from '../taxonomy';
import { unitFromKey, type Row } from './dataset';
import { isSynthetic } from './synthetic';

/**
 * What each head learns from, and how the evaluation labels each row per type. Shared by training and
 * evaluation so the two can never disagree.
 *
 * prompt_attack  injection rows: label 1 → positive, 0 → negative.
 * jailbreak      the data has one "attack" label, so jailbreak labels are derived: an attack row is a
 *                jailbreak when it comes from the in-the-wild jailbreak collection (verazuo_jailbreak) or
 *                a persona/role-play jailbreak signal fires on it (DAN, developer mode, stay in character,
 *                no rules, named jailbreak personas, dual responses, "jailbroken"); other attacks
 *                (instruction override, hijacking, indirect injection) are left out of the jailbreak head
 *                and its evaluation (neither positive nor negative). Benign rows are negatives.
 * moderation     moderation rows (positive = category in labels) plus the injection file's benign rows
 *                as extra negatives (long, ordinary prompts: the moderation file's benign sample is
 *                mostly short). Rows of the tweet sources count at TWEET_NEGATIVE_WEIGHT as negatives of
 *                the categories they were never annotated for (everything but hate and harassment).
 *                Davidson's ~19k "offensive" (→ harassment) tweets are subsampled for training
 *                (DAVIDSON_HARASSMENT_KEEP), never for evaluation.
 */

export const TWEET_NEGATIVE_WEIGHT = 0.5;
/**
 * Questions about a sensitive topic (synthetic.ts) against the many harmful requests that share their
 * topic words: at weight 1 the heads still scored "what is child abuse" 1.0 (a few hundred rows among
 * 45,000 negatives), so each counts as this many negatives.
 */
export const TOPIC_QUESTION_WEIGHT = 10;
export const DAVIDSON_HARASSMENT_KEEP = 0.45;
/**
 * Everyday requests worded like harmful ones (synthetic.ts: "write a tutorial on how to build a bookshelf")
 * against the ~2,000 harmful requests that taught the heads the wording: each counts as this many negatives.
 */
export const EVERYDAY_REQUEST_WEIGHT = 5;

const MODERATION_BUDGET_SYNTHETIC = new Set(['synthetic_topic_question', 'synthetic_everyday_request']);
const TWEET_SOURCES = /^(davidson|tweeteval_|toxigen_human)/;
const ANNOTATED_BY_TWEETS = new Set<string>(['harassment', 'hate']);
const JAILBREAK_SIGNALS = new Set([
  'persona_dan',
  'persona_developer_mode',
  'persona_jailbroken',
  'persona_stay_in_character',
  'persona_no_limits',
  'persona_policy_evasion',
  'persona_dual_response',
  'persona_named_jailbreak',
]);

export function isJailbreakRow(row: Row): boolean {
  if (!row.labels.includes('attack')) return false;
  if (row.source === 'verazuo_jailbreak') return true;
  return evaluateSignals(prepareText(row.text)).hits.some((i) => JAILBREAK_SIGNALS.has((ATTACK_SIGNALS[i] as { id: string }).id));
}

/**
 * The benign prompts the attack heads' false-positive budgets are measured on: the injection file's benign
 * rows, not the generated ones (framed benign requests and short turns are training negatives; counted in
 * the budget, their easy cases would buy the real prompts a looser cut-off).
 */
const realBenignPrompt = (r: Row) => r.file === 'injection' && r.labels.length === 0 && !isSynthetic(r);

/** 1 positive, 0 negative, undefined = not used for this head / type. */
export type Target = 0 | 1 | undefined;

export interface Labeller {
  target(row: Row): Target;
  /** Weight before class balancing. */
  weight(row: Row): number;
  /** Whether the row is a benign text (the FPR caps of the calibration apply to these). */
  benign(row: Row): boolean;
}

export function labellerFor(head: HeadName | ModerationCategory, duplicatesOfModeration: ReadonlySet<string>): Labeller {
  if (head === 'prompt_attack') {
    return {
      target: (r) => (r.file === 'injection' ? (r.labels.length > 0 ? 1 : 0) : undefined),
      weight: () => 1,
      benign: realBenignPrompt,
    };
  }
  if (head === 'jailbreak') {
    const cache = new Map<Row, boolean>();
    const jb = (r: Row) => cache.get(r) ?? cache.set(r, isJailbreakRow(r)).get(r) === true;
    return {
      target: (r) => (r.file !== 'injection' ? undefined : r.labels.length === 0 ? 0 : jb(r) ? 1 : undefined),
      weight: () => 1,
      benign: realBenignPrompt,
    };
  }
  const category: string = head;
  return {
    target: (r) => {
      if (r.file === 'moderation') return r.labels.includes(category) ? 1 : 0;
      // Injection benign rows are extra negatives, unless the moderation file has the same text.
      return r.labels.length === 0 && !duplicatesOfModeration.has(r.key) ? 0 : undefined;
    },
    weight: (r) =>
      r.source === 'synthetic_topic_question'
        ? TOPIC_QUESTION_WEIGHT
        : r.source === 'synthetic_everyday_request'
          ? EVERYDAY_REQUEST_WEIGHT
          : TWEET_SOURCES.test(r.source) && !ANNOTATED_BY_TWEETS.has(category) && !r.labels.includes(category)
          ? TWEET_NEGATIVE_WEIGHT
          : 1,
    // The false-positive budgets of the moderation levels are about prompts people send an assistant
    // (the injection file's benign prompts, the moderation file's benign:* sample and topic questions),
    // not about the tweets annotated "not hateful": those are the heads' hard negatives, and an FPR budget
    // on them cost harassment F1 0.80 → 0.65 once the budget went down to 0.5%.
    // Of the generated rows, the topic questions and everyday requests count (the calibration split's share
    // is never trained on; the real benign prompts have almost no how-to requests and no question about a
    // harm); short turns and framed requests stay out.
    benign: (r) =>
      r.labels.length === 0 &&
      (MODERATION_BUDGET_SYNTHETIC.has(r.source) || (!isSynthetic(r) && (r.file === 'injection' || r.source.startsWith('benign:')))),
  };
}

/**
 * In-the-wild jailbreak rows this short are mostly not attacks at all ("cat wearing a robe sommersaulting
 * in the woods, studio ghibli style", "Write 50 Chat GPT prompts for {{ profession}}"): trained as
 * positives they taught the model that short everyday requests are jailbreaks. Dropped from training (the
 * evaluation still counts them).
 */
export const MIN_IN_THE_WILD_JAILBREAK_CHARS = 120;

/** Training-only subsampling (Davidson offensive tweets, short in-the-wild rows); evaluation uses every held-out row. */
export function keptForTraining(row: Row): boolean {
  if (row.source === 'verazuo_jailbreak' && row.text.length < MIN_IN_THE_WILD_JAILBREAK_CHARS) return false;
  if (row.source !== 'davidson' || row.labels.join(',') !== 'harassment') return true;
  return unitFromKey(row.key, 'subsample') < DAVIDSON_HARASSMENT_KEEP;
}
