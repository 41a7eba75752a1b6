import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Detector } from '../../../src/detection/detector';

/**
 * The labeled corpora of the signature detectors (test/fixtures/detection/<slug>.jsonl), each run through
 * its detector alone at L2 (a case fires when any finding reaches 0.75). Label 1 = the text holds the
 * entity and must fire at L2; label 0 = it must not. The F1 floors are the targets.
 */

interface Case {
  id: string;
  detector: string;
  text: string;
  label: 0 | 1;
  note: string;
}

export interface CorpusSuite {
  slug: string;
  type: string;
  detector: Detector;
  floor: number;
}

export interface CorpusOptions {
  /** Fewest cases each label must have. */
  minPerLabel: number;
  /** NFKC-normalise texts first, as the engine does before any detector (full-width evasions). */
  nfkc: boolean;
}

const L2 = 0.75;
const FIXTURES = join(__dirname, '../../fixtures/detection');

function load(slug: string): Case[] {
  return readFileSync(join(FIXTURES, `${slug}.jsonl`), 'utf8')
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as Case);
}

export function describeLabeledCorpora(suites: readonly CorpusSuite[], options: CorpusOptions): void {
  const fires = async (detector: Detector, text: string): Promise<boolean> => {
    const input = { text: options.nfkc ? text.normalize('NFKC') : text, direction: 'input' as const };
    const findings = await detector.detect(input, new AbortController().signal);
    return findings.some((f) => f.confidence >= L2);
  };

  describe.each(suites)('labeled corpus $slug', ({ slug, type, detector, floor }) => {
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
      expect(cases.filter((c) => c.label === 1).length).toBeGreaterThanOrEqual(options.minPerLabel);
      expect(cases.filter((c) => c.label === 0).length).toBeGreaterThanOrEqual(options.minPerLabel);
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
      const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
      if (f1 < floor) throw new Error(`${slug}: F1 ${f1.toFixed(3)} < ${floor}; misclassified:\n${misses.join('\n')}`);
      expect(f1).toBeGreaterThanOrEqual(floor);
    });
  });
}
