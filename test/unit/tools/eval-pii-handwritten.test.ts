import path from 'node:path';
import { handwrittenDocs, PII_TYPES } from '../../../tools/eval-pii-handwritten';

const ROOT = path.resolve(__dirname, '..', '..', '..');

/**
 * The hand-written half of the eval:pii set. (The generated half needs faker 10, an ES module Jest cannot
 * require; `npm run eval:pii` runs it and checks every gold value as it draws it.)
 */
describe('eval:pii hand-written set', () => {
  it('loads the hand-written texts: 50+, several languages, every type, negatives', () => {
    const docs = handwrittenDocs(ROOT);
    expect(docs.length).toBeGreaterThanOrEqual(50);
    expect(new Set(docs.map((d) => d.locale)).size).toBeGreaterThanOrEqual(7);
    expect(new Set(docs.flatMap((d) => d.gold.map((g) => g.type)))).toEqual(new Set(PII_TYPES));
    expect(docs.filter((d) => d.gold.length === 0).length).toBeGreaterThanOrEqual(10);
    for (const d of docs) for (const g of d.gold) expect(g.end).toBeGreaterThan(g.start);
    const mobile = docs.find((d) => d.id === 'hw-fr-01');
    const phone = mobile?.gold.find((g) => g.type === 'phone');
    expect(phone && mobile?.text.slice(phone.start, phone.end)).toBe('06 12 34 56 78');
  });
});
