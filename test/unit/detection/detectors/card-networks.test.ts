import { cardNetwork, CARD_CONFIDENCE, CreditCardDetector } from '../../../../src/detection/detectors/pii/credit-card-detector';
import { luhnValid } from '../../../../src/detection/detectors/pii/signals';
import { scanWith } from './numeric-scan';

const detector = new CreditCardDetector();
const scan = (text: string) => scanWith(detector, text).map((m) => [m.match, m.confidence]);

/** `prefix` completed with its Luhn check digit. */
function withCheckDigit(prefix: string): string {
  for (let d = 0; d <= 9; d++) if (luhnValid(prefix + d)) return prefix + d;
  throw new Error('unreachable');
}

describe('card networks: JCB and Maestro', () => {
  it('names the 15-digit JCB ranges (2131, 1800): they scored as an unknown prefix, 0.45', () => {
    const jcb15 = withCheckDigit('21310498765431');
    const jcbOld = withCheckDigit('18001234567890');
    expect(cardNetwork(jcb15)).toBe('jcb');
    expect(cardNetwork(jcbOld)).toBe('jcb');
    expect(scan(`my jcb is ${jcb15}`)).toEqual([[jcb15, CARD_CONFIDENCE.cleanWithContext]]);
    expect(scan(`ref ${jcbOld}`)).toEqual([[jcbOld, CARD_CONFIDENCE.clean]]);
    expect(scan('JCB 3530 1190 4512 8734')).toEqual([['3530 1190 4512 8734', CARD_CONFIDENCE.cleanWithContext]]);
  });

  it('reads Maestro from 12 to 19 digits', () => {
    const twelve = withCheckDigit('67592103847');
    expect(twelve).toHaveLength(12);
    expect(cardNetwork(twelve)).toBe('maestro');
    expect(scan(`Maestro ${twelve}`)).toEqual([[twelve, CARD_CONFIDENCE.cleanWithContext]]);
    expect(scan('My Maestro card 6759 2103 8476 was swallowed')).toEqual([['6759 2103 8476', CARD_CONFIDENCE.cleanWithContext]]);
    expect(cardNetwork(withCheckDigit('501800654312872'))).toBe('maestro');
    expect(cardNetwork(withCheckDigit('630412345678901234'))).toBe('maestro');
  });

  it('reports no other 12-digit number, Luhn-valid or not, grouped or not', () => {
    const visa12 = withCheckDigit('41111111111');
    expect(cardNetwork(visa12)).toBeUndefined();
    expect(scan(`card ${visa12}`)).toEqual([]);
    expect(scan(`card ${withCheckDigit('12345678901').replace(/(\d{4})(?=\d)/g, '$1 ')}`)).toEqual([]);
    expect(scan('Order 4417 2093 1185 shipped')).toEqual([]);
  });
});
