import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Detector } from '../../../src/detection/detector';
import { UnknownLinksDetector } from '../../../src/detection/detectors/links/unknown-links-detector';
import { AddressDetector } from '../../../src/detection/detectors/pii/address-detector';
import { PersonNameDetector } from '../../../src/detection/detectors/pii/person-name-detector';
import { CredentialDetector } from '../../../src/detection/detectors/secrets/credential-detector';

/**
 * The labeled corpora of the contextual detectors (test/fixtures/detection/<slug>.jsonl), each run
 * through its detector alone at L2 (a case fires when any finding reaches 0.75). Label 1 = the text holds
 * the entity and must fire at L2; label 0 = it must not. The F1 floors are the targets.
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
  { slug: 'address', type: 'pii/address', detector: new AddressDetector(), floor: 0.85 },
  { slug: 'person_name', type: 'pii/name', detector: new PersonNameDetector(), floor: 0.85 },
  { slug: 'unknown_links', type: 'unknown_links', detector: new UnknownLinksDetector(), floor: 0.95 },
  { slug: 'credential', type: 'secrets/credential', detector: new CredentialDetector(), floor: 0.95 },
];

function load(slug: string): Case[] {
  return readFileSync(join(FIXTURES, `${slug}.jsonl`), 'utf8')
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as Case);
}

async function fires(detector: Detector, text: string): Promise<boolean> {
  const findings = await detector.detect({ text, direction: 'input' }, new AbortController().signal);
  return findings.some((f) => f.confidence >= L2);
}

describe.each(SUITES)('labeled corpus $slug', ({ slug, type, detector, floor }) => {
  const cases = load(slug);

  it('has at least 100 well-formed cases with both labels and unique ids', () => {
    expect(cases.length).toBeGreaterThanOrEqual(100);
    expect(new Set(cases.map((c) => c.id)).size).toBe(cases.length);
    for (const c of cases) {
      expect(Object.keys(c).sort()).toEqual(['detector', 'id', 'label', 'note', 'text']);
      expect(c.detector).toBe(type);
      expect([0, 1]).toContain(c.label);
    }
    const positives = cases.filter((c) => c.label === 1).length;
    expect(positives).toBeGreaterThanOrEqual(40);
    expect(cases.length - positives).toBeGreaterThanOrEqual(40);
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
      if (fired !== (c.label === 1)) misses.push(`${c.id} (${fired ? 'false positive' : 'false negative'}): ${c.note}`);
    }
    const precision = tp / Math.max(1, tp + fp);
    const recall = tp / Math.max(1, tp + fn);
    const f1 = (2 * precision * recall) / Math.max(1e-9, precision + recall);
    if (f1 < floor) throw new Error(`F1 ${f1.toFixed(3)} < ${floor} for ${slug}; misses:\n${misses.join('\n')}`);
    expect(f1).toBeGreaterThanOrEqual(floor);
  });
});
