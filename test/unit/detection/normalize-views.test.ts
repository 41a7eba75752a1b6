import { buildViews, canonicalize, normalizeText } from '../../../src/detection/normalize';
import { foldConfusables, foldDigits, CONFUSABLES } from '../../../src/detection/normalize/confusables';
import { deobfuscateEmails } from '../../../src/detection/normalize/email-deobfuscate';
import { findEncodedSegments, printableUtf8 } from '../../../src/detection/normalize/encoded-segments';
import { decodeHtmlEntities, decodePercentEscapes } from '../../../src/detection/normalize/inline-decode';
import { MappedTextBuilder } from '../../../src/detection/normalize/offset-map';
import { isInvisible } from '../../../src/detection/normalize/unicode';

/** The original text a span of a mapped text comes from. */
const back = (original: string, m: { text: string; toOriginal(s: number, e: number): { start: number; end: number } }, needle: string) => {
  const at = m.text.indexOf(needle);
  if (at < 0) throw new Error(`${JSON.stringify(needle)} not in ${JSON.stringify(m.text)}`);
  const span = m.toOriginal(at, at + needle.length);
  return original.slice(span.start, span.end);
};

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const hex = (s: string) => Buffer.from(s, 'utf8').toString('hex');

describe('offset map', () => {
  it('maps kept, replaced, dropped and inserted pieces', () => {
    const src = 'ab<X>cd';
    const b = new MappedTextBuilder(src);
    b.keep(0, 2);
    b.replace(2, 5, 'xyz!'); // non-linear: maps as a whole
    b.insert(5, '-');
    b.keep(6, 7); // drops "c"
    const m = b.build();
    expect(m.text).toBe('abxyz!-d');
    expect(m.toOriginal(0, 2)).toEqual({ start: 0, end: 2 });
    expect(m.toOriginal(3, 4)).toEqual({ start: 2, end: 5 });
    expect(m.toOriginal(1, 8)).toEqual({ start: 1, end: 7 });
    expect(m.toOriginal(7, 8)).toEqual({ start: 6, end: 7 });
  });

  it('returns the identity (or the base) when nothing changed', () => {
    const b = new MappedTextBuilder('same');
    b.keep(0, 4);
    expect(b.build().identity).toBe(true);
  });
});

describe('normalizeText: invisible characters', () => {
  it.each([
    ['zero width space', '\u200B'],
    ['left-to-right mark', '\u200E'],
    ['right-to-left override', '\u202E'],
    ['left-to-right isolate', '\u2066'],
    ['pop directional isolate', '\u2069'],
    ['Arabic letter mark', '\u061C'],
    ['tag latin small a', '\u{E0061}'],
    ['cancel tag', '\u{E007F}'],
    ['variation selector 16', '\uFE0F'],
    ['BOM', '\uFEFF'],
  ])('removes %s', (_name, ch) => {
    const original = `jo${ch}hn${ch}@ex${ch}ample.org`;
    const n = normalizeText(original);
    expect(n.text).toBe('john@example.org');
    expect(n.toOriginal(0, n.text.length)).toEqual({ start: 0, end: original.length });
  });

  it('removes "ASCII smuggling" in the tag block entirely', () => {
    const hidden = [...'secret'].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('');
    expect(normalizeText(`hello${hidden} world`).text).toBe('hello world');
    expect(isInvisible(0xe0020)).toBe(true);
    expect(isInvisible(0x41)).toBe(false);
  });
});

describe('confusable folding', () => {
  it('has a table of single-unit Latin look-alikes', () => {
    const entries = Object.entries(CONFUSABLES);
    expect(entries.length).toBeGreaterThanOrEqual(60);
    for (const [from, to] of entries) {
      expect([from.length, to.length]).toEqual([1, 1]);
      expect(to).toMatch(/^[A-Za-z]$/);
      expect(from.normalize('NFKC')).toBe(from); // survives NFKC, which runs first
    }
  });

  it('folds Cyrillic and Greek look-alikes, offset for offset', () => {
    const original = 'jane@\u0430cme-c\u043Erp.com \u0391\u0392\u0395 \u0440\u0430y\u0440\u0430l';
    const folded = foldConfusables(original);
    expect(folded.text).toBe('jane@acme-corp.com ABE paypal');
    expect(back(original, folded, 'acme-corp.com')).toBe('\u0430cme-c\u043Erp.com');
  });
});

