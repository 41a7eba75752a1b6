import { normalizeText } from '../../../normalize';
import { ATTACK_SIGNALS, evaluateSignals } from '../heuristics';
import { evaluateLexicon, LEXICON } from '../lexicons';
import { prepareText } from '../text-prep';
import type { Row } from './dataset';

/**
 * How often each heuristic signal and lexicon entry fires on the TRAINING split, by class: the evidence
 * behind the hand-set floors (a floor at or above L2 only where benign hits are ~0). Written to the
 * manifest.
 */

export interface SignalReport {
  id: string;
  floor: Record<string, number> | null;
  benignRows: number;
  attackRows: number;
  benignHits: number;
  attackHits: number;
}

export interface LexiconReport {
  id: string;
  category: string;
  floor: number;
  /** Moderation rows labelled with the category / the rest of the moderation rows / benign prompts. */
  labelledHits: string;
  otherHits: string;
  benignPromptHits: string;
}

export function heuristicReport(rows: readonly Row[]): { signals: SignalReport[]; lexicon: LexiconReport[] } {
  const train = rows.filter((r) => r.split === 'train');
  const prepared = train.map((r) => prepareText(normalizeText(r.text).text));
  const injection = train.map((r, i) => ({ r, p: prepared[i] as string })).filter(({ r }) => r.file === 'injection');
  const signalHits = injection.map(({ p }) => new Set(evaluateSignals(p).hits));
  const signals = ATTACK_SIGNALS.map((s, k) => {
    let benignHits = 0;
    let attackHits = 0;
    injection.forEach(({ r }, i) => {
      if (!signalHits[i]?.has(k)) return;
      if (r.labels.length) attackHits++;
      else benignHits++;
    });
    const attackRows = injection.filter(({ r }) => r.labels.length > 0).length;
    return { id: s.id, floor: s.floor ? { ...s.floor } : null, benignRows: injection.length - attackRows, attackRows, benignHits, attackHits };
  });
  const lexHits = train.map((_, i) => new Set(evaluateLexicon(prepared[i] as string).hits));
  const lexicon = LEXICON.map((e) => {
    const count = (pred: (r: Row) => boolean) => {
      let n = 0;
      let hit = 0;
      train.forEach((r, i) => {
        if (!pred(r)) return;
        n++;
        if (lexHits[i]?.has(e.id)) hit++;
      });
      return `${hit}/${n}`;
    };
    return {
      id: e.id,
      category: e.category,
      floor: e.floor,
      labelledHits: count((r) => r.file === 'moderation' && r.labels.includes(e.category)),
      otherHits: count((r) => r.file === 'moderation' && !r.labels.includes(e.category)),
      benignPromptHits: count((r) => r.file === 'injection' && r.labels.length === 0),
    };
  });
  return { signals, lexicon };
}
