import path from 'node:path';
import { isValidIBAN } from 'ibantools';
import { generatedDocs, handwrittenDocs, PII_TYPES, type DrawStats } from '../../../src/tools/eval-pii-corpus';

const ROOT = path.resolve(__dirname, '..', '..', '..');

describe('eval:pii corpus', () => {
  const stats = (): DrawStats => ({ drawn: {}, invalid: {} });

  it('is deterministic for a seed and different for another', () => {
    const a = generatedDocs(15, 1, stats());
    const b = generatedDocs(15, 1, stats());
    const c = generatedDocs(16, 1, stats());
    expect(b).toEqual(a);
    expect(c.map((d) => d.text)).not.toEqual(a.map((d) => d.text));
  });

  it('covers the eight locales, every PII type, and negatives; gold spans hold what they claim', () => {
    const docs = generatedDocs(15, 2, stats());
    expect(new Set(docs.map((d) => d.locale))).toEqual(new Set(['en_US', 'en_GB', 'de', 'fr', 'es', 'it', 'nl', 'ja']));
    const types = new Set(docs.flatMap((d) => d.gold.map((g) => g.type)));
    expect([...types].sort()).toEqual([...PII_TYPES].sort());
    expect(docs.filter((d) => d.gold.length === 0).length).toBeGreaterThan(50);
    for (const d of docs) {
      for (const g of d.gold) {
        const value = d.text.slice(g.start, g.end);
        expect(value.length).toBeGreaterThan(0);
        if (g.type === 'email') expect(value).toContain('@');
        if (g.type === 'iban') expect(isValidIBAN(value.replace(/ /g, ''))).toBe(true);
        if (g.type === 'ssn') expect(value).toMatch(/^\d{3}-\d{2}-\d{4}$/);
      }
    }
  });

  it('loads the hand-written texts: 50+, several languages, every type, negatives', () => {
    const docs = handwrittenDocs(ROOT);
    expect(docs.length).toBeGreaterThanOrEqual(50);
    expect(new Set(docs.map((d) => d.locale)).size).toBeGreaterThanOrEqual(7);
    expect(new Set(docs.flatMap((d) => d.gold.map((g) => g.type)))).toEqual(new Set(PII_TYPES));
    expect(docs.filter((d) => d.gold.length === 0).length).toBeGreaterThanOrEqual(10);
    const mobile = docs.find((d) => d.id === 'hw-fr-01');
    const phone = mobile?.gold.find((g) => g.type === 'phone');
    expect(phone && mobile?.text.slice(phone.start, phone.end)).toBe('06 12 34 56 78');
  });
});
