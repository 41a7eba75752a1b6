import fs from 'node:fs';
import path from 'node:path';
import { BuiltinModel } from '#src/detection/classifiers/builtin/builtin-model';
import { scoreDocument } from '#src/detection/classifiers/builtin/document-scoring';
import { EVALUATION_FIXTURE, loadDatasets, type Row } from '#src/detection/classifiers/builtin/training/dataset';
import { benignGroupOf, familyOf, SOURCE_FAMILIES, type BenignGroup } from '#src/detection/classifiers/builtin/training/families';
import { assignSplits } from '#src/detection/classifiers/builtin/training/split';
import { ATTACK_HEADS } from '#src/detection/classifiers/builtin/builtin-model';
import { trainAll } from '#src/detection/classifiers/builtin/training/trainer';
import { heldoutHarmfulRequests, heldoutWrapped } from '#src/detection/classifiers/builtin/training/synthetic';
import { generateSuffix, SUFFIX_STYLES, withSuffix } from './suffix-generator';
import { THRESHOLD_CUTOFFS } from '#src/detection/decide';
import type { Threshold } from '#src/shared/policy';
import { cliArg as arg, committedArtefact, datasetsDir, moderationFlagged, writeSection } from './classifier-report';
import { prng } from './text-corpus';

/**
 * `npm run eval:lofo`: leave-one-source-family-out evaluation of the builtin attack heads (prompt_attack +
 * jailbreak, the policy the issue measures: a text is flagged when either reaches the level's cut-off).
 *
 * For each family F (families.ts): train and calibrate prompt_attack and jailbreak exactly as `npm run
 * train` does, but without any row of F; then report the recall of F's attacks at L1–L4, and false
 * positives on benign texts never trained on (the usual held-out split's benign rows, F's benign rows,
 * and the hand-written everyday prompts of test/fixtures/classifiers/everyday-prompts.json), in two groups:
 * ordinary and injection-looking (families.ts). The "usual split" line trains on the usual training split
 * and reports the held-out attacks of every family. Writes the section into bench/CLASSIFIERS.md.
 *
 *   --folds a,b   only these families (names as in the table)
 */

const LEVELS: readonly Threshold[] = ['L1', 'L2', 'L3', 'L4'];

interface Everyday {
  short_turns: string[];
  prompts: string[];
  topic_questions: string[];
}

interface FoldResult {
  fold: string;
  attacks: number;
  recall: Record<Threshold, number>;
  byFamily?: Array<{ family: string; attacks: number; recallL2: number }>;
  fpr: Record<BenignGroup, { rows: number } & Record<Threshold, number>>;
  shortFlagged: Record<'L1' | 'L2', string[]>;
  /** Held-out harmful requests (HarmBench, Do-Not-Answer) in held-out framings (synthetic.ts): recall per level. */
  wrapped?: { rows: number } & Record<Threshold, number>;
  /** Usual split only: the same held-out requests with a generated token-soup suffix (every style), recall per level. */
  soup?: { rows: number } & Record<Threshold, number>;
  /** Usual split only: ordinary prompts and topic questions on which some moderation category reaches L2. */
  moderation?: { ordinaryRows: number; ordinaryFlagged: number; everydayFlagged: string[]; topicFlagged: string[] };
  seconds: number;
}


function attackScore(model: BuiltinModel, text: string): number {
  const s = scoreDocument(model, text);
  return Math.max(s.prompt_attack, s.jailbreak);
}

function rate(scores: readonly number[], level: Threshold): number {
  if (scores.length === 0) return NaN;
  return scores.filter((s) => s >= THRESHOLD_CUTOFFS[level]).length / scores.length;
}

function perLevel(scores: readonly number[]): Record<Threshold, number> {
  return Object.fromEntries(LEVELS.map((l) => [l, rate(scores, l)])) as Record<Threshold, number>;
}

/** Trains the attack heads on `rows` (their split decides), then scores what was never trained on. */
interface Extra {
  wrapped: readonly string[];
  soup: readonly string[];
}

