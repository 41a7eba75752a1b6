import fs from 'node:fs';
import path from 'node:path';
import type { Sample } from './suffix-corpus';

/**
 * Ordinary words and sentences of other languages for the suffix LM (LM part only), all from packages
 * pinned in package-lock.json so that the artefact is rebuilt identically anywhere:
 * - the TypeScript compiler's translated diagnostic messages (cs, de, es, fr, it, pl, pt-br, tr, …);
 * - zod's translated validation messages (≈ 40 locales: the string literals of zod/v4/locales/*.js);
 * - @faker-js/faker's locale data (names, places, streets, words) for every locale it ships.
 * Together they teach the character model the letter patterns of European languages, so that a
 * Finnish or Polish sentence is not "token soup". The hand-written prose of suffix-eval-texts.ts is the
 * multilingual evaluation and is never trained on.
 */

export function readLocaleMessages(root: string): Sample[] {
  const out: Sample[] = [];
  const lib = path.join(root, 'node_modules', 'typescript', 'lib');
  if (fs.existsSync(lib)) {
    for (const locale of fs.readdirSync(lib).sort()) {
      const file = path.join(lib, locale, 'diagnosticMessages.generated.json');
      if (!fs.existsSync(file)) continue;
      const messages = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>;
      out.push({ text: Object.values(messages).join('\n'), source: `typescript messages ${locale}`, part: 'lm' });
    }
  }
  const zod = path.join(root, 'node_modules', 'zod', 'v4', 'locales');
  if (fs.existsSync(zod)) {
    for (const file of fs.readdirSync(zod).filter((f) => f.endsWith('.js')).sort()) {
      const src = fs.readFileSync(path.join(zod, file), 'utf8');
      const literals = [...src.matchAll(/"((?:[^"\\\n]|\\.){4,})"|`([^`]{4,})`/g)].map((m) => (m[1] ?? m[2] ?? '').replace(/\$\{[^}]*\}/g, 'x'));
      out.push({ text: literals.filter((l) => /\s/.test(l)).join('\n'), source: `zod messages ${file}`, part: 'lm' });
    }
  }
  out.push(...fakerWords());
  return out;
}

function collect(value: unknown, into: string[]): void {
  if (typeof value === 'string') {
    if (!/[{#]/.test(value)) into.push(value);
  } else if (Array.isArray(value)) for (const v of value) collect(v, into);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) collect(v, into);
}

function fakerWords(): Sample[] {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const faker = require('@faker-js/faker') as Record<string, unknown>;
  const out: Sample[] = [];
  for (const locale of Object.keys(faker).filter((k) => /^[a-z]{2,3}(_[A-Z]{2})?$/.test(k)).sort()) {
    const words: string[] = [];
    collect(faker[locale], words);
    // lines of a dozen entries, like a list in a document
    const lines: string[] = [];
    for (let i = 0; i < words.length; i += 12) lines.push(words.slice(i, i + 12).join(', '));
    out.push({ text: lines.join('\n'), source: `faker ${locale}`, part: 'lm' });
  }
  return out;
}
