import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Detector } from '../../../src/detection/detector';
import { CreditCardDetector } from '../../../src/detection/detectors/pii/credit-card-detector';
import { IbanDetector } from '../../../src/detection/detectors/pii/iban-detector';
import { IpAddressDetector } from '../../../src/detection/detectors/pii/ip-address-detector';
import { PhoneNumberDetector } from '../../../src/detection/detectors/pii/phone-number-detector';
import { UsSsnDetector } from '../../../src/detection/detectors/pii/us-ssn-detector';

/**
 * The labeled corpora of the numeric PII detectors (test/fixtures/detection/<slug>.jsonl), each run
 * through its detector alone at L2 (a case fires when any finding reaches 0.75). Label 1 = the text holds
 * the entity and must fire at L2; label 0 = it must not. The F1 floors are the targets.
 *
 * Texts are NFKC-normalised first, as the engine does before any detector runs (normalize.ts): some
 * cases are full-width or no-break-space evasions.
 */

interface Case {
  id: string;
  detector: string;
  text: string;
  label: 0 | 1;
  note: string;
}

const L2 = 0.75;
const FIXTURES = join(__dirname, '../../fixtures/detection');

const SUITES: ReadonlyArray<{ slug: string; type: string; detector: Detector; floor: number }> = [
  { slug: 'credit_card', type: 'pii/credit_card', detector: new CreditCardDetector(), floor: 0.98 },
  { slug: 'us_ssn', type: 'pii/us_social_security_number', detector: new UsSsnDetector(), floor: 0.98 },
  { slug: 'iban_code', type: 'pii/iban_code', detector: new IbanDetector(), floor: 0.98 },
  { slug: 'ip_address', type: 'pii/ip_address', detector: new IpAddressDetector(), floor: 0.98 },
  { slug: 'phone_number', type: 'pii/phone_number', detector: new PhoneNumberDetector(), floor: 0.95 },
];

function load(slug: string): Case[] {
  return readFileSync(join(FIXTURES, `${slug}.jsonl`), 'utf8')
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as Case);
}

async function fires(detector: Detector, text: string): Promise<boolean> {
  const input = { text: text.normalize('NFKC'), direction: 'input' as const };
  const findings = await detector.detect(input, new AbortController().signal);
  return findings.some((f) => f.confidence >= L2);
}

describe.each(SUITES)('labeled corpus $slug', ({ slug, type, detector, floor }) => {
  const cases = load(slug);

  it('has at least 100 well-formed cases, both labels well represented, unique ids', () => {
    expect(cases.length).toBeGreaterThanOrEqual(100);
    expect(new Set(cases.map((c) => c.id)).size).toBe(cases.length);
    for (const c of cases) {
      expect(Object.keys(c).sort()).toEqual(['detector', 'id', 'label', 'note', 'text']);
      expect(c.detector).toBe(type);
      expect([0, 1]).toContain(c.label);
      expect(c.text.length).toBeGreaterThan(0);
    }
    expect(cases.filter((c) => c.label === 1).length).toBeGreaterThanOrEqual(45);
    expect(cases.filter((c) => c.label === 0).length).toBeGreaterThanOrEqual(45);
  });

  it(`reaches F1 >= ${floor} at L2`, async () => {
    let tp = 0;
    let fp = 0;
    let fn = 0;
    const misses: string[] = [];
    for (const c of cases) {
      const fired = await fires(detector, c.text);
      if (fired && c.label === 1) tp++;
      else if (fired) fp++;
      else if (c.label === 1) fn++;
      if (fired !== (c.label === 1)) misses.push(`${c.id} (${c.note})`);
    }
    const precision = tp / Math.max(1, tp + fp);
    const recall = tp / Math.max(1, tp + fn);
    const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
    if (f1 < floor) throw new Error(`${slug}: F1 ${f1.toFixed(3)} < ${floor}; misclassified: ${misses.join(', ')}`);
    expect(f1).toBeGreaterThanOrEqual(floor);
  });
});