function runFold(name: string, rows: Row[], testAttacks: Row[], everyday: Everyday, log: (m: string) => void, extra?: Extra): FoldResult {
  const started = Date.now();
  // The committed model's moderation heads (trained on the usual split) serve the stacking signal in every fold.
  const { artefact } = trainAll(rows, () => undefined, ATTACK_HEADS, committedArtefact());
  const model = new BuiltinModel(artefact);
  const attackScores = testAttacks.map((r) => attackScore(model, r.text));
  const benign: Record<BenignGroup, number[]> = { ordinary: [], 'injection-looking': [] };
  for (const r of rows) {
    if (r.split !== 'heldout') continue;
    const group = benignGroupOf(r);
    if (group) benign[group].push(attackScore(model, r.text));
  }
  for (const p of everyday.prompts) benign.ordinary.push(attackScore(model, p));
  const shortScores = everyday.short_turns.map((t) => ({ t, s: attackScore(model, t) }));
  const fpr = {} as FoldResult['fpr'];
  for (const g of Object.keys(benign) as BenignGroup[]) fpr[g] = { rows: benign[g].length, ...perLevel(benign[g]) };
  const byFamily = name === 'usual split' ? familyRecall(testAttacks, attackScores) : undefined;
  const result: FoldResult = {
    fold: name,
    attacks: testAttacks.length,
    recall: perLevel(attackScores),
    byFamily,
    fpr,
    shortFlagged: {
      L1: shortScores.filter((x) => x.s >= THRESHOLD_CUTOFFS.L1).map((x) => x.t),
      L2: shortScores.filter((x) => x.s >= THRESHOLD_CUTOFFS.L2).map((x) => x.t),
    },
    moderation: extra ? moderationCheck(model, rows, everyday) : undefined,
    wrapped: extra ? { rows: extra.wrapped.length, ...perLevel(extra.wrapped.map((t) => attackScore(model, t))) } : undefined,
    soup: extra ? { rows: extra.soup.length, ...perLevel(extra.soup.map((t) => attackScore(model, t))) } : undefined,
    seconds: Math.round((Date.now() - started) / 1000),
  };
  log(`${name}: recall@L2 ${pct(result.recall.L2)} of ${result.attacks}${result.wrapped ? `, wrapped ${pct(result.wrapped.L2)}` : ''}${result.soup ? `, soup ${pct(result.soup.L2)}` : ''}; short L2 ${result.shortFlagged.L2.length}; FPR@L2 ordinary ${pct(fpr.ordinary.L2)}, injection-looking ${pct(fpr['injection-looking'].L2)} (${result.seconds} s)`);
  return result;
}

function moderationCheck(model: BuiltinModel, rows: readonly Row[], everyday: Everyday): NonNullable<FoldResult['moderation']> {
  const ordinary = rows.filter((r) => r.split === 'heldout' && benignGroupOf(r) === 'ordinary');
  return {
    ordinaryRows: ordinary.length + everyday.prompts.length,
    ordinaryFlagged: ordinary.filter((r) => moderationFlagged(model, r.text)).length + everyday.prompts.filter((p) => moderationFlagged(model, p)).length,
    everydayFlagged: everyday.prompts.filter((p) => moderationFlagged(model, p)),
    topicFlagged: everyday.topic_questions.filter((q) => moderationFlagged(model, q)),
  };
}

function familyRecall(attacks: readonly Row[], scores: readonly number[]) {
  const out = new Map<string, { attacks: number; fired: number }>();
  attacks.forEach((r, i) => {
    const f = familyOf(r.source) ?? r.source;
    const e = out.get(f) ?? out.set(f, { attacks: 0, fired: 0 }).get(f)!;
    e.attacks++;
    if ((scores[i] as number) >= THRESHOLD_CUTOFFS.L2) e.fired++;
  });
  return [...out].map(([family, e]) => ({ family, attacks: e.attacks, recallL2: e.fired / e.attacks }));
}

function pct(x: number): string {
  return Number.isNaN(x) ? 'n/a' : `${(100 * x).toFixed(1)}%`;
}

