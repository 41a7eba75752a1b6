import type RE2 from 're2';
import { invalidRequest } from '../shared/errors';
import type { Action, DetectionPolicy, MatchList, MatchType } from '../shared/policy';
import { normalizeText } from './normalize';
import { compileRe2, escapeRe2, findAll, matchesAnywhere, type Span } from './regex-scan';

/**
 * The pattern rules of a configuration (allow list, deny list, custom detectors) compiled to RE2, and
 * an LRU cache of compiled rule sets keyed by the configuration's cache_key.
 *
 * Matching runs on the normalised text. Literal entries are normalised the same way, so a deny entry
 * still matches when the text hides it behind full-width letters or zero-width characters.
 *   contains: case-insensitive substring (an RE2 literal with the `i` flag, which gives exact spans)
 *   exact:    the whole trimmed text equals the trimmed entry, case-insensitive
 *   regex:    RE2 search, the pattern as given (case-sensitive unless it says `(?i)`)
 * Entries that are empty after trimming never match (an empty `contains` would match everything).
 */

interface CompiledEntry {
  /** Lower-cased, normalised, trimmed literal (exact), or the compiled pattern (contains, regex). */
  literal: string;
  re: RE2 | null;
}

export interface CompiledMatchList {
  matchType: MatchType;
  entries: CompiledEntry[];
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
      entries.push({ literal: '', re: compileOrReject(entry, '', `${field} entry ${i} (regex)`) });
      return;
    }
    const literal = normalizeText(entry).text.trim();
    if (literal === '') return;
    if (list.match_type === 'exact') entries.push({ literal: literal.toLowerCase(), re: null });
    else entries.push({ literal, re: compileOrReject(escapeRe2(literal), 'i', `${field} entry ${i}`) });
  });
  return { matchType: list.match_type, entries };
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

/** True when any entry of the list matches the (normalised) text. */
export function anyEntryMatches(list: CompiledMatchList, text: string): boolean {
  const trimmedLower = list.matchType === 'exact' ? text.trim().toLowerCase() : '';
  return list.entries.some((e) => (e.re ? matchesAnywhere(e.re, text) : e.literal === trimmedLower));
}

/** Spans of every match of every entry (non-empty matches only), at most `limit` in total. */
export function matchListSpans(list: CompiledMatchList, text: string, limit: number): Span[] {
  const spans: Span[] = [];
  for (const entry of list.entries) {
    if (spans.length >= limit) break;
    if (entry.re) {
      spans.push(...findAll(entry.re, text, limit - spans.length));
    } else if (entry.literal === text.trim().toLowerCase()) {
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
