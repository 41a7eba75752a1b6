import { buildViews } from '../../normalize';
import { CLASSIFIER_TYPES, type ClassifierScores, type ClassifierType } from '../backend';
import { splitWindows } from '../windows';
import type { BuiltinModel } from './builtin-model';

/**
 * A whole text's builtin scores exactly as the detection engine would produce them: every view of the
 * text (normalize/views.ts: normalised, canonical, decoded), every window of each view, the maximum per
 * type. Used by the evaluation, the benchmark and tests; the detectors reach the same numbers through
 * the router (ClassifierRouter.scoreWindows + the engine's merge).
 */
export function scoreDocument(model: BuiltinModel, text: string): Record<ClassifierType, number> {
  const best = {} as Record<ClassifierType, number>;
  for (const t of CLASSIFIER_TYPES) best[t] = 0;
  for (const view of buildViews(text)) {
    if (view.text.trim() === '') continue;
    for (const w of splitWindows(view.text)) {
      const scores: ClassifierScores = model.scoreWindow(w.text);
      for (const t of CLASSIFIER_TYPES) best[t] = Math.max(best[t], scores[t] ?? 0);
    }
  }
  return best;
}
