import {
  AbortTicker,
  ABORT_CHECK_EVERY,
  ContextWords,
  digitGroups,
  digitsOf,
  luhnValid,
} from '../../../../src/detection/detectors/pii/signals';
import { abortedSignal } from './numeric-scan';

describe('numeric PII signals', () => {
  it('computes the Luhn checksum', () => {
    expect(luhnValid('4539148803436467')).toBe(true);
    expect(luhnValid('4539148803436468')).toBe(false);
    expect(luhnValid('79927398713')).toBe(true);
    expect(luhnValid('')).toBe(false);
  });

  it('extracts digits and digit groups with their separators', () => {
    expect(digitsOf('(415) 555-2671')).toBe('4155552671');
    const text = 'x 4111 22.33\n44 y';
    const groups = digitGroups(text, 2, 15);
    expect(groups.map((g) => text.slice(g.start, g.end))).toEqual(['4111', '22', '33', '44']);
    expect(groups.map((g) => g.afterDot)).toEqual([false, false, true, false]);
    expect(groups.map((g) => g.afterLineBreak)).toEqual([false, false, false, true]);
  });

  it('matches context words as whole words, case-insensitively, near a span', () => {
    const words = new ContextWords(['card', 'social security', 'cc']);
    expect(words.test('Credit CARD')).toBe(true);
    expect(words.test('discard')).toBe(false);
    expect(words.test('accept')).toBe(false);
    expect(words.test('cc#')).toBe(true);
    expect(words.test('SOCIAL_SECURITY')).toBe(true);
    const text = `card ${'x'.repeat(50)} 4111`;
    expect(words.near(text, text.length - 4, text.length)).toBe(false);
    expect(words.near(text, text.length - 4, text.length, 60)).toBe(true);
  });

  it('judges words at the window edges against the whole text: a word cut by the window is not a hit', () => {
    const words = new ContextWords(['ph', 'call', 'card']);
    // "paragraph" starts 2 characters before the 40-character window: the window begins with "ph".
    const left = `the paragraph${' below in plain'.padEnd(38, '.')}1234501820`;
    const start = left.indexOf('1234501820');
    expect(left.slice(start - 40, start).startsWith('ph')).toBe(true);
    expect(words.near(left, start, start + 10)).toBe(false);
    expect(words.before(left, start)).toBe(false);
    // "calligraphy" ends after the window: the window ends with "call".
    const right = `1234501820${' '.repeat(36)}calligraphy`;
    expect(right.slice(10, 50).endsWith('call')).toBe(true);
    expect(words.near(right, 0, 10)).toBe(false);
    // whole words at the same places still count, and a fragment does not hide a later whole word
    const whole = `ph: ${'x'.repeat(30)} 1234501820`;
    expect(words.near(whole, whole.indexOf('1234'), whole.length)).toBe(true);
    const both = `discard card ${'.'.repeat(20)}4111`;
    expect(words.before(both, both.length - 4, 40)).toBe(true);
    expect(words.before('discard 4111', 8)).toBe(false);
  });

  it('finds context hits once per region and answers for many spans', () => {
    const text = 'visa 1111 and 2222 ... discard 3333';
    const hits = new ContextWords(['visa', 'card']).hits(text, 0, text.length);
    expect(hits.near(5, 9)).toBe(true);
    expect(hits.near(31, 35, 5)).toBe(false); // "card" inside "discard" is not a hit
  });

  it('goes on inside a fragment: a whole word that starts within it still counts', () => {
    const text = 'antisocial security card 4111';
    const words = new ContextWords(['social security', 'security card']);
    // A region starting at "social" (inside "antisocial"): its "social security" is a fragment, and
    // "security card", which starts inside that match, is a whole word of the text.
    expect(words.hits(text, 4, text.length).near(25, 29)).toBe(true);
    expect(words.before(text, 25, 21)).toBe(true);
  });

  it('throws the abort reason every ABORT_CHECK_EVERY ticks once aborted', () => {
    expect(() => new AbortTicker(abortedSignal('gone'))).toThrow('gone');
    const controller = new AbortController();
    const ticker = new AbortTicker(controller.signal);
    controller.abort(new Error('late'));
    expect(() => {
      for (let i = 0; i < ABORT_CHECK_EVERY; i++) ticker.tick();
    }).toThrow('late');
  });
});
