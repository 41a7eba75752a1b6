import { countTextTokens } from '../../../src/shared/tokens';

/**
 * Token counting over long unbroken runs. The runs used to be found with an unbounded `{64,}` regex,
 * which overflowed irregexp's backtrack stack on a run of ~5 million letters ("Maximum call stack size
 * exceeded": fuzz seed 72136920 took the audit token count down with it). The reference below is that
 * regex: the new scan must cut the text at the same places, on texts where the regex still works.
 */

const OLD_LONG_RUN = /[\p{L}\p{M}]{64,}|[^\s\p{L}\p{N}]{64,}|\s{64,}/gu;

/** The count as the old code made it: plain text between runs, runs in 32-unit slices (surrogate pairs kept whole). */
function reference(text: string): number {
  if (text.length < 64) return countTextTokens(text);
  let total = 0;
  let last = 0;
  for (const m of text.matchAll(OLD_LONG_RUN)) {
    const start = m.index;
    const end = start + m[0].length;
    total += last < start ? countTextTokens(text.slice(last, start)) : 0;
    for (let i = start; i < end; ) {
      let to = Math.min(i + 32, end);
      const code = text.charCodeAt(to);
      if (to < end && code >= 0xdc00 && code <= 0xdfff) to += 1;
      total += countTextTokens(text.slice(i, to));
      i = to;
    }
    last = end;
  }
  return total + (last < text.length ? countTextTokens(text.slice(last)) : 0);
}

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32);
}

describe('countTextTokens over long runs', () => {
  it('cuts runs where the unbounded regex did (letters, marks, symbols, whitespace, digits, astral letters)', () => {
    // Pieces that make runs of every class and every boundary between them, including marks after
    // symbols (a mark is in the letter class and in the symbol class: the first alternative decides).
    const pieces = ['a', 'é', '\u0301', '#', '—', ' ', '\n', '7', '\u{1D400}', '😀', 'Ж', '中', '.', '\t'];
    const rand = rng(20261128);
    let compared = 0;
    for (let t = 0; t < 60; t++) {
      let text = '';
      while (text.length < 3_000) {
        const piece = pieces[Math.floor(rand() * pieces.length)] as string;
        text += piece.repeat(1 + Math.floor(rand() * (rand() < 0.3 ? 200 : 8)));
      }
      expect(countTextTokens(text)).toBe(reference(text));
      compared++;
    }
    expect(compared).toBe(60);
  });

  it('a run of 10 million letters is counted (the unbounded regex overflowed its stack on it)', () => {
    // (On Node 20, `run.match(OLD_LONG_RUN)` throws RangeError here.)
    const run = 'a'.repeat(10_000_000);
    // 32-character slices of one letter: 4 tokens each.
    expect(countTextTokens(run)).toBe(countTextTokens('a'.repeat(32)) * (10_000_000 / 32));
  });
});
