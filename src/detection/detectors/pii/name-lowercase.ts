import type { DetectorFinding } from '../../detector';
import { AMBIGUOUS_NAMES } from './lexicons/name-words';
import { isFirst, isLast } from './name-lexicon';

/** Lower-case names right after a self-introduction, for pii/name ("my name is john smith"). */

const MAX_FINDINGS = 1000;

/** A self-introduction in any case, then one or two lower-case words (sticky: tried where INTRO_ANCHOR points). */
const LOWER_CONTEXT =
  /\b(my name is|my name's|name:|call me|i am|i'm)([ \t]+)([a-z][a-z'\-]{1,30})(?:([ \t]+)([a-z][a-z'\-]{1,30}))?/iy;

/**
 * The key "m" of every self-introduction LOWER_CONTEXT knows, in any case: "na|m|e", "call |m|e", "i a|m",
 * "i'|m". It opens with that literal, which V8 finds fast, and checks the rest with look-behinds; a whole
 * text scan with LOWER_CONTEXT itself (a case-insensitive alternation) costs about twice as much, and it
 * used to run on every text with a capitalised "I" or "My" in it, that is on almost every real prompt.
 */
const INTRO_ANCHOR = /m(?:(?<=\bnam)e|(?<=\bcall m)e|(?<=\bi am|\bi'm))/gi;
/** Where LOWER_CONTEXT can start, back from an anchor's "m": "my na|m|e" and "call |m|e" 5, "i a|m" 3, "na|m|e:" and "i'|m" 2. */
const INTRO_STARTS = [5, 3, 2] as const;

/**
 * "my name is john smith": lower-case lexicon names right after a self-introduction. The same matches, in
 * the same order, as a global scan with LOWER_CONTEXT: such a match can only start a fixed distance before
 * an anchor, so LOWER_CONTEXT is tried (sticky) at those starts, left to right, each no earlier than the
 * end of the previous match.
 */
export function lowercaseAfterStrongContext(text: string, out: DetectorFinding[]): void {
  const starts: number[] = [];
  INTRO_ANCHOR.lastIndex = 0;
  while (INTRO_ANCHOR.test(text)) {
    const after = INTRO_ANCHOR.lastIndex;
    const key = (text.charCodeAt(after - 1) | 0x20) === 0x6d ? after - 1 : after - 2; // "m" or "me"
    for (const back of INTRO_STARTS) if (key - back >= 0) starts.push(key - back);
  }
  INTRO_ANCHOR.lastIndex = 0;
  if (starts.length === 0) return;
  starts.sort((a, b) => a - b);
  let resume = 0;
  for (const at of starts) {
    if (at < resume || out.length >= MAX_FINDINGS) continue;
    LOWER_CONTEXT.lastIndex = at;
    const m = LOWER_CONTEXT.exec(text);
    if (!m) continue;
    resume = at + m[0].length;
    const intro = m[1] as string;
    const first = m[3] as string;
    if (first !== first.toLowerCase() || !isFirst({ lower: first })) continue;
    const weakIntro = /^i/i.test(intro);
    if (weakIntro && AMBIGUOUS_NAMES.has(first)) continue;
    const start = at + intro.length + (m[2] as string).length;
    const second = m[5];
    const hasLast = second !== undefined && second === second.toLowerCase() && isLast({ lower: second });
    const end = hasLast ? resume : start + first.length;
    out.push({ confidence: hasLast ? 0.9 : weakIntro ? 0.75 : 0.8, start, end });
  }
  LOWER_CONTEXT.lastIndex = 0;
}