describe('inline decoding', () => {
  it('decodes numeric and named HTML references with spans to the reference', () => {
    const original = 'mail jane&#64;acme-corp&period;com or bob&#x40;corp.io &amp; x&#65';
    const m = decodeHtmlEntities(original);
    expect(m.text).toBe('mail jane@acme-corp.com or bob@corp.io & xA');
    expect(back(original, m, 'jane@acme-corp.com')).toBe('jane&#64;acme-corp&period;com');
    expect(back(original, m, '@corp.io')).toBe('&#x40;corp.io');
  });

  it('leaves unknown and invalid references alone', () => {
    const original = 'a &bogus; b &#0; c &#xD800; d & e';
    expect(decodeHtmlEntities(original).text).toBe(original);
  });

  it('decodes URL escapes as UTF-8, escape by escape when ASCII', () => {
    const original = 'x %6A%61%6E%65%40acme-corp.com y';
    const m = decodePercentEscapes(original);
    expect(m.text).toBe('x jane@acme-corp.com y');
    expect(back(original, m, 'jane@acme-corp.com')).toBe('%6A%61%6E%65%40acme-corp.com');
    expect(back(original, m, 'e@')).toBe('%65%40');
    expect(decodePercentEscapes('caf%C3%A9 %FF 100%').text).toBe('café %FF 100%');
  });
});

describe('e-mail de-obfuscation', () => {
  it.each([
    ['john [at] example [dot] com', 'john@example.com'],
    ['john(at)example(dot)com', 'john@example.com'],
    ['john{at}example{dot}co{dot}uk', 'john@example.co.uk'],
    ['john <at> example <dot> com', 'john@example.com'],
    ['john [@] example [.] com', 'john@example.com'],
    ['john.doe@example[.]com', 'john.doe@example.com'],
    ['john @ example.com', 'john@example.com'],
    ['JOHN AT EXAMPLE DOT COM', 'JOHN@EXAMPLE.COM'],
    ['john at example dot com', 'john@example.com'],
    ['j.smith at mail dot acme.org', 'j.smith@mail.acme.org'],
  ])('%j → %j, mapped to the whole run', (obfuscated, plain) => {
    const original = `write to ${obfuscated}, thanks`;
    const m = deobfuscateEmails(original);
    expect(m.text).toBe(`write to ${plain}, thanks`);
    expect(back(original, m, plain)).toBe(obfuscated);
  });

  it.each(['dot', 'doT', 'dOt', 'dOT', 'Dot', 'DoT', 'DOt', 'DOT'])('reads a bare "%s" in any case', (dot) => {
    const original = `write to john at example ${dot} com, thanks`;
    expect(deobfuscateEmails(original).text).toBe('write to john@example.com, thanks');
  });

  it.each([
    ['look at example.com'],
    ['meet at noon, then dinner at home'],
    ['a plain jane@acme.com is left alone'],
    ['@decorator(at) dot'],
    ['john [at] example'],
    ['x [at] y [dot] 123'],
    ['arr[at] [dot] x'],
  ])('leaves %j alone', (text) => {
    expect(deobfuscateEmails(text).text).toBe(text);
  });
});

describe('encoded segments', () => {
  it('finds base64 (padded, unpadded, URL-safe) and hex that decode to printable text', () => {
    const text = `a ${b64('my email is jane@acme-corp.com')} b ${b64('hello world, abc').replace(/=+$/, '')} c ${Buffer.from('ok?>>?? subjects').toString('base64url')} d ${hex('jane@acme-corp.com')}`;
    const segments = findEncodedSegments(text, { maxSegments: 10, maxDecodedChars: 1000 });
    expect(segments.map((s) => [s.kind, s.decoded])).toEqual([
      ['base64', 'my email is jane@acme-corp.com'],
      ['base64', 'hello world, abc'],
      ['base64', 'ok?>>?? subjects'],
      ['hex', 'jane@acme-corp.com'],
    ]);
  });

  it.each([
    ['a git SHA', 'da39a3ee5e6b4b0d3255bfef95601890afd80709'],
    ['a UUID', '550e8400-e29b-41d4-a716-446655440000'],
    ['a camelCase identifier', 'getElementsByTagNameNS'],
    ['a path', 'src/detection/normalize/encoded-segments'],
    ['binary base64', Buffer.from([0, 1, 2, 3, 250, 251, 252, 253, 254, 255, 9, 8, 7, 6]).toString('base64')],
    ['a sha256 in base64', 'n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg='],
  ])('does not decode %s', (_name, blob) => {
    expect(findEncodedSegments(`x ${blob} y`, { maxSegments: 10, maxDecodedChars: 1000 })).toEqual([]);
  });

  it('respects the segment and decoded-size limits', () => {
    const blob = b64('some hidden text here');
    const text = Array.from({ length: 10 }, () => blob).join(' ');
    expect(findEncodedSegments(text, { maxSegments: 3, maxDecodedChars: 1000 })).toHaveLength(3);
    expect(findEncodedSegments(text, { maxSegments: 10, maxDecodedChars: 45 })).toHaveLength(2);
  });

  it('printableUtf8 rejects control bytes and invalid UTF-8', () => {
    expect(printableUtf8(Buffer.from('plain text'))).toBe('plain text');
    expect(printableUtf8(Buffer.from([0xc3, 0x28, 0x41, 0x42]))).toBeUndefined();
    expect(printableUtf8(Buffer.from('\x01\x02\x03abc'))).toBeUndefined();
  });
});

