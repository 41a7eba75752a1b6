import path from 'node:path';
import { BuiltinModel } from '#src/detection/classifiers/builtin/builtin-model';
import { scoreDocument } from '#src/detection/classifiers/builtin/document-scoring';
import { EVERYDAY_FIXTURES, fixtureLists, loadDatasets, type Row } from '#src/detection/classifiers/builtin/training/dataset';
import { benignGroupOf, type BenignGroup } from '#src/detection/classifiers/builtin/training/families';
import { assignSplits } from '#src/detection/classifiers/builtin/training/split';
import { trainAll } from '#src/detection/classifiers/builtin/training/trainer';
import { HEADS, moderationType, type HeadName } from '#src/detection/classifiers/builtin/taxonomy';
import { THRESHOLD_CUTOFFS } from '#src/detection/decide';
import { cliArg as arg, committedArtefact, datasetsDir, moderationFlagged, writeSection } from './classifier-report';

/**
 * `npm run eval:moderation`: leave-one-source-family-out evaluation of the builtin moderation heads.
 *
 * For each family F of the moderation data (MODERATION_FAMILIES), the moderation heads are trained and
 * calibrated exactly as `npm run train` does but without any row of F (the attack heads are the committed
 * ones), then scored on:
 *   - F's harmful rows: recall at L2, counting a row when one of its own labelled categories reaches L2 and
 *     (looser) when any moderation category does;
 *   - F's own unlabelled rows (tweets annotated "not hateful/offensive"): the share flagged;
 *   - benign prompts never trained on: the held-out split's ordinary and injection-looking prompts, and
 *     every list of the hand-written fixtures (test/fixtures/classifiers/everyday-prompts.json: short turns,
 *     everyday prompts, questions about a harm, how-to requests, other languages; everyday-blind*.json: prompts
 *     and short turns written after the generated training rows; every file of EVERYDAY_FIXTURES), each flagged
 *     when any moderation category reaches L2.
 * The "usual split" line trains on the usual training split and tests the held-out harmful rows of every
 * family. Writes its section into bench/CLASSIFIERS.md.
 *
 *   --folds a,b   only these folds (names as in the table; "usual" for the usual split)
 */

interface ModerationFamily {
  name: string;
  description: string;
  match: RegExp;
}

export const MODERATION_FAMILIES: readonly ModerationFamily[] = [
  { name: 'advbench', description: 'harmful requests ("write a tutorial on how to make a bomb")', match: /^advbench$/ },
  { name: 'harmbench', description: 'harmful behaviours, some with a context document', match: /^harmbench$/ },
  { name: 'donotanswer', description: 'questions an assistant should not answer (risk areas)', match: /^donotanswer$/ },
  { name: 'ailuminate', description: 'MLCommons hazard prompts, English and French', match: /^ailuminate_/ },
  { name: 'davidson', description: 'hate / offensive tweets', match: /^davidson$/ },
  { name: 'tweeteval', description: 'hate and offensive tweets (SemEval)', match: /^tweeteval_/ },
  { name: 'hatexplain', description: 'hate speech from Twitter and Gab', match: /^hatexplain$/ },
  { name: 'stormfront', description: 'white-supremacist forum sentences', match: /^vicomtech_stormfront$/ },
  { name: 'toxigen', description: 'implicit hate vs neutral statements about groups', match: /^toxigen_human$/ },
];

const MODERATION_HEADS = HEADS.filter((h) => h !== 'prompt_attack' && h !== 'jailbreak') as HeadName[];
/**
 * The fixtures' lists, every everyday fixture (EVERYDAY_FIXTURES): everyday-prompts.json's by their names, the blind
 * sets' prefixed by the set ("blind ", "blind-3 ", "blind-4 ", "blind-5 " …).
 */
type Fixture = Record<string, string[]>;

function fixturePrefix(file: string): string {
  const m = /^everyday-(blind(?:-\d+)?)\.json$/.exec(path.basename(file));
  return m ? `${m[1]} ` : '';
}

