import { CreditCardDetector } from '../../../../src/detection/detectors/pii/credit-card-detector';
import { IpAddressDetector } from '../../../../src/detection/detectors/pii/ip-address-detector';
import { PhoneNumberDetector } from '../../../../src/detection/detectors/pii/phone-number-detector';
import { DigitRunMatches, TextIndex } from '../../../../src/detection/text-index';
import { scanWith } from './numeric-scan';

/**
 * Digit runs of millions of characters (a 10 MB request body is allowed). The card, phone and IPv4 runs
 * used to end in an unbounded counted repetition (`(?:…){11,}`), which keeps one backtrack entry per
 * repetition: on ~5 million digits irregexp ran out of stack and the detector failed ("Maximum call
 * stack size exceeded"), which fails the request closed. They now match a fixed head and continue in
 * bounded steps (DigitRunMatches' `extend`).
 */
describe('signature detectors on huge digit runs', () => {
  const wall = (unit: string, n: number) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);

  it('the card, phone and IP detectors scan 10 million digits / dotted digits and still find what follows', () => {
    const tail = ' card 4111 1111 1111 1111 call +1 (415) 555-0100 host 10.1.2.3';
    const digits = `${wall('1', 10_000_000)}${tail}`;
    const dotted = `${wall('1.', 10_000_000)}1${tail}`;
    expect(scanWith(new CreditCardDetector(), digits).map((m) => m.match)).toContain('4111 1111 1111 1111');
    expect(scanWith(new PhoneNumberDetector(), digits).some((m) => m.match.includes('555-0100'))).toBe(true);
    expect(scanWith(new IpAddressDetector(), dotted).map((m) => m.match)).toContain('10.1.2.3');
  });

  it('a continued match covers the whole run, as the unbounded pattern did', () => {
    const text = `x ${wall('1.', 9_001)}1 y`;
    const index = new TextIndex(text);
    const matches = new DigitRunMatches(index, /(?<![0-9.])[0-9]+(?:\.[0-9]+){3}/y, undefined, /(?:\.[0-9]+){1,1024}/y);
    const m = matches.next();
    expect(m?.index).toBe(2);
    expect(m?.[0]).toBe(text.slice(2, -2));
    expect(m?.[0]).toBe(/(?<![0-9.])[0-9]+(?:\.[0-9]+){3,}/.exec(text)?.[0]);
  });
});
