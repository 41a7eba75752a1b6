import { normalizeText } from '../../../src/detection/normalize';

describe('normalizeText', () => {
  it('leaves ASCII text untouched with an identity map', () => {
    const n = normalizeText('hello world');
    expect(n.text).toBe('hello world');
    expect(n.toOriginal(6, 11)).toEqual({ start: 6, end: 11 });
  });

  it('applies NFKC (full-width letters, ligatures, circled digits)', () => {
    expect(normalizeText('ｅｘａｍｐｌｅ').text).toBe('example');
    expect(normalizeText('ﬁle').text).toBe('file');
    expect(normalizeText('①').text).toBe('1');
  });

  it('removes zero-width characters and maps spans back across them', () => {
    const original = 'say bo\u200Bb@ex\u200Dample.org now';
    const n = normalizeText(original);
    expect(n.text).toBe('say bob@example.org now');
    const start = n.text.indexOf('bob');
    const span = n.toOriginal(start, start + 'bob@example.org'.length);
    expect(original.slice(span.start, span.end)).toBe('bo\u200Bb@ex\u200Dample.org');
  });

  it('maps spans through length-changing segments to the whole original segment', () => {
    const original = 'x ﬁle ｍａｉｌ y';
    const n = normalizeText(original);
    expect(n.text).toBe('x file mail y');
    const file = n.toOriginal(2, 6);
    expect(original.slice(file.start, file.end)).toBe('ﬁle');
    const mail = n.toOriginal(7, 11);
    expect(original.slice(mail.start, mail.end)).toBe('ｍａｉｌ');
    // A span that starts inside the expanded ligature still maps onto the whole ligature.
    const inner = n.toOriginal(3, 4);
    expect(original.slice(inner.start, inner.end)).toBe('ﬁ');
  });

  it('composes a base letter with its combining mark', () => {
    const original = 'cafe\u0301!';
    const n = normalizeText(original);
    expect(n.text).toBe('café!');
    expect(n.toOriginal(0, 4)).toEqual({ start: 0, end: 5 });
    expect(n.toOriginal(4, 5)).toEqual({ start: 5, end: 6 });
  });

  it('keeps astral characters and replaces lone surrogates with U+FFFD (same length)', () => {
    const n = normalizeText('a😀b\uD800c');
    expect(n.text).toBe('a😀b\uFFFDc');
    expect(n.toOriginal(3, 6)).toEqual({ start: 3, end: 6 });
  });
});
