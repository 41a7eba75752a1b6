import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { isModerationCategory, type ModerationCategory } from '../taxonomy';
import { syntheticRows } from './synthetic';

/**
 * The labelled training data (`--data <dir>` / DATASETS_DIR of the tools; see the datasets' README): reading, hashing and the deterministic split.
 * Nothing here is used at inference time.
 */

export const INJECTION_FILE = 'injection/train.jsonl';
export const MODERATION_FILE = 'moderation/train.jsonl';

export type Split = 'train' | 'calibration' | 'heldout';

export interface Row {
  readonly file: 'injection' | 'moderation';
  readonly text: string;
  readonly source: string;
  /** injection: 'attack' or nothing; moderation: the categories. */
  readonly labels: readonly string[];
  /** SHA-256 of the README normalisation of the text. */
  readonly key: string;
  split: Split;
}

const injectionRow = z.object({ text: z.string(), label: z.union([z.literal(0), z.literal(1)]), source: z.string() });
const moderationRow = z.object({ text: z.string(), labels: z.array(z.string()), source: z.string() });

export interface LoadedData {
  rows: Row[];
  files: Array<{ file: string; sha256: string; rows: number; bytes: number }>;
}

export function loadDatasets(dataDir: string): LoadedData {
  const files: LoadedData['files'] = [];
  const rows: Row[] = [];
  for (const name of [INJECTION_FILE, MODERATION_FILE]) {
    const raw = readFileSync(path.join(dataDir, name));
    const lines = raw.toString('utf8').split('\n').filter((l) => l.trim() !== '');
    files.push({ file: name, sha256: sha256(raw), rows: lines.length, bytes: raw.length });
    for (const line of lines) rows.push(parseRow(name, JSON.parse(line) as unknown));
  }
  // Generated rows (synthetic.ts), derived from the rows above: framed benign requests, short turns, topic
  // questions; none that repeats a text of the evaluation's hand-written fixture.
  rows.push(...syntheticRows(rows, evaluationFixtureKeys()));
  return { rows, files };
}

function parseRow(name: string, value: unknown): Row {
  if (name === INJECTION_FILE) {
    const r = injectionRow.parse(value);
    return { file: 'injection', text: r.text, source: r.source, labels: r.label === 1 ? ['attack'] : [], key: textKey(r.text), split: 'train' };
  }
  const r = moderationRow.parse(value);
  const labels = r.labels.filter((l): l is ModerationCategory => isModerationCategory(l));
  if (labels.length !== r.labels.length) throw new Error(`unknown moderation label in ${JSON.stringify(r.labels)}`);
  return { file: 'moderation', text: r.text, source: r.source, labels, key: textKey(r.text), split: 'train' };
}

/**
 * The hand-written everyday prompts, short turns, topic questions, how-to requests and other-language prompts
 * that the evaluation scores as never trained on (test/fixtures/classifiers/everyday-prompts.json, and
 * everyday-blind.json, written after the generated everyday requests and never used to tune them): the
 * generated rows must not repeat them ("hi :)" normalises to the fixture's "hi"). The same depth below the
 * package root in src/ and dist/.
 */
export const EVALUATION_FIXTURE = path.join(__dirname, '..', '..', '..', '..', '..', 'test', 'fixtures', 'classifiers', 'everyday-prompts.json');
export const BLIND_EVALUATION_FIXTURE = path.join(path.dirname(EVALUATION_FIXTURE), 'everyday-blind.json');
/** A third set (2026-11-27), scored once before the everyday-question rows were generated; never trained on. */
export const BLIND_EVALUATION_FIXTURE_3 = path.join(path.dirname(EVALUATION_FIXTURE), 'everyday-blind-3.json');
/** A fourth set (2026-11-28), scored once before the writing-help and advice rows were generated; never trained on. */
export const BLIND_EVALUATION_FIXTURE_4 = path.join(path.dirname(EVALUATION_FIXTURE), 'everyday-blind-4.json');
/** A fifth set (2026-11-29), scored once before the planning, instruction, safety and other-language rows were generated; never trained on. */
export const BLIND_EVALUATION_FIXTURE_5 = path.join(path.dirname(EVALUATION_FIXTURE), 'everyday-blind-5.json');

/** Every everyday fixture (hand-written benign prompts, never trained on), in the order they were written. */
export const EVERYDAY_FIXTURES: readonly string[] = [EVALUATION_FIXTURE, BLIND_EVALUATION_FIXTURE, BLIND_EVALUATION_FIXTURE_3, BLIND_EVALUATION_FIXTURE_4, BLIND_EVALUATION_FIXTURE_5];

const fixtureFile = z.object({ description: z.string() }).catchall(z.array(z.string()));

/** Every list of a fixture file (all keys but `description`). */
export function fixtureLists(file: string): Record<string, string[]> {
  const { description: _description, ...lists } = fixtureFile.parse(JSON.parse(readFileSync(file, 'utf8')));
  return lists as Record<string, string[]>;
}

export function evaluationFixtureKeys(files: readonly string[] = EVERYDAY_FIXTURES): Set<string> {
  return new Set(files.flatMap((f) => Object.values(fixtureLists(f)).flat()).map(textKey));
}

export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The README's normalisation: NFKC, lower case, punctuation and symbols → space, whitespace collapsed. */
export function readmeNormalize(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\p{P}\p{S}]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export function textKey(text: string): string {
  return sha256(readmeNormalize(text));
}

/** A number in [0, 1) from 8 hex digits of a hash, salted so independent draws do not correlate. */
export function unitFromKey(key: string, salt: string): number {
  const h = sha256(`${salt}:${key}`);
  return parseInt(h.slice(0, 8), 16) / 2 ** 32;
}
