import { AddressDetector } from '../../../../src/detection/detectors/pii/address-detector';

const detector = new AddressDetector();
const scan = (text: string) =>
  detector
    .detect({ text, direction: 'input' }, new AbortController().signal)
    .map((f) => ({ match: text.slice(f.start, f.end), confidence: f.confidence }));
const best = (text: string) => Math.max(0, ...scan(text).map((f) => f.confidence));

describe('AddressDetector', () => {
  it.each([
    ['Send it to 1600 Pennsylvania Avenue NW, Washington, DC 20500.', '1600 Pennsylvania Avenue NW, Washington, DC 20500'],
    ['123 Main St, Springfield, IL 62704', '123 Main St, Springfield, IL 62704'],
    ['350 Fifth Avenue, New York, NY 10118', '350 Fifth Avenue, New York, NY 10118'],
    ['Our office: 500 W 2nd St Suite 1900, Austin, TX 78701', '500 W 2nd St Suite 1900, Austin, TX 78701'],
    ['P.O. Box 1234, Austin, TX 78701', 'P.O. Box 1234, Austin, TX 78701'],
    ['10 Downing Street, London SW1A 2AA', '10 Downing Street, London SW1A 2AA'],
    ['Hauptstraße 5, 10115 Berlin', 'Hauptstraße 5, 10115 Berlin'],
    ['Keizersgracht 123, 1015 CJ Amsterdam', 'Keizersgracht 123, 1015 CJ Amsterdam'],
    ['12 rue de la Paix, 75002 Paris', '12 rue de la Paix, 75002 Paris'],
    ['Calle Mayor 10, 28013 Madrid', 'Calle Mayor 10, 28013 Madrid'],
    ['Via Roma 12, 00184 Roma', 'Via Roma 12, 00184 Roma'],
    ['45 Queen Street West, Toronto, ON M5H 2M9', '45 Queen Street West, Toronto, ON M5H 2M9'],
  ])('reports the full address in %j at L2 or above', (text, expected) => {
    const [finding, ...rest] = scan(text);
    expect(rest).toEqual([]);
    expect(finding?.match).toBe(expected);
    expect(finding?.confidence).toBeGreaterThanOrEqual(0.75);
  });

  it('spans a multi-line address with its unit', () => {
    const text = 'Ship to:\n123 Main St\nApt 4B\nSpringfield, IL 62704\nThanks';
    expect(scan(text)).toEqual([{ match: '123 Main St\nApt 4B\nSpringfield, IL 62704', confidence: 0.97 }]);
  });

  it('orders confidence by the parts present', () => {
    const streetOnly = best('I walked past 1 Main Street yesterday');
    const withCity = best('1 Main Street, Springfield');
    const withState = best('1 Main Street, Springfield, IL');
    const full = best('1 Main Street, Springfield, IL 62704');
    expect(streetOnly).toBeCloseTo(0.55);
    expect(streetOnly).toBeLessThan(withCity);
    expect(withCity).toBeLessThan(withState);
    expect(withState).toBeLessThan(full);
    expect(full).toBeGreaterThanOrEqual(0.9);
  });

  it('raises a bare street line to L2 when the text says it is an address', () => {
    expect(best('1 Main Street')).toBeLessThan(0.75);
    expect(best('My address is 1 Main Street')).toBeGreaterThanOrEqual(0.75);
    expect(best('ship to 742 Evergreen Terrace')).toBeGreaterThanOrEqual(0.75);
  });

  it('scores a lower-case street line and a PO box alone below L2', () => {
    expect(best('12 main st')).toBeCloseTo(0.45);
    expect(best('PO Box 99')).toBeCloseTo(0.6);
  });

  it.each([
    ['return 5 main loop'],
    ['version 2 drive'],
    ['we need a 3 way merge here'],
    ['We walked 5 miles down Oak Street.'],
    ['In 2019 Apple Park opened.'],
    ['Step 3: Drive to the office'],
    ['Wall Street closed up 2 percent today.'],
    ['Error at line 42 Column 7 in main.ts'],
    ['for (let i = 0; i < 10; i++) { street = streets[i]; }'],
    ['The server listens on port 8080.'],
    ['v1.5 Park Avenue'],
  ])('does not report %j at L2', (text) => {
    expect(best(text)).toBeLessThan(0.75);
  });

  it('finds several addresses in one text', () => {
    const text = 'From 1 Main St, Springfield, IL 62704 to 2 Oak Ave, Austin, TX 78701.';
    expect(scan(text).map((f) => f.match)).toEqual(['1 Main St, Springfield, IL 62704', '2 Oak Ave, Austin, TX 78701']);
  });

  it('honours an aborted signal', () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    expect(() => detector.detect({ text: '12 34 '.repeat(2000), direction: 'input' }, controller.signal)).toThrow('stop');
  });

  it('keeps at most 1000 findings on a large input', () => {
    const text = '1 Main St, Springfield, IL 62704. '.repeat(5000);
    expect(detector.detect({ text, direction: 'input' }, new AbortController().signal)).toHaveLength(1000);
  });
});
