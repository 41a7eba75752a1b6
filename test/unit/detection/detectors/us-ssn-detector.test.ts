import { SSN_CONFIDENCE, ssnRulesValid, UsSsnDetector } from '../../../../src/detection/detectors/pii/us-ssn-detector';
import { abortedSignal, scanWith, topConfidence } from './numeric-scan';

const detector = new UsSsnDetector();
const scan = (text: string) => scanWith(detector, text);
const top = (text: string) => topConfidence(detector, text);

describe('UsSsnDetector', () => {
  it.each([
    ['SSN: 536-22-1234', '536-22-1234', SSN_CONFIDENCE.dashedWithContext],
    ['536-22-1234', '536-22-1234', SSN_CONFIDENCE.dashed],
    ['social security number 536 22 1234', '536 22 1234', SSN_CONFIDENCE.spacedWithContext],
    ['536 22 1234', '536 22 1234', SSN_CONFIDENCE.spaced],
    ['ssn 536221234', '536221234', SSN_CONFIDENCE.bareWithContext],
    ['536221234', '536221234', SSN_CONFIDENCE.bare],
    ['{"ssn":"536-22-1234"}', '536-22-1234', SSN_CONFIDENCE.dashedWithContext],
    // Non-breaking hyphens (U+2011); NFKC turns them into U+2010 hyphens, which count as "-".
    ['SS# 536\u201122\u20111234', '536\u201022\u20101234', SSN_CONFIDENCE.dashedWithContext],
    ['Taxpayer id (536-22-1234).', '536-22-1234', SSN_CONFIDENCE.dashedWithContext],
  ])('scores %j', (text, expected, confidence) => {
    expect(scan(text).map((m) => [m.match, m.confidence])).toEqual([[expected, confidence]]);
  });

  it('sees full-width digits after NFKC', () => {
    expect(top('SSN ５３６-２２-１２３４')).toBe(SSN_CONFIDENCE.dashedWithContext);
  });

  it('applies the SSA rules for area, group and serial', () => {
    expect(ssnRulesValid('536', '22', '1234')).toBe(true);
    expect(ssnRulesValid('000', '22', '1234')).toBe(false);
    expect(ssnRulesValid('666', '22', '1234')).toBe(false);
    expect(ssnRulesValid('912', '22', '1234')).toBe(false);
    expect(ssnRulesValid('536', '00', '1234')).toBe(false);
    expect(ssnRulesValid('536', '22', '0000')).toBe(false);
    expect(scan('SSN 000-12-3456 666-12-3456 912-70-1234 123-00-4567 123-45-0000')).toEqual([]);
  });

  it('scores voided, advertising and specimen numbers low', () => {
    for (const n of ['078-05-1120', '219-09-9999', '123-45-6789']) {
      expect(top(`SSN ${n}`)).toBe(SSN_CONFIDENCE.specimen);
    }
  });

  it.each([
    ['536-22 1234'], // mixed delimiters
    ['1536-22-1234'],
    ['536-22-12345'],
    ['536-22-1234-5'],
    ['12-536-22-1234'],
    ['x536-22-1234'],
    ['id.536-22-1234'],
    ['+1 536 22 1234'],
    ['555 536 22 1234'],
    ['(415) 555-2671'],
    ['2023-12-25'],
    ['ZIP 94105-1234'],
    ['EIN 12-3456789'],
    ['536.22.1234'],
  ])('does not report %j', (text) => {
    expect(scan(text)).toEqual([]);
  });

  it('caps SSN-shaped numbers near phone words without an SSN word', () => {
    expect(top('call me on 536-22-1234')).toBe(SSN_CONFIDENCE.phoneContextCap);
    expect(top('call about SSN 536-22-1234')).toBe(SSN_CONFIDENCE.dashedWithContext);
  });

  it('finds several, with spans into the text', () => {
    const text = 'ssn: 536-22-1234, 412-33-9876';
    const found = scan(text);
    expect(found.map((m) => m.match)).toEqual(['536-22-1234', '412-33-9876']);
    for (const m of found) expect(text.slice(m.start, m.end)).toBe(m.match);
  });

  it('honours an aborted signal', () => {
    expect(() => detector.detect({ text: '536-22-1234 '.repeat(600), direction: 'input' }, abortedSignal('stop'))).toThrow(
      'stop',
    );
  });

  // Speed on this megabyte is measured by `npm run bench:adversarial`.
  it('keeps at most 1000 findings and finds nothing in a megabyte of digits', () => {
    expect(scan('536-22-1234 '.repeat(2000))).toHaveLength(1000);
    expect(scan('4'.repeat(1 << 20))).toEqual([]);
  });
});
