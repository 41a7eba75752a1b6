import { attachScoreSignals, type ClassifierScores, type ClassifierType } from '../backend';
import { ATTACK_SIGNALS, type AttackType, type SignalHits } from './heuristics';
import { LEXICON } from './lexicons';
import { moderationType, PARENT, type ModerationCategory } from './taxonomy';

/**
 * Which heuristic decided a builtin score. A final score is max(model, floors) (builtin-model.ts); when a
 * heuristic floor (heuristics.ts) or a lexicon floor (lexicons.ts) is the maximum, the verdict is that
 * heuristic's, and findings report `heuristic:<id>` instead of `classifier:builtin`. Runs only when a
 * floor fired (a handful of comparisons), and never changes a score.
 */

const ATTACK_TYPES: readonly AttackType[] = ['prompt_attack', 'jailbreak'];

interface FloorEvidence {
  signals: Pick<SignalHits, 'hits' | 'floor'>;
  lexicon: { hits: readonly string[] };
}

const LEXICON_BY_ID = new Map(LEXICON.map((e) => [e.id, e]));

export function withDecidingSignals(scores: ClassifierScores, f: FloorEvidence): ClassifierScores {
  if (f.signals.hits.length === 0 && f.lexicon.hits.length === 0) return scores;
  const decided: Partial<Record<ClassifierType, string>> = {};
  let any = false;
  for (const type of ATTACK_TYPES) {
    const floor = f.signals.floor[type];
    if (floor <= 0 || scores[type] !== floor) continue;
    const id = f.signals.hits.map((i) => ATTACK_SIGNALS[i]).find((s) => s?.floor?.[type] === floor)?.id;
    if (id) {
      decided[type] = `heuristic:${id}`;
      any = true;
    }
  }
  for (const hit of f.lexicon.hits) {
    const entry = LEXICON_BY_ID.get(hit);
    if (!entry) continue;
    // The entry's own category, and its parent when the parent took the child's score (parent closure).
    for (const category of [entry.category, PARENT[entry.category]] as Array<ModerationCategory | undefined>) {
      if (!category) continue;
      const type = moderationType(category);
      if (decided[type] === undefined && scores[type] === entry.floor) {
        decided[type] = `heuristic:${entry.id}`;
        any = true;
      }
    }
  }
  return any ? attachScoreSignals(scores, decided) : scores;
}
