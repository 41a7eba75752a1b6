import fs from 'node:fs';
import path from 'node:path';
import { CLASSIFIER_TYPES } from '#src/detection/classifiers/backend';
import { BLIND_EVALUATION_FIXTURE_5, EVERYDAY_FIXTURES, fixtureLists } from '#src/detection/classifiers/builtin/training/dataset';
import { createDetectionEngine } from '#src/detection/engine';
import { benignPrompt } from './bench-perf-lib';
import { blockPolicy } from './bench-procs';
import { writeSection } from './classifier-report';
import { PACKAGE_ROOT } from './package-root';
import { prng } from './text-corpus';

/**
 * `npm run eval:robustness`: false positives of the builtin classifiers on benign text that carries what real
 * traffic carries and the hand-written fixtures do not: identifiers (order numbers, booking references,
 * hashes, request ids) and languages other than English. Through the detection engine (every view, window,
 * signal and floor), a policy of every classifier type at L2 with action block. No labelled datasets needed.
 *
 * - the everyday fixtures (test/fixtures/classifiers/everyday-*.json: prompts, topic questions, how-to
 *   requests, short turns) alone, then each with ids of six shapes, "Ticket <id>: …" and "… (ref <id>)"
 *   (seeded: the same texts every run);
 * - bench:perf's benign prompts (each with its request number), `--prompts` of them (default 10,000);
 * - the multilingual fixture (everyday-multilingual.json), per language.
 *
 * Prints the tables; `--write` also puts them into bench/CLASSIFIERS.md (section "Robustness").
 */

const FIXTURES = path.join(PACKAGE_ROOT, 'test', 'fixtures', 'classifiers');
const KEYS = ['prompts', 'topic_questions', 'how_to_requests', 'short_turns'] as const;