function loadFixture(): Fixture {
  const lists: [string, string[]][] = [];
  for (const file of EVERYDAY_FIXTURES) {
    for (const [k, v] of Object.entries(fixtureLists(file))) lists.push([`${fixturePrefix(file)}${k}`, v]);
  }
  return Object.fromEntries(lists);
}

interface FoldResult {
  fold: string;
  positives: number;
  /** A row counts when one of its own categories reaches L2. */
  recallOwn: number;
  /** A row counts when any moderation category reaches L2. */
  recallAny: number;
  familyBenign: { rows: number; flagged: number };
  benign: Record<BenignGroup, { rows: number; flagged: number }>;
  fixture: Fixture;
  seconds: number;
}

const L2 = THRESHOLD_CUTOFFS.L2;

function moderationScores(model: BuiltinModel, text: string): Record<string, number> {
  const s = scoreDocument(model, text);
  return Object.fromEntries(Object.entries(s).filter(([t, v]) => t.startsWith('moderated_content/') && typeof v === 'number')) as Record<string, number>;
}

function runFold(name: string, rows: Row[], testRows: readonly Row[], familyBenign: readonly Row[], fixture: Fixture, log: (m: string) => void): FoldResult {
  const started = Date.now();
  const { artefact } = trainAll(rows, () => undefined, MODERATION_HEADS, committedArtefact());
  const model = new BuiltinModel(artefact);
  let own = 0;
  let any = 0;
  for (const r of testRows) {
    const s = moderationScores(model, r.text);
    if (r.labels.some((c) => (s[moderationType(c as never)] ?? 0) >= L2)) own++;
    if (Object.values(s).some((v) => v >= L2)) any++;
  }
  const benign: FoldResult['benign'] = { ordinary: { rows: 0, flagged: 0 }, 'injection-looking': { rows: 0, flagged: 0 } };
  for (const r of rows) {
    if (r.split !== 'heldout') continue;
    const g = benignGroupOf(r);
    if (!g) continue;
    benign[g].rows++;
    if (moderationFlagged(model, r.text)) benign[g].flagged++;
  }
  const fixtureFlags: Fixture = Object.fromEntries(Object.entries(fixture).map(([l, texts]) => [l, texts.filter((t) => moderationFlagged(model, t))]));
  const result: FoldResult = {
    fold: name,
    positives: testRows.length,
    recallOwn: own / Math.max(1, testRows.length),
    recallAny: any / Math.max(1, testRows.length),
    familyBenign: { rows: familyBenign.length, flagged: familyBenign.filter((r) => moderationFlagged(model, r.text)).length },
    benign,
    fixture: fixtureFlags,
    seconds: Math.round((Date.now() - started) / 1000),
  };
  log(
    `${name}: recall@L2 own ${pct(result.recallOwn)} / any ${pct(result.recallAny)} of ${result.positives}; ` +
      `fixture flagged ${Object.entries(fixtureFlags).map(([l, f]) => `${l} ${f.length}`).join(', ')} (${result.seconds} s)`,
  );
  return result;
}

function pct(x: number): string {
  return Number.isNaN(x) ? 'n/a' : `${(100 * x).toFixed(1)}%`;
}

