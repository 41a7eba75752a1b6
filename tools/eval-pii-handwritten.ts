import fs from 'node:fs';
import path from 'node:path';

/**
 * The hand-written half of the eval:pii set (test/fixtures/pii-eval/handwritten.jsonl) and the types both
 * halves share. No faker here: this module loads in Jest, which cannot require faker 10 (ES module only).
 */

export const PII_TYPES = ['email', 'phone', 'card', 'iban', 'ssn', 'ip', 'name', 'address'] as const;
export type PiiType = (typeof PII_TYPES)[number];

export interface GoldSpan {
  type: PiiType;
  start: number;
  end: number;
}

export interface EvalDoc {
  id: string;
  locale: string;
  source: 'generated' | 'handwritten';
  text: string;
  gold: GoldSpan[];
}

interface HandwrittenLine {
  id: string;
  lang: string;
  text: string;
  pii: Array<[PiiType, string]>;
}

/** The hand-written texts; a gold value is found in the text in order (repeats take the next occurrence). */
export function handwrittenDocs(root: string): EvalDoc[] {
  const file = path.join(root, 'test', 'fixtures', 'pii-eval', 'handwritten.jsonl');
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line) => {
      const h = JSON.parse(line) as HandwrittenLine;
      const from = new Map<string, number>();
      const gold = h.pii.map(([type, value]) => {
        const start = h.text.indexOf(value, from.get(value) ?? 0);
        if (start < 0) throw new Error(`${h.id}: "${type}" value not in the text`);
        from.set(value, start + value.length);
        return { type, start, end: start + value.length };
      });
      return { id: h.id, locale: h.lang, source: 'handwritten' as const, text: h.text, gold };
    });
}
