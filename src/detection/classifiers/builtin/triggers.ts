/**
 * Speed only: finds which of a fixed set of trigger substrings occur in a text, so a heuristic whose
 * regex needs one of its triggers can be skipped when none occurs. Results never change: a trigger is a
 * necessary condition of its pattern, and the scan reports exactly the triggers that occur.
 *
 * One pass over the text's UTF-16 units: a table of the triggers' first two units (ASCII) picks the few
 * candidates at each position, checked with startsWith. (This replaced one big regex alternation of the
 * "minimal" triggers (about as fast, ~30 µs per 2,000-char window of prose) which, by reducing "your response"
 * to "response", reported triggers that were not there.) Triggers that do not start with two ASCII
 * units, and one-unit triggers, are searched with includes.
 */

/** The result of TriggerIndex.scan: the triggers present, and where the positional ones occur. */
export class TriggerHits extends Set<string> {
  /** Every index at which a positional trigger occurs, ascending. */
  readonly positions = new Map<string, number[]>();

  constructor(readonly index: TriggerIndex) {
    super();
  }
}

export class TriggerIndex {
  private readonly triggers: readonly string[];
  private readonly known: ReadonlySet<string>;
  /** Triggers of two or more units by their first two units (key c0 * 128 + c1): ids[start[key] .. start[key + 1]). */
  private readonly start = new Int32Array(128 * 128 + 1);
  private readonly ids: Int32Array;
  /** Per pair key: the third units its triggers have (a 128-bit set), and 1 in `always` when one has no ASCII third unit. */
  private readonly mask3 = new Int32Array(128 * 128 * 4);
  private readonly always = new Uint8Array(128 * 128);
  /** Third unit of each trigger (-1 when it has two), checked before startsWith. */
  private readonly third: Int32Array;
  /** Triggers the table cannot hold (one unit long, or a non-ASCII unit among the first two): searched with includes. */
  private readonly other: number[] = [];

  /** 1 for the triggers whose every occurrence scan() records (see TriggerHits). */
  private readonly positional: Uint8Array;

  /** `positional`: triggers (added to the set if missing) whose occurrence indices scan() also reports. */
  constructor(triggers: Iterable<string>, positional: Iterable<string> = []) {
    const wanted = new Set(positional);
    this.triggers = [...new Set([...triggers, ...wanted])].filter((t) => t.length > 0);
    this.positional = Uint8Array.from(this.triggers, (t) => (wanted.has(t) ? 1 : 0));
    this.known = new Set(this.triggers);
    this.third = Int32Array.from(this.triggers, (t) => (t.length > 2 ? t.charCodeAt(2) : -1));
    const byKey = new Map<number, number[]>();
    this.triggers.forEach((t, i) => {
      const c0 = t.charCodeAt(0);
      const c1 = t.length > 1 ? t.charCodeAt(1) : -1;
      if (c0 >= 128 || c1 >= 128 || c1 < 0) {
        this.other.push(i);
        return;
      }
      const key = c0 * 128 + c1;
      byKey.set(key, [...(byKey.get(key) ?? []), i]);
      const c2 = t.length > 2 ? t.charCodeAt(2) : -1;
      if (c2 < 0 || c2 >= 128) this.always[key] = 1;
      else this.mask3[(key << 2) | (c2 >>> 5)] = (this.mask3[(key << 2) | (c2 >>> 5)] as number) | (1 << (c2 & 31));
    });
    const flat: number[] = [];
    for (let key = 0; key < 128 * 128; key++) {
      this.start[key] = flat.length;
      flat.push(...(byKey.get(key) ?? []));
    }
    this.start[128 * 128] = flat.length;
    this.ids = Int32Array.from(flat);
  }

  /** The triggers present in `text`. */
  scan(text: string): TriggerHits {
    const seen = new Uint8Array(this.triggers.length);
    const positional = this.positional;
    const hits = new TriggerHits(this);
    const start = this.start;
    const ids = this.ids;
    const third = this.third;
    const mask3 = this.mask3;
    const always = this.always;
    const triggers = this.triggers;
    const n = text.length;
    let c1 = n > 0 ? text.charCodeAt(0) : 0;
    let c2 = n > 1 ? text.charCodeAt(1) : 0;
    for (let i = 0; i + 1 < n; i++) {
      const c0 = c1;
      c1 = c2;
      c2 = i + 2 < n ? text.charCodeAt(i + 2) : 0xffff;
      if ((c0 | c1) >= 128) continue;
      const key = (c0 << 7) | c1;
      // The third unit must be one that a trigger of this pair has (unless the pair has a short or odd trigger).
      if (always[key] === 0 && (c2 >= 128 || ((mask3[(key << 2) | (c2 >>> 5)] as number) & (1 << (c2 & 31))) === 0)) continue;
      const end = start[key + 1] as number;
      for (let k = start[key] as number; k < end; k++) {
        const t = ids[k] as number;
        if (seen[t] !== 0 && positional[t] === 0) continue;
        const t2 = third[t] as number;
        if (t2 >= 0 && c2 !== t2) continue;
        if (!text.startsWith(triggers[t] as string, i)) continue;
        seen[t] = 1;
        if (positional[t] === 1) {
          const word = triggers[t] as string;
          const list = hits.positions.get(word);
          if (list) list.push(i);
          else hits.positions.set(word, [i]);
        }
      }
    }
    for (const t of this.other) if (text.includes(triggers[t] as string)) seen[t] = 1;
    for (let t = 0; t < seen.length; t++) if (seen[t] === 1) hits.add(triggers[t] as string);
    return hits;
  }

  /** Whether any of `triggers` occurs, given the result of scan() (a trigger this index does not know counts as present). */
  anyPresent(found: ReadonlySet<string>, triggers: readonly string[]): boolean {
    return triggers.some((t) => found.has(t) || !this.known.has(t));
  }
}
