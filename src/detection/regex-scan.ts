import RE2 from 're2';

/**
 * Small helpers around RE2 (linear-time matching, no catastrophic backtracking: user-supplied patterns
 * are only ever run with RE2). Offsets are UTF-16 code units, as JavaScript strings count them.
 */

export interface Span {
  start: number;
  end: number;
}

/** Escapes a literal so RE2 matches it verbatim (ASCII punctuation only; RE2 rejects other escapes). */
export function escapeRe2(literal: string): string {
  return literal.replace(/[!-/:-@[-^`{-~]/g, '\\$&');
}

/** Compiles with the flags every scan uses: global (for exec iteration) and Unicode. */
export function compileRe2(pattern: string, flags = ''): RE2 {
  return new RE2(pattern, `gu${flags}`);
}

/**
 * Every non-empty match of `re` in `text`, left to right, at most `limit`. Empty matches are skipped (a
 * pattern such as `a*` would otherwise "match" every position of every text). `re` must be global; its
 * lastIndex is reset, so one compiled instance can be reused (calls are synchronous, never interleaved).
 */
export function findAll(re: RE2, text: string, limit: number): Span[] {
  const spans: Span[] = [];
  re.lastIndex = 0;
  while (spans.length < limit) {
    const m = re.exec(text);
    if (!m) break;
    const matched = m[0];
    if (matched.length === 0) {
      const code = text.charCodeAt(m.index);
      re.lastIndex = m.index + (code >= 0xd800 && code <= 0xdbff ? 2 : 1); // never split a surrogate pair
      if (re.lastIndex > text.length) break;
      continue;
    }
    spans.push({ start: m.index, end: m.index + matched.length });
  }
  re.lastIndex = 0;
  return spans;
}
