import { codeUnits } from '../../../../src/detection/classifiers/builtin/suffix-mask';

/** The reference: what the suffix passes read before codeUnits copied with Buffer#write. */
function reference(text: string): number[] {
  return [...Array(text.length).keys()].map((i) => text.charCodeAt(i));
}

describe('codeUnits (the suffix passes read the window through it)', () => {
  it.each([
    ['empty', ''],
    ['one letter', 'a'],
    ['ASCII', 'plain ASCII prose, 123'],
    ['Latin-1', 'caf\u00e9 \u00fcber na\u00efve'],
    ['CJK and Cyrillic', '\u4e2d\u6587 and \u0420\u0443\u0441\u0441\u043a\u0438\u0439'],
    ['a surrogate pair', 'emoji \ud83d\ude00 pair'],
    ['lone surrogates', 'lone high \ud800 and lone low \udc00 and reversed \udc00\ud800'],
    ['a lone surrogate alone', '\ud800'],
    ['U+FFFF and control units', '\uffff\u0000\u0001'],
  ])('gives every UTF-16 unit verbatim, then three 0 units (%s)', (_name, text) => {
    const units = codeUnits(text);
    expect(Array.from(units.subarray(0, text.length))).toEqual(reference(text));
    expect(Array.from(units.subarray(text.length, text.length + 3))).toEqual([0, 0, 0]);
  });

  it('a shorter text after a longer one reads only its own units, then 0s (the buffer is reused and grown)', () => {
    const long = 'x\u00e9\ud800'.repeat(5000);
    expect(Array.from(codeUnits(long).subarray(0, long.length))).toEqual(reference(long));
    const short = 'ab';
    const units = codeUnits(short);
    expect(Array.from(units.subarray(0, 5))).toEqual([97, 98, 0, 0, 0]);
  });

  it('sliced and concatenated strings (how windows and views are made) copy like flat ones', () => {
    const base = 'The quick brown fox \u00e9\u4e2d jumps over the lazy dog. '.repeat(200);
    const sliced = base.slice(37, 37 + 2000);
    const cons = sliced.slice(0, 900) + '\ud83d' + sliced.slice(900);
    for (const text of [sliced, cons]) expect(Array.from(codeUnits(text).subarray(0, text.length))).toEqual(reference(text));
  });
});
