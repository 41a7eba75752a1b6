import { PHONE_CONFIDENCE, PhoneNumberDetector } from '../../../../src/detection/detectors/pii/phone-number-detector';
import { fitsPlan, regionPlans } from '../../../../src/detection/detectors/pii/phone-national';
import { createDetectionEngine } from '../../../../src/detection/engine';
import type { DetectionPolicy } from '../../../../src/shared/policy';

const detector = new PhoneNumberDetector();
const signal = new AbortController().signal;

function scan(text: string, piiRegions?: readonly string[]): Array<[string, number]> {
  return detector
    .detect({ text, direction: 'input', ...(piiRegions ? { piiRegions } : {}) }, signal)
    .map((f) => [text.slice(f.start, f.end), f.confidence]);
}

/** The spans scanned at or above L2 (0.75). */
const atL2 = (text: string, regions?: readonly string[]) => scan(text, regions).filter(([, c]) => c >= 0.75).map(([m]) => m);

describe('national phone formats of pii_regions', () => {
  it.each([
    ['GB landline', 'Call me on 020 7946 0958 tomorrow', '020 7946 0958'],
    ['GB mobile', 'My mobile is 07700 900461.', '07700 900461'],
    ['GB "0118" is Reading, not the 011 international prefix', 'Ring me on 0118 406 1449 please', '0118 406 1449'],
    ['DE landline', 'Rufen Sie mich unter 030 1234567 an', '030 1234567'],
    ['DE "(0)" trunk', 'Tel. (0)30 1234567', '(0)30 1234567'],
    ['DE mobile', 'Handy: 0171 2345678', '0171 2345678'],
    ['FR mobile', 'Mon portable : 06 12 34 56 78.', '06 12 34 56 78'],
    ['FR unbroken', 'Appelez le 0612345678 svp', '0612345678'],
    ['ES mobile with a phone word', 'Llámame al 612 34 56 78', '612 34 56 78'],
    ['ES bare 9 digits with a phone word', 'mi móvil 612345678', '612345678'],
    ['IT mobile', 'il mio cellulare è 333 123 4567', '333 123 4567'],
    ['IT landline', 'chiamare lo 02 1234 5678', '02 1234 5678'],
    ['NL mobile', 'Bel me op 06-12345678', '06-12345678'],
    ['JP mobile', '電話: 090-1234-5678', '090-1234-5678'],
    ['JP landline', 'お問い合わせは03-1234-5678まで', '03-1234-5678'],
    ['BR mobile', 'Meu celular: (11) 91234-5678', '(11) 91234-5678'],
    ['AU mobile', 'mobile 0412 345 678', '0412 345 678'],
  ])('finds a %s', (_label, text, number) => {
    expect(atL2(text)).toEqual([number]);
  });

  it.each([
    ['thousands written with spaces', 'We sold 912 345 678 units last year'],
    ['a population figure', 'Population 1 234 567 in 2020'],
    ['a dotted amount', 'Ventas de 912.345.678 euros'],
    ['a ZIP+4', 'Contact: Austin, TX 78745-1234'],
    ['a Japanese postcode', '〒150-0002 東京都渋谷区'],
    ['the inner groups of a card', 'I paid with my Visa 4532 0198 7654 3215 yesterday'],
    ['an "00" inner group of a card', 'tarjeta 6011 0084 1609 6532'],
    ['years in a row', 'between 2019 2020 and 2021'],
    ['a trunk-less number without a phone word', 'Reference 612 34 56 78 attached'],
    ['an order id', 'order 0612345678 shipped'],
    ['a version and a date', 'version 10.2.3 released 2024-01-05'],
  ])('does not report %s at L2', (_label, text) => {
    expect(atL2(text)).toEqual([]);
  });

  it('reads only the regions asked for; "+CC" numbers whatever the regions', () => {
    expect(atL2('Call me on 020 7946 0958', ['FR'])).toEqual([]);
    expect(atL2('Call me on 020 7946 0958', ['FR', 'GB'])).toEqual(['020 7946 0958']);
    expect(atL2('Mon portable : 06 12 34 56 78', ['GB'])).toEqual([]);
    expect(atL2('Call +44 20 7946 0958', ['FR'])).toEqual(['+44 20 7946 0958']);
    // North American numbers are the detector's own path, whatever the list says.
    expect(atL2('Call (415) 555-2671 now', ['JP'])).toEqual(['(415) 555-2671']);
  });

  it('scores a trunk-less national number by its phone word', () => {
    expect(scan('Llámame al 612 34 56 78')).toEqual([['612 34 56 78', PHONE_CONFIDENCE.formattedWithContext]]);
    // Without a phone word it is not even looked up (an amount, an id): no finding at any level.
    expect(scan('Referencia 612 34 56 78')).toEqual([]);
    expect(scan('Referencia 612 34 56 78, teléfono')).toEqual([['612 34 56 78', PHONE_CONFIDENCE.formattedWithContext]]);
  });

  it('fits a numbering plan by trunk prefix and length before any library call', () => {
    const [gb, es] = regionPlans(['GB', 'ES']);
    expect(fitsPlan(gb!, '02079460958')).toBe(true);
    expect(fitsPlan(gb!, '2079460958')).toBe(false); // GB numbers are written with their trunk 0
    expect(fitsPlan(es!, '612345678')).toBe(true);
    expect(fitsPlan(es!, '61234567')).toBe(false);
    expect(regionPlans(undefined).length).toBeGreaterThanOrEqual(19);
  });

  it('passes the policy regions from the engine to the detector', async () => {
    const engine = createDetectionEngine();
    const policy = (piiRegions?: string[]): DetectionPolicy => ({
      cacheKey: '',
      policyMode: 'IO',
      inputDetectors: [{ detector_type: 'pii/phone_number', threshold: 'L2', action: 'block' }],
      outputDetectors: [],
      allowList: { entries: [], match_type: 'contains' },
      denyList: { entries: [], match_type: 'contains' },
      customDetectors: [],
      ...(piiRegions ? { piiRegions } : {}),
    });
    const text = 'Mon portable : 06 12 34 56 78.';
    const blocked = async (regions?: string[]) => (await engine.evaluate({ text, direction: 'input', config: policy(regions) })).blocked;
    expect(await blocked()).toBe(true);
    expect(await blocked(['FR'])).toBe(true);
    expect(await blocked(['US', 'GB'])).toBe(false);
  });
});
