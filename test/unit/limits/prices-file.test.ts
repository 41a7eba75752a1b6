import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../../src/shared/config';
import { loadPriceTable, SHIPPED_PRICES } from '../../../src/gateway/limits/prices';
import shipped from '../../../src/gateway/limits/prices.json';

/** PRICES_FILE: an operator's JSON on top of the shipped table (src/gateway/limits/prices.json). */
describe('loadPriceTable', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'prices-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const file = (body: unknown): string => {
    const path = join(dir, 'prices.json');
    writeFileSync(path, typeof body === 'string' ? body : JSON.stringify(body));
    return path;
  };
  const problems = (fn: () => unknown): string[] => {
    try {
      fn();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).problems;
    }
    throw new Error('expected a ConfigError');
  };

  it('is the shipped table without a file, dated by its checked field', () => {
    expect(loadPriceTable(undefined)).toBe(SHIPPED_PRICES);
    expect(SHIPPED_PRICES.checked).toBe(shipped.checked);
    expect(Object.keys(SHIPPED_PRICES.models)).toHaveLength(Object.keys(shipped.models).length);
  });

  it('adds models, replaces prices and the default, keeps the rest', () => {
    const table = loadPriceTable(
      file({
        checked: '2026-11-27',
        default: { input_per_million: 50, output_per_million: 100 },
        models: { 'gpt-4o': { input_per_million: 2, output_per_million: 8 }, 'acme-llm': { input_per_million: 0.5, output_per_million: 1 } },
      }),
    );
    expect(table.priceOf('gpt-4o-2024-08-06')).toEqual({ inputPerMillion: 2, outputPerMillion: 8 });
    expect(table.priceOf('gpt-4o-mini')).toEqual({ inputPerMillion: 0.15, outputPerMillion: 0.6 }); // longer shipped prefix
    expect(table.priceOf('acme-llm-7b')).toEqual({ inputPerMillion: 0.5, outputPerMillion: 1 });
    expect(table.priceOf('unknown')).toEqual({ inputPerMillion: 50, outputPerMillion: 100 });
    expect(table.checked).toBe('2026-11-27');
    expect(SHIPPED_PRICES.priceOf('acme-llm')).toEqual(SHIPPED_PRICES.defaultPrice);
  });

  it('names the file and the field of a bad price', () => {
    const path = file({ models: { 'gpt-4o': { input_per_million: '2', output_per_million: -1 } } });
    const p = problems(() => loadPriceTable(path));
    expect(p).toEqual([
      expect.stringMatching(new RegExp(`^PRICES_FILE ${path}: models\\.gpt-4o\\.input_per_million: must be a number`)),
      expect.stringMatching(new RegExp(`^PRICES_FILE ${path}: models\\.gpt-4o\\.output_per_million: must be 0 or more`)),
    ]);
  });

  it('rejects unknown fields (a typo would otherwise be ignored)', () => {
    expect(problems(() => loadPriceTable(file({ model: {} })))[0]).toMatch(/PRICES_FILE .*model/);
  });

  it('rejects a missing file and a file that is not JSON', () => {
    expect(problems(() => loadPriceTable(join(dir, 'none.json')))).toEqual([`PRICES_FILE: cannot read ${join(dir, 'none.json')} (ENOENT)`]);
    expect(problems(() => loadPriceTable(file('{ not json')))[0]).toMatch(/^PRICES_FILE: .* is not valid JSON/);
  });
});
