import { DigitRunMatches, TextIndex, textIndexOf, type LeadBefore } from '../../../src/detection/text-index';

/** A global scan of `source`: the reference the digit-run scan must reproduce. */
function globalMatches(source: string, text: string): Array<[number, string]> {
  const re = new RegExp(source, 'g');
  return [...text.matchAll(re)].map((m) => [m.index as number, m[0]]);
}

function runMatches(source: string, text: string, lead?: LeadBefore): Array<[number, string]> {
  const matches = new DigitRunMatches(new TextIndex(text), new RegExp(source, 'y'), lead);
  const out: Array<[number, string]> = [];
  for (let m = matches.next(); m; m = matches.next()) {
    out.push([m.index, m[0]]);
    matches.from = m.index + Math.max(1, m[0].length);
  }
  return out;
}

/** Deterministic random texts made of digits, separators, letters and the characters patterns open with. */
function randomTexts(count: number, length: number, alphabet = '0123456789012345678901234567890123456789 ..--()+abGB \n'): string[] {
  let seed = 12345;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  return Array.from({ length: count }, () => Array.from({ length }, () => alphabet[next(alphabet.length)]).join(''));
}

describe('TextIndex', () => {
  it('lists maximal digit runs in order', () => {
    expect(new TextIndex('a12 3 4567b').digitRuns()).toEqual([1, 3, 4, 5, 6, 10]);
    expect(new TextIndex('no digits').digitRuns()).toEqual([]);
    expect(new TextIndex('99').digitRuns()).toEqual([0, 2]);
  });

  it('is built once and shared when the engine passes it, and built fresh otherwise', () => {
    const shared = new TextIndex('call 415');
    expect(textIndexOf({ text: 'call 415', direction: 'input', index: shared })).toBe(shared);
    const other = textIndexOf({ text: 'other 1', direction: 'input', index: shared });
    expect(other).not.toBe(shared);
    expect(other.digitRuns()).toEqual([6, 7]);
  });

  it.each([
    ['card run', String.raw`(?<![0-9])[0-9](?:(?:[ \t]{1,2}|[ \t]{0,2}[\-.][ \t]{0,2})?[0-9]){12,}`, undefined],
    ['ssn', String.raw`(?<![0-9])[0-9]{3}[\- ]?[0-9]{2}[\- ]?[0-9]{4}(?![0-9])`, undefined],
    ['ipv4 run', String.raw`(?<![0-9.])[0-9]+(?:\.[0-9]+){3,}`, '0123456789.....ab '],
  ])('finds exactly the matches of a global scan (%s)', (_name, source, alphabet) => {
    let matches = 0;
    for (const text of randomTexts(200, 400, alphabet)) {
      const expected = globalMatches(source, text);
      expect(runMatches(source, text)).toEqual(expected);
      matches += expected.length;
    }
    expect(matches).toBeGreaterThan(50); // the texts do exercise the pattern
  });

  it('finds matches opening with "+" or "(" before the run, as a global scan does', () => {
    const source = String.raw`(?<![0-9])\+?\(?[0-9](?:[ \t().\-/]{0,3}[0-9]){6,}`;
    const lead = (text: string, runStart: number) => {
      let n = 0;
      if (text.charCodeAt(runStart - 1) === 0x28) n++;
      if (text.charCodeAt(runStart - 1 - n) === 0x2b) n++;
      return n;
    };
    let matches = 0;
    for (const text of randomTexts(200, 400, '0123456789012345678901234567890123456789  -()++((a')) {
      const expected = globalMatches(source, text);
      expect(runMatches(source, text, lead)).toEqual(expected);
      matches += expected.filter(([, m]) => m.startsWith('+') || m.startsWith('(')).length;
    }
    expect(matches).toBeGreaterThan(20);
    expect(runMatches(source, 'call +(415) 555-2671 or 5+(415) 555 2671', lead)).toEqual(
      globalMatches(source, 'call +(415) 555-2671 or 5+(415) 555 2671'),
    );
  });

  it('finds two-letter-prefixed matches (IBAN starts)', () => {
    const source = String.raw`\b[A-Za-z]{2}[0-9]{2}[ -]?[A-Za-z0-9]{4}`;
    const text = 'GB82 WEST 1234, xGB82WEST, DE89370400440532013000 and ab12 cdef';
    expect(runMatches(source, text, () => 2)).toEqual(globalMatches(source, text));
  });
});
