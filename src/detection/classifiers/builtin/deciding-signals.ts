import { attachScoreSignals, type ClassifierScores, type ClassifierType } from '../backend';
import { ATTACK_SIGNALS, type AttackType, type SignalHits } from './heuristics';
import { LEXICON } from './lexicons';
import { SUFFIX_PERPLEXITY_SIGNAL } from '../../signals';
import { moderationType, PARENT, type ModerationCategory } from './taxonomy';

/**
 * Which heuristic decided a builtin score. A final score is max(model, floors, stacking) (builtin-model.ts);
 * when a heuristic floor (heuristics.ts), a lexicon floor (lexicons.ts) or the stacking of a harmful
 * request inside a framing (the framing signal's id) is the maximum, the verdict is that heuristic's, and
 * findings report `heuristic:<id>` instead of `classifier:builtin`. Runs only when a signal fired (a
 * handful of comparisons), and never changes a score.
 */

const ATTACK_TYPES: readonly AttackType[] = ['prompt_attack', 'jailbreak'];

interface FloorEvidence {
  signals: Pick<SignalHits, 'hits' | 'floor'>;
  lexicon: { hits: readonly string[] };
}

const LEXICON_BY_ID = new Map(LEXICON.map((e) => [e.id, e]));

/** The stacking of builtin-model.ts: the (boosted) harm score the attack types were raised to, and the framing signal (index) that did it. */
export interface StackedHarm {
  harm: number;
  /** The framing signal's index in ATTACK_SIGNALS, or the adversarial-suffix signal. */
  framing: number | typeof SUFFIX_PERPLEXITY_SIGNAL;
}

export function withDecidingSignals(scores: ClassifierScores, f: FloorEvidence, stacked?: StackedHarm, suffixScore = 0): ClassifierScores {
  if (f.signals.hits.length === 0 && f.lexicon.hits.length === 0 && suffixScore === 0) return scores;
  const decided: Partial<Record<ClassifierType, string>> = {};
  attackSignals(scores, f, stacked, decided);
  for (const type of ATTACK_TYPES) if (decided[type] === undefined && suffixScore > 0 && scores[type] === suffixScore) decided[type] = SUFFIX_PERPLEXITY_SIGNAL;
  lexiconSignals(scores, f, decided);
  return Object.keys(decided).length > 0 ? attachScoreSignals(scores, decided) : scores;
}

type Decided = Partial<Record<ClassifierType, string>>;

/** prompt_attack / jailbreak: the floor of an attack signal, else the framing that stacked a harmful request. */
function attackSignals(scores: ClassifierScores, f: FloorEvidence, stacked: StackedHarm | undefined, decided: Decided): void {
  const framing = !stacked ? undefined : typeof stacked.framing === 'number' ? `heuristic:${ATTACK_SIGNALS[stacked.framing]?.id}` : stacked.framing;
  for (const type of ATTACK_TYPES) {
    const floor = f.signals.floor[type];
    const id =
      floor > 0 && scores[type] === floor
        ? f.signals.hits.map((i) => ATTACK_SIGNALS[i]).find((s) => s?.floor?.[type] === floor)?.id
        : undefined;
    if (id) decided[type] = `heuristic:${id}`;
    else if (stacked && framing && scores[type] === stacked.harm) decided[type] = framing;
  }
}

/** Moderation: a lexicon entry's floor, credited to its category and to the parent that took the child score. */
function lexiconSignals(scores: ClassifierScores, f: FloorEvidence, decided: Decided): void {
  for (const hit of f.lexicon.hits) {
    const entry = LEXICON_BY_ID.get(hit);
    if (!entry) continue;
    for (const category of [entry.category, PARENT[entry.category]] as Array<ModerationCategory | undefined>) {
      if (!category) continue;
      const type = moderationType(category);
      if (decided[type] === undefined && scores[type] === entry.floor) decided[type] = `heuristic:${entry.id}`;
    }
  }
}
