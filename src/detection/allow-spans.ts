import type { DetectorType } from '../shared/detector-catalog';
import type { RuleResult } from './decide';
import { matchListSpans, type CompiledMatchList } from './match-rules';
import type { TextView } from './normalize';
import type { Span } from './regex-scan';

/**
 * The allow list exempts the spans it matches, never the whole text (issue #16: an allow-listed phrase in
 * a system message used to switch every detector off for the whole request).
 *
 *   contains: each matched occurrence is an exempt span
 *   exact:    the whole (trimmed) text equals an entry → the whole text is exempt
 *   regex:    each RE2 match is an exempt span
 *
 * Entries match on the normalised view of the text (as before); spans are mapped back to the original
 * text and overlapping / touching spans are merged. A finding is dropped only when it lies entirely
 * inside one exempt span. Classifier detectors score windows, so their findings are rarely inside a
 * short phrase: they score a copy of the text with the exempt spans blanked out (each UTF-16 unit replaced
 * by a space, so offsets do not move). The allow-listed phrase then contributes nothing to any window,
 * and an attack elsewhere (or around it) is still scored on its own words.
 */

/** Exempt spans beyond this many are not exempt (scanned as usual: the cap fails closed). */
export const MAX_ALLOW_SPANS = 1000;

/** Detector types scored by a classifier over windows (prompt defence and content moderation). */
export function isWindowClassifier(type: DetectorType): boolean {
  return type === 'prompt_attack' || type === 'jailbreak' || type.startsWith('moderated_content/');
}

/** The exempt spans of `primary` (the normalised view), in original-text offsets, merged and sorted. */
export function allowListSpans(list: CompiledMatchList, primary: TextView, wholeText: boolean): Span[] {
  if (list.entries.length === 0) return [];
  const spans = matchListSpans(list, primary.text, MAX_ALLOW_SPANS, { wholeText })
    .filter((s) => s.end > s.start)
    .map((s) => (primary.identity ? s : primary.toOriginal(s.start, s.end)));
  return mergeSpans(spans);
}

export function mergeSpans(spans: Span[]): Span[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start || a.end - b.end);
  const out: Span[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s.start <= last.end) last.end = Math.max(last.end, s.end);
    else out.push({ start: s.start, end: s.end });
  }
  return out;
}

/** The text with every exempt span replaced by spaces (same length, so spans need no mapping). */
export function blankSpans(text: string, spans: readonly Span[]): string {
  let out = '';
  let at = 0;
  for (const s of spans) {
    out += text.slice(at, s.start) + ' '.repeat(s.end - s.start);
    at = s.end;
  }
  return out + text.slice(at);
}

function insideAny(finding: Span, spans: readonly Span[]): boolean {
  return spans.some((s) => finding.start >= s.start && finding.end <= s.end);
}

/** Drops the findings that lie entirely inside an exempt span; counts how many were dropped. */
export function exemptFindings(results: RuleResult[], spans: readonly Span[]): { results: RuleResult[]; exempted: number } {
  if (spans.length === 0) return { results, exempted: 0 };
  let exempted = 0;
  const kept = results.map((r) => {
    const findings = r.findings.filter((f) => !insideAny(f, spans));
    exempted += r.findings.length - findings.length;
    return { ...r, findings };
  });
  return { results: kept, exempted };
}
