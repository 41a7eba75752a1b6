import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { configSchema } from '../../../src/shared/config';

/**
 * .env.example is the list of settings a new operator reads: every variable of src/shared/config.ts is
 * in it (commented out with its default, or empty), with a comment line above saying what it does, and
 * nothing else is. docs/configuration.md names every one too.
 */
const ROOT = resolve(__dirname, '..', '..', '..');
const example = readFileSync(join(ROOT, '.env.example'), 'utf8');
const docs = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');
const settings = Object.keys(configSchema.shape);

describe('.env.example', () => {
  const lines = example.split('\n');
  const listed = lines.map((l) => /^#? ?([A-Z][A-Z0-9_]*)=/.exec(l)?.[1]).filter((k): k is string => k !== undefined);

  it('lists every setting of config.ts, once, and no other', () => {
    expect([...listed].sort()).toEqual([...settings].sort());
  });

  it('explains each setting in a comment above it', () => {
    for (const key of listed) {
      const i = lines.findIndex((l) => new RegExp(`^#? ?${key}=`).test(l));
      const above = lines.slice(0, i).reverse().find((l) => !/^#? ?[A-Z][A-Z0-9_]*=/.test(l));
      expect({ key, above: above?.startsWith('# ') && above.length > 10 }).toEqual({ key, above: true });
    }
  });

  it('shows the defaults config.ts applies', () => {
    const defaults = configSchema.parse({});
    for (const line of lines) {
      const m = /^# ([A-Z][A-Z0-9_]*)=(.+)$/.exec(line);
      if (!m || m[1] === 'CLASSIFIER_WORKERS') continue; // depends on the machine's cores
      expect({ key: m[1], value: m[2] }).toEqual({ key: m[1], value: String((defaults as Record<string, unknown>)[m[1]!]) });
    }
  });

  it('every setting is in docs/configuration.md', () => {
    expect(settings.filter((k) => !docs.includes(k))).toEqual([]);
  });
});
