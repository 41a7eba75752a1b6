import type { DetectorInput } from './detector';
import { continueMatch } from '../shared/sticky-continue';

/**
 * Facts about one text that several detectors need, computed once per text (per view, by the engine)
 * instead of once per detector: the "combined prefilter" of the signature stage. Lazy: a fact is only
 * computed when a detector asks for it.
 *
 * Digit runs: card numbers, SSNs, phone numbers, IPv4 addresses, IBANs (the two check digits) and street
 * addresses (the house number) all start at, or a character or two before, the first digit of a run of
 * digits. Those detectors run their (sticky) patterns at the run starts only, instead of each walking the
 * whole text with a pattern that opens with a digit class; prose has a few thousand runs per megabyte.
 */
export class TextIndex {
  private runs: readonly number[] | undefined;

  constructor(readonly text: string) {}

  /** Maximal runs of ASCII digits as [start0, end0, start1, end1, …] (end exclusive), in text order. */
  digitRuns(): readonly number[] {
    if (this.runs === undefined) this.runs = findDigitRuns(this.text);
    return this.runs;
  }
}

/**
 * A loop, not a regular expression: `/[0-9]+/g` over a run of 10 million digits (a 10 MB body) ran out of
 * stack in one environment (the test runner's), and a loop over char codes is as fast.
 */
function findDigitRuns(text: string): number[] {
  const runs: number[] = [];
  const n = text.length;
  for (let i = 0; i < n; i++) {
    if (!isDigit(text.charCodeAt(i))) continue;
    const start = i;
    while (i < n && isDigit(text.charCodeAt(i))) i++;
    runs.push(start, i);
  }
  return runs;
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/** The index the engine attached to this input, or a fresh one (a detector called on its own). */
export function textIndexOf(input: DetectorInput): TextIndex {
  const index = input.index;
  return index !== undefined && index.text === input.text ? index : new TextIndex(input.text);
}

/** How many characters before a digit run a pattern's match can start ("+", "(", two letters). */
export type LeadBefore = (text: string, runStart: number) => number;

const NO_LEAD: LeadBefore = () => 0;

/**
 * The matches of `sticky` (a /y pattern) whose every match starts at a digit-run start, or up to `lead`
 * characters before one, in text order: what a global scan of the same pattern finds. The caller moves
 * `from` on after each match (to its end, or one past its start to look inside a rejected one); runs
 * that start before `from` are skipped.
 *
 * `extend` (a /y pattern of one repeated unit, e.g. `(?:\.[0-9]+){1,1024}`) continues each match in bounded
 * steps (shared/sticky-continue.ts: why a pattern must not end in an unbounded `(?:…){11,}`).
 */
export class DigitRunMatches {
  /** The next match starts at or after this offset. */
  from = 0;
  private run = 0;
  private readonly text: string;
  private readonly runs: readonly number[];

  constructor(
    index: TextIndex,
    private readonly sticky: RegExp,
    private readonly lead: LeadBefore = NO_LEAD,
    private readonly extend?: RegExp,
  ) {
    this.text = index.text;
    this.runs = index.digitRuns();
  }

  next(): RegExpExecArray | null {
    const { text, runs, sticky } = this;
    for (; this.run < runs.length; this.run += 2) {
      const runStart = runs[this.run] as number;
      if (runStart < this.from) continue;
      for (let at = Math.max(this.from, runStart - this.lead(text, runStart)); at <= runStart; at++) {
        sticky.lastIndex = at;
        const m = sticky.exec(text);
        if (m) return this.extend ? continueMatch(text, m, this.extend) : m; // this run is looked at again on the next call, then skipped once `from` passed it
      }
    }
    return null;
  }
}
