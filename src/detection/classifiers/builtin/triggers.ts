/**
 * Speed only: finds which of a fixed set of trigger substrings occur in a text, in one regex pass, so a
 * heuristic whose regex needs one of its triggers can be skipped when none occurs. Results never change:
 * a trigger is a necessary condition of its pattern.
 *
 * Every trigger is first replaced by the shortest trigger it contains (containing the longer one implies
 * containing the shorter one, so the condition stays necessary); the remaining "minimal" triggers never
 * contain one another, and resuming the scan one unit after each match start finds every occurrence.
 */
export class TriggerIndex {
  private readonly regex: RegExp;
  private readonly minimal: ReadonlyMap<string, string>;

  constructor(triggers: Iterable<string>) {
    const all = [...new Set(triggers)];
    const minimal = new Map<string, string>();
    for (const t of all) {
      const inner = all.filter((u) => t.includes(u)).sort((a, b) => a.length - b.length || a.localeCompare(b))[0] as string;
      minimal.set(t, inner);
    }
    this.minimal = minimal;
    const alternatives = [...new Set(minimal.values())].map((t) => t.replace(/[.*+?^${}()|[\]\\<>/-]/g, '\\$&'));
    this.regex = new RegExp(alternatives.join('|'), 'g');
  }

  /** The (minimal) triggers present in `text`. */
  scan(text: string): Set<string> {
    const found = new Set<string>();
    const rx = this.regex;
    rx.lastIndex = 0;
    for (let m = rx.exec(text); m; m = rx.exec(text)) {
      found.add(m[0]);
      rx.lastIndex = m.index + 1;
    }
    return found;
  }

  /** Whether any of `triggers` may occur, given the result of scan(). */
  anyPresent(found: ReadonlySet<string>, triggers: readonly string[]): boolean {
    return triggers.some((t) => found.has(this.minimal.get(t) ?? t));
  }
}