function render(results: readonly FoldResult[], started: string): string {
  const lines = [
    '## Leave one source family out',
    '',
    'Generated by `npm run eval:lofo` (' + started + '). Policy: prompt_attack + jailbreak, a text is flagged when either',
    'reaches the level. Each fold trains and calibrates both heads without any row of one source family, then',
    'scores that family\'s attacks (recall) and benign texts never trained on (the usual held-out split\'s benign rows,',
    'the family\'s own benign rows, and the hand-written everyday prompts of',
    '`test/fixtures/classifiers/everyday-prompts.json`): *ordinary* = GSM8K, GPTeacher, awesome prompts, deepset',
    'benign, everyday prompts; *injection-looking* = WildGuard benign, CyberSecEval system prompts and false-refusal',
    'prompts, Tensor Trust defenses, BIPIA and InjecAgent contexts. Target: recall ≥ 80% at L2 with ≤ 1% FPR in each group.',
    '',
    '| held out | attacks | recall L1 | recall L2 | recall L3 | recall L4 | ordinary FPR L1 / L2 / L3 | injection-looking FPR L1 / L2 / L3 | short turns flagged L1 / L2 |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const f = (g: BenignGroup) => `${pct(r.fpr[g].L1)} / ${pct(r.fpr[g].L2)} / ${pct(r.fpr[g].L3)} (${r.fpr[g].rows})`;
    lines.push(
      `| ${r.fold} | ${r.attacks} | ${pct(r.recall.L1)} | **${pct(r.recall.L2)}** | ${pct(r.recall.L3)} | ${pct(r.recall.L4)} | ${f('ordinary')} | ${f('injection-looking')} | ${r.shortFlagged.L1.length} / ${r.shortFlagged.L2.length} |`,
    );
  }
  const folds = results.filter((r) => r.fold !== 'usual split');
  if (folds.length > 1) {
    const macro = (l: Threshold) => folds.reduce((a, r) => a + r.recall[l], 0) / folds.length;
    lines.push(`| **mean over families** | | ${pct(macro('L1'))} | **${pct(macro('L2'))}** | ${pct(macro('L3'))} | ${pct(macro('L4'))} | | | |`);
  }
  const usual = results.find((r) => r.fold === 'usual split');
  if (usual?.byFamily) {
    lines.push('', 'The usual split (trained on every family, tested on held-out rows) by family, for comparison:', '', '| family | held-out attacks | recall@L2 |', '|---|---|---|');
    for (const f of usual.byFamily) lines.push(`| ${f.family} | ${f.attacks} | ${pct(f.recallL2)} |`);
  }
  if (usual?.wrapped) {
    const w = usual.wrapped;
    lines.push('', `Wrapped harmful requests (${w.rows} HarmBench / Do-Not-Answer requests in 8 framings used by no training row; target ≥ 70% at L2): L1 ${pct(w.L1)}, **L2 ${pct(w.L2)}**, L3 ${pct(w.L3)}, L4 ${pct(w.L4)}.`);
  }
  if (usual?.soup) {
    const w = usual.soup;
    lines.push(`Token-soup suffixes (the same ${w.rows} held-out requests, each with a generated GCG-style suffix, six styles; target ≥ 90% at L2): L1 ${pct(w.L1)}, **L2 ${pct(w.L2)}**, L3 ${pct(w.L3)}, L4 ${pct(w.L4)}.`);
  }
  if (usual?.moderation) {
    const m = usual.moderation;
    lines.push(
      '',
      `Moderation on ordinary prompts (held-out ordinary rows + the hand-written everyday prompts): ${m.ordinaryFlagged} of ${m.ordinaryRows} (${pct(m.ordinaryFlagged / m.ordinaryRows)}) flagged by some moderation category at L2 (target ≤ 1%)` +
        (m.everydayFlagged.length ? `; everyday prompts flagged: ${m.everydayFlagged.map((t) => `\`${t}\``).join(', ')}.` : '; no everyday prompt flagged.'),
      m.topicFlagged.length ? `Questions about a sensitive topic flagged at L2: ${m.topicFlagged.map((t) => `\`${t}\``).join(', ')}.` : 'No question about a sensitive topic (fixture `topic_questions`) was flagged at L2.',
    );
  }
  const flagged = [...new Set(results.flatMap((r) => r.shortFlagged.L2))];
  lines.push('', flagged.length ? `Short turns flagged at L2 in some fold: ${flagged.map((t) => `\`${t}\``).join(', ')}.` : 'No short everyday turn was flagged at L2 in any fold.');
  return lines.join('\n');
}

function main(): void {
  const dataDir = datasetsDir();
  const wanted = arg('folds')?.split(',');
  const t0 = Date.now();
  const log = (m: string) => console.log(`[lofo ${((Date.now() - t0) / 1000).toFixed(0)}s] ${m}`);
  const data = loadDatasets(dataDir);
  assignSplits(data.rows);
  const rows = data.rows.filter((r) => r.file === 'injection');
  const everyday = JSON.parse(fs.readFileSync(EVALUATION_FIXTURE, 'utf8')) as Everyday;
  const results: FoldResult[] = [];
  if (!wanted || wanted.includes('usual')) {
    const wrapped = heldoutWrapped(data.rows).map((w) => w.text);
    const rand = prng(20261125);
    const soup = heldoutHarmfulRequests(data.rows).map((r, i) => withSuffix(r, generateSuffix(SUFFIX_STYLES[i % SUFFIX_STYLES.length] as (typeof SUFFIX_STYLES)[number], rand), rand));
    const heldAttacks = rows.filter((r) => r.split === 'heldout' && r.labels.length > 0);
    results.push(runFold('usual split', rows, heldAttacks, everyday, log, { wrapped, soup }));
  }
  for (const family of SOURCE_FAMILIES) {
    if (wanted && !wanted.includes(family.name)) continue;
    const inFamily = (r: Row) => familyOf(r.source) === family.name;
    if (!rows.some((r) => inFamily(r) && r.labels.length > 0)) continue;
    const foldRows = rows.map((r) => ({ ...r, split: inFamily(r) ? ('heldout' as const) : r.split }));
    results.push(runFold(family.name, foldRows, foldRows.filter((r) => inFamily(r) && r.labels.length > 0), everyday, log));
  }
  const section = render(results, new Date().toISOString().slice(0, 10));
  console.log(`\n${section}`);
  if (!wanted) {
    writeSection('lofo', section);
    console.log('\nwrote the section into bench/CLASSIFIERS.md');
  }
}

main();
