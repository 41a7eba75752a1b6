import type { FeatureHasher, SparseVector } from './features';
import { evaluateSignals, TRIGGERS, type SignalHits } from './heuristics';
import { evaluateLexicon } from './lexicons';
import { prepareText } from './text-prep';
import type { ModerationCategory } from './taxonomy';

/**
 * Everything the builtin model reads from one window of text: shared by training and inference.
 *
 * Focus: in a long window an attack phrase is a few percent of the (length-normalised) n-gram mass and
 * gets diluted by the surrounding text (a 100 KB tool result with an injected instruction at the end).
 * When an attack signal matches, the attack heads also score the FOCUS: FOCUS_RADIUS characters either
 * side of the first match, and take the higher of the two. Texts without a signal are unaffected; the
 * calibration and the evaluation include the focus (it is part of what the heads score).
 */
export const FOCUS_RADIUS = 300;
/** No focus for windows barely longer than the focus itself (it would be the same text). */
const FOCUS_MIN_WINDOW = 2 * FOCUS_RADIUS + 400;

export interface WindowFeatures {
  vector: SparseVector;
  /** Features of the focus around the first attack signal, when there is one. */
  focus?: SparseVector;
  signals: SignalHits;
  lexicon: { floors: Partial<Record<ModerationCategory, number>>; hits: string[] };
}

export function windowFeatures(hasher: FeatureHasher, text: string): WindowFeatures {
  const prepared = prepareText(text);
  const present = TRIGGERS.scan(prepared);
  const signals = evaluateSignals(prepared, present);
  const lexicon = evaluateLexicon(prepared, { index: TRIGGERS, present });
  const vector = hasher.extract(prepared, signals.hits);
  if (!signals.at || prepared.length < FOCUS_MIN_WINDOW) return { vector, signals, lexicon };
  const start = Math.max(0, signals.at[0] - FOCUS_RADIUS);
  const focusText = prepared.slice(start, signals.at[1] + FOCUS_RADIUS);
  const focusPrepared = prepareText(focusText);
  const focus = hasher.extract(focusPrepared, evaluateSignals(focusPrepared).hits);
  return { vector, focus, signals, lexicon };
}

/**
 * What the model needs from one window to score it, without keeping the vectors: `logits` is called on
 * the window's vector and then on its focus (if any) while each is still in the hasher's scratch buffers
 * (FeatureHasher.extractScratch: no copies). The same features as windowFeatures, in the same order.
 */
export function windowScoringInputs(
  hasher: FeatureHasher,
  text: string,
  logits: (v: SparseVector) => Float64Array,
): { z: Float64Array; zFocus?: Float64Array; signals: SignalHits; lexicon: WindowFeatures['lexicon'] } {
  const prepared = prepareText(text);
  const present = TRIGGERS.scan(prepared);
  const signals = evaluateSignals(prepared, present);
  const lexicon = evaluateLexicon(prepared, { index: TRIGGERS, present });
  const z = logits(hasher.extractScratch(prepared, signals.hits));
  if (!signals.at || prepared.length < FOCUS_MIN_WINDOW) return { z, signals, lexicon };
  const start = Math.max(0, signals.at[0] - FOCUS_RADIUS);
  const focusPrepared = prepareText(prepared.slice(start, signals.at[1] + FOCUS_RADIUS));
  const zFocus = logits(hasher.extractScratch(focusPrepared, evaluateSignals(focusPrepared).hits));
  return { z, zFocus, signals, lexicon };
}
