import type * as Cl100k from 'gpt-tokenizer/cjs/encoding/cl100k_base';
import { o200kCounter } from './o200k-compact';
import { continueMatch } from './sticky-continue';

/**
 * Token counting with the real OpenAI tokenizers (gpt-tokenizer): o200k_base for gpt-4o, gpt-4.1,
 * gpt-4.5, gpt-5, o-series and unknown models; cl100k_base for gpt-3.5, gpt-4 / gpt-4-turbo and the
 * older embedding models (o200k_base from a compact rank table with gpt-tokenizer's algorithm and counts:
 * o200k-compact.ts; ~5 MB instead of ~55 MB per thread). Models of other providers (claude-*, ...) are counted with o200k_base: an
 * approximation (their tokenizers are not public; expect a count within roughly ±20% of theirs).
 *
 * Special-token strings in user text (`<|endoftext|>`) are counted as the ordinary text they are.
 * Guard against pathological input: BPE over one unbroken run of letters, symbols or whitespace is
 * quadratic in gpt-tokenizer (64 000 × "a" takes seconds), so runs of 64+ such characters are counted
 * in 32-character slices (at most one token of difference per slice, only on such runs).
 */

type Encoding = { countTokens(text: string, options: typeof OPTIONS): number };
export type EncodingName = 'o200k_base' | 'cl100k_base';

const OPTIONS = { disallowedSpecial: new Set<string>() };
/**
 * The start of a long run: 64 characters of one class (letters and marks; symbols; whitespace), continued
 * by EXTEND in bounded steps (sticky-continue.ts): an unbounded `{64,}` overflowed irregexp's stack on a
 * run of ~5 million letters (found by the fuzzer).
 */
const RUN_START = /([\p{L}\p{M}]{64})|([^\s\p{L}\p{N}]{64})|(\s{64})/gu;
/** The rest of a run of each class, at most 4,096 characters per step (sticky). */
const EXTEND = [/[\p{L}\p{M}]{1,4096}/uy, /[^\s\p{L}\p{N}]{1,4096}/uy, /\s{1,4096}/uy] as const;
const RUN = 64;

/** The long runs of `text`, in order: what matchAll(/[\p{L}\p{M}]{64,}|[^\s\p{L}\p{N}]{64,}|\s{64,}/gu) finds, with bounded stack. */
function* longRuns(text: string): Generator<{ start: number; end: number }> {
  RUN_START.lastIndex = 0;
  for (let m = RUN_START.exec(text); m; m = RUN_START.exec(text)) {
    // The alternative that matched (marks are in the first two classes: its group says which one).
    continueMatch(text, m, EXTEND[m[1] !== undefined ? 0 : m[2] !== undefined ? 1 : 2]);
    const end = m.index + m[0].length;
    RUN_START.lastIndex = end;
    yield { start: m.index, end };
  }
  RUN_START.lastIndex = 0;
}

/** JavaScript's `\s`, exactly: a cheap pre-filter must classify characters as RUN_START does. */
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** Whether the text has RUN spaces or RUN non-spaces in a row: every long run (longRuns) lies in such a run. */
function mayHaveLongRun(text: string): boolean {
  let run = 0;
  let spaces = false;
  for (let i = 0; i < text.length; i++) {
    const space = isSpace(text.charCodeAt(i));
    run = space === spaces ? run + 1 : 1;
    spaces = space;
    if (run >= RUN) return true;
  }
  return false;
}
const SLICE = 32;

let cl100k: Encoding | undefined;
function cl100kEncoding(): Encoding {
  // Loaded on first use: most deployments never see a cl100k model and the ranks take memory.
  cl100k ??= require('gpt-tokenizer/cjs/encoding/cl100k_base') as typeof Cl100k;
  return cl100k;
}

/** The encoding used for a model name (case-insensitive; `ft:` and `openai/` prefixes ignored). */
export function encodingForModel(model: string | null | undefined): EncodingName {
  const m = (model ?? '').toLowerCase().replace(/^ft:/, '').replace(/^openai\//, '');
  if (m.startsWith('gpt-3.5') || m.startsWith('text-embedding-ada') || m.startsWith('text-embedding-3')) return 'cl100k_base';
  if (m.startsWith('gpt-4') && !m.startsWith('gpt-4o') && !m.startsWith('gpt-4.')) return 'cl100k_base';
  return 'o200k_base';
}

const o200k: Encoding = { countTokens: (text) => o200kCounter().countTokens(text) };

function encoding(name: EncodingName): Encoding {
  return name === 'cl100k_base' ? cl100kEncoding() : o200k;
}

function plain(enc: Encoding, text: string): number {
  return text.length === 0 ? 0 : enc.countTokens(text, OPTIONS);
}

/** Tokens of one text. Stops early (returning a number above `budget`) once the budget is exceeded. */
export function countTextTokens(text: string, name: EncodingName = 'o200k_base', budget = Infinity): number {
  const enc = encoding(name);
  if (text.length < RUN || !mayHaveLongRun(text)) return plain(enc, text);
  let total = 0;
  let last = 0;
  for (const { start, end } of longRuns(text)) {
    total += plain(enc, text.slice(last, start));
    for (let i = start; i < end; ) {
      let to = Math.min(i + SLICE, end);
      const code = text.charCodeAt(to);
      if (to < end && code >= 0xdc00 && code <= 0xdfff) to += 1; // never split a surrogate pair
      total += plain(enc, text.slice(i, to));
      i = to;
    }
    last = end;
    if (total > budget) return total;
  }
  return total + plain(enc, text.slice(last));
}

/** Tokens of several texts (no per-message formatting overhead), stopping early past `budget`. */
export function countTokens(texts: readonly string[], name: EncodingName = 'o200k_base', budget = Infinity): number {
  let total = 0;
  for (const text of texts) {
    total += countTextTokens(text, name, budget - total);
    if (total > budget) return total;
  }
  return total;
}

/** Unicode code points of the texts (what "characters" means for max_input_characters). */
export function countCharacters(texts: readonly string[]): number {
  let n = 0;
  for (const t of texts) {
    n += t.length;
    for (let i = 0; i < t.length; i++) {
      const c = t.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff) {
        const next = t.charCodeAt(i + 1);
        if (next >= 0xdc00 && next <= 0xdfff) {
          n -= 1;
          i += 1;
        }
      }
    }
  }
  return n;
}