describe('buildViews', () => {
  it('has a single normalized view for plain ASCII', () => {
    const views = buildViews('nothing to see here, just text.');
    expect(views.map((v) => [v.kind, v.identity])).toEqual([['normalized', true]]);
  });

  it('adds a canonical view only when canonicalisation changes something', () => {
    const original = 'mail jane&#64;\u0430cme.com now';
    const views = buildViews(original);
    expect(views.map((v) => v.kind)).toEqual(['normalized', 'canonical']);
    const canonical = views[1]!;
    expect(canonical.text).toBe('mail jane@acme.com now');
    expect(back(original, canonical, 'jane@acme.com')).toBe('jane&#64;\u0430cme.com');
  });

  it('decodes base64 into a decoded view whose spans map to the whole blob', () => {
    const blob = b64('my email is jane@acme-corp.com');
    const original = `token: ${blob} end`;
    const views = buildViews(original);
    expect(views.map((v) => [v.kind, v.depth])).toEqual([
      ['normalized', 0],
      ['decoded', 1],
    ]);
    expect(views[1]!.text).toBe('my email is jane@acme-corp.com');
    expect(back(original, views[1]!, 'jane@acme-corp.com')).toBe(blob);
  });

  it('decodes two levels (base64 of URL-encoded text), and concatenates blobs with a separator', () => {
    const inner = b64('%6A%61%6E%65%40acme.io');
    const original = `a ${b64(`see ${hex('bob@corp.io')} there`)} b ${inner}`;
    const views = buildViews(original);
    const decoded = views.filter((v) => v.kind === 'decoded');
    expect(decoded.map((v) => v.depth)).toEqual([1, 2]);
    expect(decoded[0]!.text).toContain('\n\njane@acme.io');
    expect(decoded[1]!.text).toBe('bob@corp.io');
    expect(back(original, decoded[0]!, 'jane@acme.io')).toBe(inner);
  });

  it('bounds the decoded text by the size of the input', () => {
    const blob = b64('x'.repeat(30));
    const original = Array.from({ length: 1000 }, () => blob).join(' ');
    const views = buildViews(original);
    const decodedChars = views.filter((v) => v.kind === 'decoded').reduce((n, v) => n + v.text.length, 0);
    expect(decodedChars).toBeLessThanOrEqual(original.length * 1.1);
    expect(decodedChars).toBeGreaterThan(0);
  });

  it('canonicalize re-normalizes what references decode to (full-width, zero-width)', () => {
    const original = 'jo&#8203;hn&#64;&#xFF45;xample.com';
    const c = canonicalize(normalizeText(original));
    expect(c.text).toBe('john@example.com');
    expect(back(original, c, 'john@example.com')).toBe(original);
  });
});

describe('digit folding', () => {
  it('folds decimal digits of other scripts to ASCII (BMP offset for offset, astral as a whole)', () => {
    const original = 'card \u0664\u0661\u0661\u0661 \u096A\u0967\u0967\u0967 \u0E54\u0E51\u0E51\u0E51 \u{1E954}\u{1E951} 1234';
    const m = foldDigits(original);
    expect(m.text).toBe('card 4111 4111 4111 41 1234');
    expect(back(original, m, '4111 4111')).toBe('\u0664\u0661\u0661\u0661 \u096A\u0967\u0967\u0967');
    expect(back(original, m, '41 ')).toBe('\u{1E954}\u{1E951} ');
  });

  it('is part of the canonical view', () => {
    const views = buildViews('ssn \u0665\u0663\u0666-\u0662\u0662-\u0661\u0662\u0663\u0664');
    expect(views.map((v) => v.text)).toEqual(['ssn \u0665\u0663\u0666-\u0662\u0662-\u0661\u0662\u0663\u0664', 'ssn 536-22-1234']);
  });
});
