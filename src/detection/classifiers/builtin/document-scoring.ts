import { alignmentBase, buildViews } from '../../normalize';
import { CLASSIFIER_TYPES, type ClassifierScores, type ClassifierType } from '../backend';
import { alignedWindowSpans } from '../windows';
import type { BuiltinModel } from './builtin-model';

/**
 * A whole text's builtin scores exactly as the detection engine would produce them: every view of the
 * text (normalize/views.ts: normalised, canonical, decoded), every window of each view (the canonical
 * view's windows aligned with the normalised view's, as the engine does), the maximum per type. A window
 * whose text was already scored is not scored again (the engine's shared calls do the same). Used by the
 * evaluation, the benchmark and tests; the detectors reach the same numbers through the router
 * (ClassifierRouter.scoreWindows + the engine's merge).
 */
export function scoreDocument(model: BuiltinModel, text: string): Record<ClassifierType, number> {
  const best = {} as Record<ClassifierType, number>;
  for (const t of CLASSIFIER_TYPES) best[t] = 0;
  const views = buildViews(text);
  const seen = views.length > 1 ? new Set<string>() : undefined;
  for (const view of views) {
    if (view.text.trim() === '') continue;
    for (const w of alignedWindowSpans(view.text, alignmentBase(view, views))) {
      const windowText = view.text.slice(w.start, w.end);
      if (seen) {
        if (seen.has(windowText)) continue;
        seen.add(windowText);
      }
      const scores: ClassifierScores = model.scoreWindow(windowText);
      for (const t of CLASSIFIER_TYPES) best[t] = Math.max(best[t], scores[t] ?? 0);
    }
  }
  return best;
}
