import { IBAN_CONFIDENCE, IbanDetector } from '../../../../src/detection/detectors/pii/iban-detector';
import { abortedSignal, scanWith, topConfidence } from './numeric-scan';

const detector = new IbanDetector();
const scan = (text: string) => scanWith(detector, text);
const top = (text: string) => topConfidence(detector, text);

describe('IbanDetector', () => {
  it.each([
    ['IBAN: DE89 3704 0044 0532 0130 00.', 'DE89 3704 0044 0532 0130 00'],
    ['DE89370400440532013000', 'DE89370400440532013000'],
    ['gb82 west 1234 5698 7654 32', 'gb82 west 1234 5698 7654 32'],
    ['gb82west12345698765432', 'gb82west12345698765432'],
    ['(FR14 2004 1010 0505 0001 3M02 606)', 'FR14 2004 1010 0505 0001 3M02 606'],
    ['NL91ABNA0417164300;', 'NL91ABNA0417164300'],
    ['konto ES91-2100-0418-4502-0005-1332!', 'ES91-2100-0418-4502-0005-1332'],
    ['"CH9300762011623852957"', 'CH9300762011623852957'],
    ['Account:\nBE68 5390 0754 7034\nthanks', 'BE68 5390 0754 7034'],
  ])('finds the IBAN in %j', (text, expected) => {
    expect(scan(text).map((m) => m.match)).toEqual([expected]);
  });

  it('sees full-width characters after NFKC', () => {
    expect(scan('ＤＥ８９ ３７０４ ００４４ ０５３２ ０１３０ ００').map((m) => m.match)).toEqual(['DE89 3704 0044 0532 0130 00']);
  });

  it('scores by context and registry membership', () => {
    expect(top('DE89370400440532013000')).toBe(IBAN_CONFIDENCE.plain);
    expect(top('IBAN DE89370400440532013000')).toBe(IBAN_CONFIDENCE.withContext);
    expect(top('wire to DE89370400440532013000')).toBe(IBAN_CONFIDENCE.withContext);
  });

  it.each([
    ['DE88 3704 0044 0532 0130 00'], // check digits wrong
    ['DE89 3704 0044 0532 0130 0'], // too short
    ['DE89 3704 0044 0532 0130 001'], // continues
    ['DE89-3704-0044-0532-0130-00-99'],
    ['XDE89370400440532013000'],
    ['my_DE89370400440532013000'],
    ['XX89370400440532013000'],
    ['US64SVBKUS6S3300958879'],
    ['BIC DEUTDEFF500'],
    ['id 550e8400-e29b-41d4-a716-446655440000'],
    ['VIN 1HGCM82633A004352'],
    ['IBAN: DE00 0000 0000 0000 0000 00'],
  ])('does not report %j', (text) => {
    expect(scan(text)).toEqual([]);
  });

  it('finds several, with spans into the text', () => {
    const text = 'from DE89370400440532013000 to GB82 WEST 1234 5698 7654 32.';
    const found = scan(text);
    expect(found.map((m) => m.match)).toEqual(['DE89370400440532013000', 'GB82 WEST 1234 5698 7654 32']);
    for (const m of found) expect(text.slice(m.start, m.end)).toBe(m.match);
  });

  it('honours an aborted signal', () => {
    const text = 'DE89370400440532013000 '.repeat(600);
    expect(() => detector.detect({ text, direction: 'input' }, abortedSignal('stop'))).toThrow('stop');
  });

  // Speed on this megabyte is measured by `npm run bench:adversarial`.
  it('keeps at most 1000 findings and finds nothing in a megabyte of look-alikes', () => {
    expect(scan('DE89370400440532013000 '.repeat(1200))).toHaveLength(1000);
    expect(scan('DE89 '.repeat(200_000))).toEqual([]);
  });
});
