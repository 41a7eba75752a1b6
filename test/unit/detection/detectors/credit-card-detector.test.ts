import {
  CARD_CONFIDENCE,
  cardNetwork,
  CreditCardDetector,
  isTestCardNumber,
} from '../../../../src/detection/detectors/pii/credit-card-detector';
import { abortedSignal, scanWith, topConfidence } from './numeric-scan';

const detector = new CreditCardDetector();
const scan = (text: string) => scanWith(detector, text);
const top = (text: string) => topConfidence(detector, text);

// Luhn-valid numbers that are not published test numbers.
const VISA = '4539148803436467';
const MC = '5128560801363036';
const AMEX = '377214742573795';

describe('CreditCardDetector', () => {
  it.each([
    [`Card number: ${VISA}`, VISA],
    ['4539 1488 0343 6467', '4539 1488 0343 6467'],
    ['4539-1488-0343-6467', '4539-1488-0343-6467'],
    ['4539.1488.0343.6467', '4539.1488.0343.6467'],
    ['use 4539 1488-0343 6467 today', '4539 1488-0343 6467'],
    ['4 5 3 9 1 4 8 8 0 3 4 3 6 4 6 7', '4 5 3 9 1 4 8 8 0 3 4 3 6 4 6 7'],
    ['4539 – 1488 – 0343 – 6467', '4539 – 1488 – 0343 – 6467'],
    [`mastercard ${MC}`, MC],
    [`amex ${AMEX.slice(0, 4)} ${AMEX.slice(4, 10)} ${AMEX.slice(10)}`, `${AMEX.slice(0, 4)} ${AMEX.slice(4, 10)} ${AMEX.slice(10)}`],
  ])('finds the card in %j', (text, expected) => {
    const found = scan(text);
    expect(found.map((m) => m.match)).toEqual([expected]);
    expect(found[0]?.confidence).toBeGreaterThanOrEqual(0.75);
  });

  it('sees full-width digits and no-break spaces after NFKC', () => {
    const fullWidth = VISA.replace(/[0-9]/g, (d) => String.fromCharCode(0xff10 + Number(d)));
    expect(scan(`card ${fullWidth}`).map((m) => m.match)).toEqual([VISA]);
    expect(scan('4539\u00a01488\u00a00343\u00a06467')).toHaveLength(1);
  });

  it('finds a number wrapped once across lines', () => {
    expect(top('4539 1488\n0343 6467')).toBe(CARD_CONFIDENCE.clean);
    expect(top('card: 4539\n1488\n0343\n6467')).toBe(CARD_CONFIDENCE.irregularWithContext);
  });

  it('raises confidence with a payment context word', () => {
    expect(top(VISA)).toBe(CARD_CONFIDENCE.clean);
    expect(top(`visa ${VISA}`)).toBe(CARD_CONFIDENCE.cleanWithContext);
    expect(top(`${VISA} exp 04/27`)).toBe(CARD_CONFIDENCE.cleanWithContext);
    expect(top('4539 1488 03 4364 67')).toBe(CARD_CONFIDENCE.irregular);
    expect(top('cvv 123 4539 1488 03 4364 67')).toBe(CARD_CONFIDENCE.irregularWithContext);
    expect(top('discard 4539148803436467')).toBe(CARD_CONFIDENCE.clean); // "card" inside a word is no context
  });

  it('reports published test numbers below L2 unless a payment word is near', () => {
    for (const n of ['4111111111111111', '4242424242424242', '5555555555554444', '378282246310005']) {
      expect(isTestCardNumber(n)).toBe(true);
      expect(top(n)).toBe(CARD_CONFIDENCE.test);
      expect(top(`test card ${n}`)).toBe(CARD_CONFIDENCE.testWithContext);
    }
    expect(isTestCardNumber(VISA)).toBe(false);
  });

  it('does not report numbers that fail Luhn', () => {
    expect(scan('4539148803436468')).toEqual([]);
    expect(scan('card 4539 1488 0343 6468')).toEqual([]);
  });

  it('scores a Luhn-valid unknown prefix low', () => {
    // 9 and 1 start no card network (UATP is left out on purpose).
    expect(top('9999 1234 5678 9993')).toBeLessThanOrEqual(0.45);
    expect(top('card 9999123456789993')).toBe(CARD_CONFIDENCE.unknownWithContext);
    expect(scan('9999123456789993')).toEqual([]); // bare unknown-prefix IDs are not reported
  });

  it.each([
    ['ts=1715763000123'],
    ['commit 9fceb02d0ae598e95dc970b74767f19372d61af8'],
    ['id 550e8400-e29b-41d4-a716-446655440000'],
    [`${VISA}1234`],
    [`0x${VISA}`],
    [`a${VISA}f`],
    [`user_${VISA}`],
    ['version 4.5.3.9.1.4.8.8.0.3.4.3.6.4.6.7'],
    ['scores 45 39 14 88 03 43 64 67'],
    ['IMEI 35-209900-176148-1'],
  ])('does not report %j at L2', (text) => {
    expect(top(text)).toBeLessThan(0.75);
  });

  it('knows the networks by prefix and length', () => {
    expect(cardNetwork('4539148803436467')).toBe('visa');
    expect(cardNetwork('2221000000000009')).toBe('mastercard');
    expect(cardNetwork('2720990000000007')).toBe('mastercard');
    expect(cardNetwork('2721000000000004')).toBeUndefined();
    expect(cardNetwork(AMEX)).toBe('amex');
    expect(cardNetwork(`${AMEX}0`)).toBeUndefined(); // Amex is 15 digits
    expect(cardNetwork('6221260000000000')).toBe('discover');
    expect(cardNetwork('3530111333300000')).toBe('jcb');
    expect(cardNetwork('30569309025904')).toBe('diners');
    expect(cardNetwork('6200000000000005')).toBe('unionpay');
    expect(cardNetwork('2200000000000004')).toBe('mir');
  });

  it('reports spans into the text and picks the card, not its CVV, in one run', () => {
    const text = `pay ${VISA.replace(/(\d{4})(?=\d)/g, '$1 ')} 381 thanks`;
    const [found] = scan(text);
    expect(found?.match).toBe('4539 1488 0343 6467');
    expect(text.slice(found?.start, found?.end)).toBe('4539 1488 0343 6467');
    expect(scan(`a ${VISA} b ${MC} c`).map((m) => m.match)).toEqual([VISA, MC]);
  });

  it('honours an aborted signal', () => {
    expect(() => detector.detect({ text: `${VISA} `.repeat(500), direction: 'input' }, abortedSignal('stop'))).toThrow('stop');
  });

  // Speed on these megabytes is measured by `npm run bench:adversarial`.
  it('keeps at most 1000 findings and finds nothing in 1 MB of prose with numbers', () => {
    const many = `${VISA} `.repeat(2000);
    expect(scan(many)).toHaveLength(1000);
    const prose = 'The quarterly report for 2024 lists 17 offices and 3,400 staff. '.repeat(16_000);
    expect(scan(prose)).toEqual([]);
  });

  it('reports only whole Luhn-valid digit runs, at most 1000, in a megabyte of digit soup', () => {
    const text = '4 1 '.repeat(250_000);
    const found = scan(text);
    expect(found.length).toBeGreaterThan(0);
    expect(found.length).toBeLessThanOrEqual(1000);
    for (const m of found) {
      expect(text.slice(m.start, m.end)).toBe(m.match);
      expect(m.match.replace(/ /g, '')).toMatch(/^\d{13,19}$/);
    }
  });
});