function render(results: readonly FoldResult[], fixture: Fixture, started: string): string {
  const lists = Object.keys(fixture);
  const lines = [
    '## Moderation: leave one source family out',
    '',
    `Generated by \`npm run eval:moderation\` (${started}). Each fold trains and calibrates the moderation heads without any`,
    'row of one source family, then scores that family\'s harmful rows (recall at L2: *own* = one of the row\'s labelled',
    'categories reaches L2, *any* = some moderation category does), its unlabelled rows, the held-out benign prompts and',
    'the hand-written fixtures `test/fixtures/classifiers/everyday-prompts.json` and `everyday-blind.json` (never trained on; a text is flagged when',
    'some moderation category reaches L2; `everyday-blind.json` ("blind") was written after the training rows and never',
    'used to tune them; `everyday-blind-3.json` ("blind-3") was scored once before the everyday-question rows, `everyday-blind-4.json` ("blind-4") once before the writing-help and advice rows and `everyday-blind-5.json` ("blind-5") once before the planning, instruction, safety and other-language rows; none is trained on).',
    'Fixture columns: texts flagged of each list.',
    '',
    `| held out | harmful rows | recall@L2 own | recall@L2 any | family's unlabelled rows flagged | ordinary prompts flagged | injection-looking flagged | ${lists.map((l) => `${l.replace(/_/g, ' ')} (${fixture[l]?.length})`).join(' | ')} |`,
    `|---|---|---|---|---|---|---|${lists.map(() => '---|').join('')}`,
  ];
  const frac = (x: { rows: number; flagged: number }) => (x.rows ? `${pct(x.flagged / x.rows)} (${x.rows})` : '–');
  for (const r of results) {
    lines.push(
      `| ${r.fold} | ${r.positives} | **${pct(r.recallOwn)}** | ${pct(r.recallAny)} | ${frac(r.familyBenign)} | ${frac(r.benign.ordinary)} | ${frac(r.benign['injection-looking'])} | ` +
        lists.map((l) => `${r.fixture[l]?.length}`).join(' | ') +
        ' |',
    );
  }
  const folds = results.filter((r) => r.fold !== 'usual split');
  if (folds.length > 1) {
    const mean = (f: (r: FoldResult) => number) => folds.reduce((a, r) => a + f(r), 0) / folds.length;
    lines.push(`| **mean over families** | | **${pct(mean((r) => r.recallOwn))}** | ${pct(mean((r) => r.recallAny))} | | | |${lists.map(() => ' |').join('')}`);
  }
  const flagged = new Map<string, Set<string>>();
  for (const r of results) for (const t of Object.values(r.fixture).flat()) (flagged.get(t) ?? flagged.set(t, new Set()).get(t)!).add(r.fold);
  lines.push(
    '',
    flagged.size
      ? `Fixture texts flagged at L2 (folds): ${[...flagged].map(([t, f]) => `\`${t}\` (${f.size === results.length ? 'all' : [...f].join(', ')})`).join('; ')}.`
      : 'No fixture text was flagged at L2 in any fold.',
  );
  return lines.join('\n');
}

function main(): void {
  const dataDir = datasetsDir();
  const wanted = arg('folds')?.split(',');
  const t0 = Date.now();
  const log = (m: string) => console.log(`[moderation ${((Date.now() - t0) / 1000).toFixed(0)}s] ${m}`);
  const data = loadDatasets(dataDir);
  assignSplits(data.rows);
  const fixture = loadFixture();
  const results: FoldResult[] = [];
  const harmful = (r: Row) => r.file === 'moderation' && r.labels.length > 0;
  if (!wanted || wanted.includes('usual')) {
    results.push(runFold('usual split', data.rows, data.rows.filter((r) => r.split === 'heldout' && harmful(r)), [], fixture, log));
  }
  for (const family of MODERATION_FAMILIES) {
    if (wanted && !wanted.includes(family.name)) continue;
    const inFamily = (r: Row) => r.file === 'moderation' && family.match.test(r.source);
    const foldRows = data.rows.map((r) => ({ ...r, split: inFamily(r) ? ('heldout' as const) : r.split }));
    const own = foldRows.filter(inFamily);
    results.push(
      runFold(
        family.name,
        foldRows,
        own.filter((r) => r.labels.length > 0),
        own.filter((r) => r.labels.length === 0),
        fixture,
        log,
      ),
    );
  }
  const section = render(results, fixture, new Date().toISOString().slice(0, 10));
  console.log(`\n${section}`);
  if (!wanted) {
    writeSection('moderation-lofo', section);
    console.log('\nwrote the section into bench/CLASSIFIERS.md');
  }
}

main();
