import type { DetectorInput } from './detector';

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

const DIGITS = /[0-9]+/g;

function findDigitRuns(text: string): number[] {
  const runs: number[] = [];
  DIGITS.lastIndex = 0;
  // test(), not exec(): no match object per run; the start is found back from the end.
  while (DIGITS.test(text)) {
    const end = DIGITS.lastIndex;
    let start = end - 1;
    while (start > 0 && isDigit(text.charCodeAt(start - 1))) start--;
    runs.push(start, end);
  }
  DIGITS.lastIndex = 0;
  return runs;
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/** The index the engine attached to this input, or a fresh one (a detector called on its own). */
export function textIndexOf(input: DetectorInput): TextIndex {
  const index = input.index;
  return index !== undefined && index.text === input.text ? index : new TextIndex(input.text);
}

/**
 * Runs `sticky` (a /y pattern) where a match can start: at each digit run start not before `from`, or up
 * to `lead` characters before it (patterns opening with "+", "(" or two letters). Returns the first match
 * at or after `from`, in text order, as a global scan of the same pattern would when every match it can
 * make starts there. `cursor.run` remembers where the previous call stopped (pass the same object).
 */
export function nextAtDigitRun(
  sticky: RegExp,
  text: string,
  runs: readonly number[],
  cursor: { run: number; from: number },
  lead: (text: string, runStart: number) => number = () => 0,
): RegExpExecArray | null {
  while (cursor.run < runs.length) {
    const runStart = runs[cursor.run] as number;
    const first = Math.max(cursor.from, runStart - lead(text, runStart));
    if (runStart < cursor.from) {
      cursor.run += 2;
      continue;
    }
    for (let at = first; at <= runStart; at++) {
      sticky.lastIndex = at;
      const m = sticky.exec(text);
      if (m) {
        // The next search resumes at the match end; runs before it are skipped then.
        return m;
      }
    }
    cursor.run += 2;
  }
  return null;
}
