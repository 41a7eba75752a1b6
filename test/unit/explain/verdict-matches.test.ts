import type { DetectFinding } from '../../../src/shared/detection-client';
import { joinFields } from '../../../src/shared/explain/field-layout';
import { CategoryMatches, explainVerdict, MAX_MATCHES_PER_CATEGORY } from '../../../src/shared/explain/verdict-matches';

const finding = (f: Partial<DetectFinding> & Pick<DetectFinding, 'start' | 'end'>): DetectFinding => ({
  type: 'pii/email',
  confidence: 0.9,
  fired: true,
  signal: 'signature:pii/email',
  ...f,
});

describe('explainVerdict', () => {
  const { text, layout } = joinFields([
    { path: 'messages[0].content', text: 'mail a@b.test now' },
    { path: 'messages[1].content', text: 'and c@d.test too' },
  ]);
  const locate = (s: number, e: number) => layout.locate(s, e);
  const second = text.indexOf('c@d.test');

  it('gives each fired category its matches (path, offsets in the field, signal, score); unfired findings explain nothing', () => {
    const categories = explainVerdict(
      {
        categories: [{ type: 'pii/email', confidence: 0.95, action: 'block' }],
        findings: [
          finding({ start: 5, end: 11, confidence: 0.9 }),
          finding({ start: second, end: second + 8, confidence: 0.95 }),
          finding({ type: 'pii/phone', start: 0, end: 4, fired: false }),
        ],
      },
      locate,
    );
    expect(categories).toEqual([
      {
        type: 'pii/email',
        confidence: 0.95,
        action: 'block',
        matches: [
          { path: 'messages[1].content', start: 4, end: 12, signal: 'signature:pii/email', score: 0.95 },
          { path: 'messages[0].content', start: 5, end: 11, signal: 'signature:pii/email', score: 0.9 },
        ],
      },
    ]);
  });

  it(`keeps at most ${MAX_MATCHES_PER_CATEGORY} matches per category, the highest scores`, () => {
    const many = Array.from({ length: 500 }, (_, i) => finding({ start: i, end: i + 1, confidence: (i % 100) / 100 }));
    const [cat] = explainVerdict({ categories: [{ type: 'pii/email', confidence: 0.99, action: 'log' }], findings: many }, (s, e) => [
      { path: 'content', start: s, end: e },
    ]);
    expect(cat!.matches).toHaveLength(MAX_MATCHES_PER_CATEGORY);
    expect(cat!.matches.every((m) => m.score >= 0.95)).toBe(true);
    const scores = cat!.matches.map((m) => m.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('folds a second stage in with the bound kept (CategoryMatches)', () => {
    const input = Array.from({ length: 15 }, (_, i) => ({ path: 'messages[0].content', start: i, end: i + 1, signal: 'deny_list', score: 0.5 }));
    const output = Array.from({ length: 15 }, (_, i) => ({ path: 'choices[0].message.content', start: i, end: i + 1, signal: 'deny_list', score: 1 }));
    const merged = new CategoryMatches().addMatches('deny_list', input).addMatches('deny_list', output).of('deny_list');
    expect(merged).toHaveLength(MAX_MATCHES_PER_CATEGORY);
    expect(merged.filter((m) => m.path === 'choices[0].message.content')).toHaveLength(15);
  });
});