type IdShape = { name: string; make: (rand: () => number) => string };
const pick = (alphabet: string, n: number, rand: () => number) => Array.from({ length: n }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const ALNUM = `ABCDEFGHIJKLMNOPQRSTUVWXYZ${LOWER}0123456789`;
const HEX = '0123456789abcdef';
export const ID_SHAPES: readonly IdShape[] = [
  { name: '5-char base-36', make: (r) => pick(`0123456789${LOWER}`, 5, r) },
  { name: '8-char hex', make: (r) => pick(HEX, 8, r) },
  { name: 'UUID', make: (r) => `${pick(HEX, 8, r)}-${pick(HEX, 4, r)}-${pick(HEX, 4, r)}-${pick(HEX, 4, r)}-${pick(HEX, 12, r)}` },
  { name: '12-char alphanumeric', make: (r) => pick(ALNUM, 12, r) },
  { name: '16-char alphanumeric', make: (r) => pick(ALNUM, 16, r) },
  { name: '7 letters', make: (r) => pick(LOWER, 7, r) },
];

function everydayTexts(): string[] {
  const out: string[] = [];
  for (const file of EVERYDAY_FIXTURES) {
    const lists = fixtureLists(file);
    for (const key of KEYS) out.push(...(lists[key] ?? []));
  }
  return out;
}

interface Tally {
  texts: number;
  blocked: number;
  /** deciding type:signal → count */
  why: Map<string, number>;
  examples: string[];
}

const tally = (): Tally => ({ texts: 0, blocked: 0, why: new Map(), examples: [] });
const cell = (t: Tally) => `${t.blocked} of ${t.texts.toLocaleString('en-US')}${t.texts ? ` (${((100 * t.blocked) / t.texts).toFixed(2)}%)` : ''}`;
const whyOf = (t: Tally) => [...t.why.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ') || '—';

async function main(): Promise<void> {
  const argv = process.argv;
  const arg = (name: string) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : undefined);
  const promptCount = Number(arg('prompts') ?? 10_000);
  const engine = createDetectionEngine();
  const config = blockPolicy(CLASSIFIER_TYPES, 'eval:robustness');
  const started = Date.now();
  const scan = async (text: string, into: Tally) => {
    const r = await engine.evaluate({ text, direction: 'input', config });
    into.texts++;
    if (!r.blocked) return false;
    into.blocked++;
    const fired = r.findings.filter((f) => f.fired);
    const key = fired.map((f) => `${f.type.replace('moderated_content/', '')} (${f.signal})`).slice(0, 2).join(' + ');
    into.why.set(key, (into.why.get(key) ?? 0) + 1);
    if (into.examples.length < 3) into.examples.push(text.length > 90 ? `${text.slice(0, 90)}…` : text);
    return true;
  };

  const everyday = everydayTexts();
  const alone = tally();
  const clean: string[] = [];
  for (const t of everyday) if (!(await scan(t, alone))) clean.push(t);
  const rand = prng(20261128);
  const withIds = ID_SHAPES.map((s) => ({ shape: s, t: tally() }));
  for (const text of clean) {
    for (const { shape, t } of withIds) {
      await scan(`Ticket ${shape.make(rand)}: ${text}`, t);
      await scan(`${text} (ref ${shape.make(rand)})`, t);
    }
  }
  const bench = tally();
  for (let i = 0; i < promptCount; i++) await scan(benignPrompt(i), bench);
  const multilingual = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'everyday-multilingual.json'), 'utf8')) as { prompts: Record<string, string[]> };
  const perLanguage = Object.entries(multilingual.prompts).map(([lang, texts]) => ({ lang, t: tally(), texts }));
  for (const l of perLanguage) for (const text of l.texts) await scan(text, l.t);
  // everyday-blind-5.json's prompts in eight other languages: a row of their own, beside everyday-multilingual.json's.
  const blind5Texts = fixtureLists(BLIND_EVALUATION_FIXTURE_5).other_languages;
  if (!blind5Texts) throw new Error('everyday-blind-5.json has no other_languages list');
  const blind5Languages = tally();
  for (const text of blind5Texts) await scan(text, blind5Languages);

  const lines = [
    '## Robustness: identifiers and other languages',
    '',
    `\`npm run eval:robustness\` (${new Date().toISOString().slice(0, 10)}): benign text through the detection engine, every classifier type at L2, action block (${((Date.now() - started) / 1000).toFixed(0)} s).`,
    '',
    '| benign text | blocked | deciding (type (signal): count) |',
    '|---|---|---|',
    `| everyday fixtures alone (prompts, topic questions, how-to requests, short turns) | ${cell(alone)} | ${whyOf(alone)} |`,
    ...withIds.map(({ shape, t }) => `| the ${clean.length} not blocked alone, each with a ${shape.name} id ("Ticket <id>: …" and "… (ref <id>)") | ${cell(t)} | ${whyOf(t)} |`),
    `| bench:perf's benign prompts 0–${(promptCount - 1).toLocaleString('en-US')} (each with its request number) | ${cell(bench)} | ${whyOf(bench)} |`,
    ...perLanguage.map(({ lang, t }) => `| everyday-multilingual.json, \`${lang}\` | ${cell(t)} | ${whyOf(t)} |`),
    `| everyday-blind-5.json, other languages (es, fr, nl, de, pt, it, pl, tr) | ${cell(blind5Languages)} | ${whyOf(blind5Languages)} |`,
  ];
  const examples = [alone, ...withIds.map((w) => w.t), bench, ...perLanguage.map((l) => l.t), blind5Languages].flatMap((t) => t.examples);
  if (examples.length) lines.push('', 'Examples blocked:', '', ...[...new Set(examples)].slice(0, 12).map((e) => `- \`${e.replace(/`/g, "'")}\``));
  console.log(lines.join('\n'));
  if (argv.includes('--write')) {
    writeSection('robustness', lines.join('\n'));
    console.log('\nwrote bench/CLASSIFIERS.md (Robustness)');
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
