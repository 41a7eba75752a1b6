import type { DetectCategory, DetectFinding } from '../detection-client';
import type { FieldSpan } from './field-layout';

/**
 * Why a category fired: its matches, each a span of one content field, the signal that fired and its
 * score. Never the matched text. At most MAX_MATCHES_PER_CATEGORY per category (highest scores first),
 * so a 1 MB body full of e-mail addresses cannot produce a huge response or audit event.
 */

export interface VerdictMatch {
  /** JSON path of the content field (`messages[2].content`, `content` for /v1/detect). */
  path: string;
  /** UTF-16 offsets inside that field, end exclusive. */
  start: number;
  end: number;
  /** What fired: `classifier:<backend>`, `heuristic:<id>`, `signature:<id>`, `deny_list`, `custom:<name>`, ... */
  signal: string;
  /** The match's confidence, 0..1. */
  score: number;
}

export interface ExplainedCategory extends DetectCategory {
  matches: VerdictMatch[];
}

export const MAX_MATCHES_PER_CATEGORY = 20;

/** Maps a span of the scanned text to the field spans it covers. */
export type Locate = (start: number, end: number) => FieldSpan[];

const byScore = (a: VerdictMatch, b: VerdictMatch) =>
  b.score - a.score || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) || a.start - b.start;

/**
 * Matches per category type, collected from fired findings (one Detect answer, or the updates of a
 * stream). Memory stays O(types × bound): a list is trimmed to the bound whenever it doubles.
 */
export class CategoryMatches {
  private readonly byType = new Map<string, VerdictMatch[]>();

  /** Adds the fired findings (the others explain nothing); `locate` maps their offsets to fields. */
  addFindings(findings: readonly DetectFinding[], locate: Locate): this {
    const fired = findings.filter((f) => f.fired);
    // Most confident first, so a long list is cut before locating what would be dropped anyway.
    fired.sort((a, b) => b.confidence - a.confidence || a.start - b.start);
    const perType = new Map<string, number>();
    for (const f of fired) {
      const seen = perType.get(f.type) ?? 0;
      if (seen >= MAX_MATCHES_PER_CATEGORY) continue;
      perType.set(f.type, seen + 1);
      const signal = f.signal || 'unknown';
      // Explicit fields, not a spread: object spread is several times slower on this path.
      for (const span of locate(f.start, f.end)) this.add(f.type, { path: span.path, start: span.start, end: span.end, signal, score: f.confidence });
    }
    return this;
  }

  /** Adds matches already mapped to fields (e.g. another stage's). */
  addMatches(type: string, matches: readonly VerdictMatch[]): this {
    for (const m of matches) this.add(type, m);
    return this;
  }

  /** The matches of a type, highest scores first, at most MAX_MATCHES_PER_CATEGORY. */
  of(type: string): VerdictMatch[] {
    const list = this.byType.get(type);
    if (!list) return [];
    list.sort(byScore);
    if (list.length > MAX_MATCHES_PER_CATEGORY) list.length = MAX_MATCHES_PER_CATEGORY;
    return list.map((m) => ({ path: m.path, start: m.start, end: m.end, signal: m.signal, score: m.score }));
  }

  /** The categories with their matches. */
  explain(categories: readonly DetectCategory[]): ExplainedCategory[] {
    return categories.map((c) => ({ type: c.type, confidence: c.confidence, action: c.action, matches: this.of(c.type) }));
  }

  private add(type: string, match: VerdictMatch): void {
    let list = this.byType.get(type);
    if (!list) this.byType.set(type, (list = []));
    list.push(match);
    if (list.length >= 2 * MAX_MATCHES_PER_CATEGORY) {
      list.sort(byScore);
      list.length = MAX_MATCHES_PER_CATEGORY;
    }
  }
}

/** /v1/detect style: one verdict, its categories explained. */
export function explainVerdict(
  verdict: { categories: readonly DetectCategory[]; findings: readonly DetectFinding[] },
  locate: Locate,
): ExplainedCategory[] {
  if (verdict.categories.length === 0) return [];
  return new CategoryMatches().addFindings(verdict.findings, locate).explain(verdict.categories);
}
