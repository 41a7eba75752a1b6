import { findPhoneNumbersInText, type PhoneNumber } from 'libphonenumber-js';
import { nanpNumber, PHONE_CONFIDENCE, PhoneNumberDetector } from '../../../../src/detection/detectors/pii/phone-number-detector';
import { abortedSignal, scanWith, topConfidence } from './numeric-scan';

const detector = new PhoneNumberDetector();
const scan = (text: string) => scanWith(detector, text);
const top = (text: string) => topConfidence(detector, text);

describe('PhoneNumberDetector', () => {
  it.each([
    ['Call (415) 555-2671 now', '(415) 555-2671', PHONE_CONFIDENCE.formattedWithContext],
    ['(415) 555-2671', '(415) 555-2671', PHONE_CONFIDENCE.formatted],
    ['415.555.2671', '415.555.2671', PHONE_CONFIDENCE.formatted],
    ['415 555 2671', '415 555 2671', PHONE_CONFIDENCE.formatted],
    ['1-800-555-0199', '1-800-555-0199', PHONE_CONFIDENCE.formatted],
    ['+1 212 736 5000', '+1 212 736 5000', PHONE_CONFIDENCE.formatted],
    ['+14155552671', '+14155552671', PHONE_CONFIDENCE.formatted],
    ['+44 20 7946 0958', '+44 20 7946 0958', PHONE_CONFIDENCE.formatted],
    ['Tel. +49 30 901820', '+49 30 901820', PHONE_CONFIDENCE.formattedWithContext],
    ['+33 1 42 68 53 00', '+33 1 42 68 53 00', PHONE_CONFIDENCE.formatted],
    ['Tel: +81 3-3224-3111', '+81 3-3224-3111', PHONE_CONFIDENCE.formattedWithContext],
    ['0044 20 7946 0958', '0044 20 7946 0958', PHONE_CONFIDENCE.formatted],
    ['phone: 4155552671', '4155552671', PHONE_CONFIDENCE.bareWithContext],
    ['4155552671', '4155552671', PHONE_CONFIDENCE.bare],
    ['Phone: 415.669.9951 ext. 204', '415.669.9951', PHONE_CONFIDENCE.formattedWithContext],
  ])('scores %j', (text, expected, confidence) => {
    expect(scan(text).map((m) => [m.match, m.confidence])).toEqual([[expected, confidence]]);
  });

  it('sees full-width digits and no-break spaces after NFKC', () => {
    expect(scan('call （４１５） ５５５-２６７１').map((m) => m.match)).toEqual(['(415) 555-2671']);
    expect(scan('tel 415\u00a0555\u00a02671').map((m) => m.match)).toEqual(['415 555 2671']);
  });

  it('finds every number of a list, with spans into the text', () => {
    const text = 'Phones: 415-555-2671 212-555-1234 (646) 555-0143 +44 20 7946 0958 and 617 555 0199';
    const found = scan(text);
    expect(found.map((m) => m.match)).toEqual([
      '415-555-2671',
      '212-555-1234',
      '(646) 555-0143',
      '+44 20 7946 0958',
      '617 555 0199',
    ]);
    for (const m of found) expect(text.slice(m.start, m.end)).toBe(m.match);
  });

  it('a phone word cut by the context window ("paragraph", "calligraphy") is not phone context', () => {
    // bench:perf's benign 1 MB texts were blocked on this: "ph" at the window's edge, inside "paragraph".
    const text = 'Summarise the main ideas of the paragraph below in plain\nGood morning (request 1234501820). Compare walking and cycling.';
    expect(top(text)).toBeLessThan(0.75);
    expect(top('Good morning (request 1234501820). I started calligraphy lessons')).toBeLessThan(0.75);
    // the whole words still are
    expect(top('Reach me by ph 1234501820 after six')).toBeGreaterThanOrEqual(0.75);
  });

  it('scores possible-but-invalid numbers and ID-labelled numbers below L2', () => {
    expect(top('1700000000')).toBeLessThan(0.75);
    expect(top('Order #4155552671')).toBe(PHONE_CONFIDENCE.idContextCap);
    expect(top('invoice 4155552671')).toBe(PHONE_CONFIDENCE.idContextCap);
  });

  it.each([
    ['2024-05-15 10:30:00'],
    ['20240515103000'],
    ['12/31/2020'],
    ['31.12.2020'],
    ['card 4111 1111 1111 1111'],
    ['4532015112830366'],
    ['SSN 536-22-1234'],
    ['IBAN DE89 3704 0044 0532 0130 00'],
    ['192.168.100.200'],
    ['v2.14.3'],
    ['10.0.19045.3803'],
    ['version 415.555.2671'],
    ['0x4155552671'],
    ['id_4155552671'],
    ['a4155552671b'],
    ['ID-4155552671'],
    ['id 550e8400-e29b-41d4-a716-446655440000'],
    ['values [415, 555, 2671]'],
    ['ISBN 978-0-306-40615-7'],
    ['Chen Li. VLDB J. 12(3): 211-227 (2003).'],
  ])('does not report %j at L2', (text) => {
    expect(top(text)).toBeLessThan(0.75);
  });

  it('honours an aborted signal', () => {
    const text = '(415) 555-2671, '.repeat(600);
    expect(() => detector.detect({ text, direction: 'input' }, abortedSignal('stop'))).toThrow('stop');
  });

  // Speed on these megabytes is measured by `npm run bench:adversarial`.
  it('stops at 1000 findings on a long list and finds nothing in prose with numbers', () => {
    expect(scan('(415) 555-2671 '.repeat(3000))).toHaveLength(1000);
    const prose = 'In 2024 the office moved to 42 Main Street; 3 of 17 teams relocated. '.repeat(15_000);
    expect(scan(prose)).toEqual([]);
  });

  it('fails loudly instead of silently skipping a wall of number-like digits', () => {
    expect(() => scan('4 '.repeat(500_000))).toThrow(/too many number-like candidates/);
  });

  it('reads usual North American formats exactly as libphonenumber does (the fast path)', () => {
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const shapes = [
      '(A) E-L', '(A)E-L', 'A-E-L', 'A.E.L', 'A E L', '+1 A-E-L', '+1-A-E-L', '1-A-E-L', '+1 (A) E-L', '1 A E L',
      '+1.A.E.L', '1 (A) E L', '+1 A.E.L',
    ];
    let fast = 0;
    let valid = 0;
    for (let i = 0; i < 200; i++) {
      const area = String(200 + next(800));
      const exchange = String(200 + next(800));
      const line = String(next(10_000)).padStart(4, '0');
      for (const shape of shapes) {
        const text = shape.replace('A', area).replace('E', exchange).replace('L', line);
        const e164 = nanpNumber(text, 0, text.length);
        expect(e164).toBe(`+1${area}${exchange}${line}`);
        const found = findPhoneNumbersInText(`${text}. Next`, { defaultCountry: 'US', extended: true });
        expect(found.map((f) => [f.startsAt, f.endsAt])).toEqual([[0, text.length]]);
        const isValid = (found[0] as { number: PhoneNumber }).number.isValid();
        const confidence = detector.detect({ text, direction: 'input' }, new AbortController().signal)[0]?.confidence;
        expect(confidence).toBe(isValid ? PHONE_CONFIDENCE.formatted : PHONE_CONFIDENCE.possible);
        fast++;
        if (isValid) valid++;
      }
    }
    expect(fast).toBe(200 * shapes.length);
    expect(valid).toBeGreaterThan(50); // both valid and invalid numbers were compared
    expect(valid).toBeLessThan(fast);
    // Not the fast path: mixed separators, a digit or ":" after, bare digit strings.
    expect(nanpNumber('415-555.0132', 0, 12)).toBeUndefined();
    expect(nanpNumber('415-555-01321', 0, 12)).toBeUndefined();
    expect(nanpNumber('415-555-0132:30', 0, 12)).toBeUndefined();
    expect(nanpNumber('4155550132', 0, 10)).toBeUndefined();
  });
});
