import type RE2 from 're2';
import { invalidRequest } from '../shared/errors';
import type { Action, DetectionPolicy, MatchList, MatchType } from '../shared/policy';
import { normalizeLiteral } from './normalize';
import { compileRe2, escapeRe2, findAll, type Span } from './regex-scan';

/**
 * The pattern rules of a configuration (allow list, deny list, custom detectors) compiled to RE2, and
 * an LRU cache of compiled rule sets keyed by the configuration's cache_key.
 *
 * Matching runs on the views of the text (see normalize/views.ts). Literal entries are normalised the
 * same way, and also matched in their confusable-folded form, so a deny entry still matches when the
 * text hides it behind full-width letters, zero-width characters, look-alike letters or an encoding.
 *   contains: case-insensitive substring (an RE2 literal with the `i` flag, which gives exact spans)
 *   exact:    the whole trimmed text equals the trimmed entry, case-insensitive
 *   regex:    RE2 search, the pattern as given (case-sensitive unless it says `(?i)`)
 * Entries that are empty after trimming never match (an empty `contains` would match everything).
 */

interface CompiledEntry {
  /** Lower-cased, normalised, trimmed literals (exact): as written and confusable-folded. */
  literals: string[];
  /** The compiled pattern (contains, regex). */
  re: RE2 | null;
}

export interface CompiledMatchList {
  matchType: MatchType;
  entries: CompiledEntry[];
  /**
   * `contains` lists: every entry in one RE2 alternation, so a text is walked once however long the
   * list (null when the list is empty or the combined pattern is too large for RE2).
   */
  combined: RE2 | null;
}

export interface CompiledCustomDetector {
  type: string;
  action: Action;
  re: RE2;
}

export interface CompiledRules {
  /** The pattern sources these were compiled from; guards the cache against a reused cache_key. */
  signature: string;
  allow: CompiledMatchList;
  deny: CompiledMatchList;
  custom: CompiledCustomDetector[];
}

type RuleSource = Pick<DetectionPolicy, 'allowList' | 'denyList' | 'customDetectors'>;

export function compileRules(config: RuleSource): CompiledRules {
  return {
    signature: signatureOf(config),
    allow: compileMatchList(config.allowList, 'allow_list'),
    deny: compileMatchList(config.denyList, 'deny_list'),
    custom: config.customDetectors.map((d) => ({
      type: `custom/${d.name}`,
      action: d.action,
      re: compileOrReject(d.pattern, '', `custom detector "${d.name}"`),
    })),
  };
}

function compileMatchList(list: MatchList, field: 'allow_list' | 'deny_list'): CompiledMatchList {
  const entries: CompiledEntry[] = [];
  list.entries.forEach((entry, i) => {
    if (list.match_type === 'regex') {
      entries.push({ literals: [], re: compileOrReject(entry, '', `${field} entry ${i} (regex)`) });
      return;
    }
    const { normalized, folded } = normalizeLiteral(entry);
    const literals = [...new Set([normalized.trim(), folded.trim()])];
    if (literals[0] === '') return;
    if (list.match_type === 'exact') {
      entries.push({ literals: literals.map((l) => l.toLowerCase()), re: null });
      return;
    }
    const pattern = literals.map(escapeRe2).join('|');
    entries.push({ literals, re: compileOrReject(pattern, 'i', `${field} entry ${i}`) });
  });
  return { matchType: list.match_type, entries, combined: list.match_type === 'contains' ? combine(entries) : null };
}

function combine(entries: CompiledEntry[]): RE2 | null {
  if (entries.length < 2) return null;
  try {
    // Longest first: RE2 alternation is leftmost-first, and the longer entry is the more telling span.
    const literals = entries.flatMap((e) => e.literals).sort((a, b) => b.length - a.length);
    return compileRe2(literals.map(escapeRe2).join('|'), 'i');
  } catch {
    return null; // over RE2's program-size limit: fall back to one scan per entry
  }
}

function compileOrReject(pattern: string, flags: string, what: string): RE2 {
  try {
    return compileRe2(pattern, flags);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw invalidRequest(`${what} is not a valid RE2 pattern: ${reason}`, 'invalid_pattern');
  }
}

function signatureOf(config: RuleSource): string {
  return JSON.stringify([config.allowList, config.denyList, config.customDetectors]);
}

export interface MatchListOptions {
  /** Whether `exact` entries may match: only where `text` is the whole text (not a part or a decoded blob). */
  wholeText: boolean;
}

/** Spans of every match of every entry (non-empty matches only), at most `limit` in total. */
export function matchListSpans(list: CompiledMatchList, text: string, limit: number, options?: MatchListOptions): Span[] {
  if (list.combined) return findAll(list.combined, text, limit);
  const spans: Span[] = [];
  const wholeText = options?.wholeText ?? true;
  for (const entry of list.entries) {
    if (spans.length >= limit) break;
    if (entry.re) {
      spans.push(...findAll(entry.re, text, limit - spans.length));
    } else if (wholeText && entry.literals.includes(text.trim().toLowerCase())) {
      const start = text.length - text.trimStart().length;
      spans.push({ start, end: Math.max(start, text.trimEnd().length) });
    }
  }
  return spans;
}

/** Least-recently-used cache of compiled rules. An empty cache_key bypasses it. */
export class RuleCache {
  private readonly entries = new Map<string, CompiledRules>();

  constructor(private readonly maxEntries = 500) {}

  get size(): number {
    return this.entries.size;
  }

  rulesFor(cacheKey: string, config: RuleSource): CompiledRules {
    if (cacheKey === '') return compileRules(config);
    const hit = this.entries.get(cacheKey);
    if (hit && hit.signature === signatureOf(config)) {
      this.entries.delete(cacheKey);
      this.entries.set(cacheKey, hit);
      return hit;
    }
    const compiled = compileRules(config);
    this.entries.delete(cacheKey);
    this.entries.set(cacheKey, compiled);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    return compiled;
  }
}
