import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { SuffixScorer, type SuffixArtefact } from '#src/detection/classifiers/builtin/suffix-perplexity';
import { FEATURE_NAMES } from '#src/detection/classifiers/builtin/suffix-scan';
import { buildLm, type LmBuildOptions } from '#src/detection/classifiers/builtin/training/suffix-lm-trainer';
import { collectWindows, fitLogistic, tailWeights, upperQuantile, type WindowParams } from '#src/detection/classifiers/builtin/training/suffix-fit';
import { readPackageTexts, readRows, type Sample } from './suffix-corpus';
import { readLocaleMessages } from './suffix-multilingual';
import { CHAT_TURNS, machineStrings, MULTILINGUAL, PUBLISHED_SUFFIXES, TABLES_AND_MATHS } from './suffix-eval-texts';
import { generateSuffix, SUFFIX_STYLES, withSuffix, type SuffixStyle } from './suffix-generator';
import { negatives, negativeTable, positives, positiveTable, speed, type Positive } from './suffix-report';
import { PACKAGE_ROOT, prng } from './text-corpus';
import { datasetsDir } from './classifier-report';

/**
 * `npm run train:suffix`: builds the adversarial-suffix artefact (model/suffix-lm.json: the character
 * LM and the window scorer) from the labelled datasets (--data <dir> or DATASETS_DIR) and the README / source files in
 * node_modules, then prints the evaluation. Deterministic (seeded; no dates in the outputs): the same
 * inputs give the same files byte for byte; model/suffix-manifest.json records their SHA-256.
 */

const LM_OPTIONS: LmBuildOptions = {
  tableBits: 17,
  minCounts: [2, 2],
  maxLoad: 1,
  wordBits: 17,
  pairBits: 17,
  wordMin: 10,
  pairMin: 2,
};
/** The token-soup LM: generated suffixes of the fit styles (no word tables). */
const SOUP_OPTIONS: LmBuildOptions = { tableBits: 16, wordBits: 8, pairBits: 8, minCounts: [2, 3], maxLoad: 1, wordMin: 1e9, pairMin: 1e9 };
const SOUP_TEXTS = 30_000;
const WINDOW: WindowParams = { window: 96, stride: 16, minScored: 48 };
/** Negatives: each calibration text's hardest window (most bits per character), as the max-window rule sees it. */
const HARDEST = 1;
/** Held out of the scorer's fit and calibration: evaluation only. */
/**
 * The refit that leans on the operating point: the top 2% of benign windows and the suffix windows
 * below the benign 0.2% tail of the first fit weigh 5x (3x / 10x measured: 5x keeps Finnish prose
 * under the cut-off with the same recall).
 */
const TAIL = { negTail: 0.02, posFloor: 0.002, boost: 5 };
const HELDOUT_STYLE: SuffixStyle = 'bpe-words';
const SEED = 15;
/** The shipped cut-off (score 0.5): the calibration benign rows' false-positive rate it allows. */
const FPR_BUDGET = 0.001;

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};

function positiveSamples(requests: readonly Sample[], styles: readonly SuffixStyle[], rand: () => number, alone: number): Positive[] {
  const out: Positive[] = [];
  requests.forEach((r, i) => {
    const style = styles[i % styles.length] as SuffixStyle;
    const text = withSuffix(r.text, generateSuffix(style, rand), rand);
    const from = r.text.trimEnd().length + 1;
    out.push({ text, from, to: text.length, group: `request + ${style}` });
  });
  for (let i = 0; i < alone; i++) {
    const style = styles[i % styles.length] as SuffixStyle;
    const text = generateSuffix(style, rand);
    out.push({ text, from: 0, to: text.length, group: `suffix alone: ${style}` });
  }
  return out;
}

function handWritten(rand: () => number): Array<{ text: string; source: string }> {
  const out = CHAT_TURNS.map((text) => ({ text, source: 'hand: chat turns' }));
  for (const [lang, texts] of Object.entries(MULTILINGUAL)) for (const text of texts) out.push({ text, source: `hand: prose ${lang}` });
  for (const text of TABLES_AND_MATHS) out.push({ text, source: 'hand: tables, maths' });
  for (let i = 0; i < 100; i++) out.push(...machineStrings(rand));
  return out;
}

type Log = (message: string) => void;
type Rows = ReturnType<typeof readRows>;
type Built = ReturnType<typeof buildLm>;
const fitStyles = SUFFIX_STYLES.filter((s) => s !== HELDOUT_STYLE);

/** The ordinary-text LM (LM parts of the rows, package texts and language data) and the token-soup LM. */
function buildModels(rows: Rows, pkg: readonly Sample[], log: Log): { ordinary: Built; soup: Built } {
  const lmTexts = [...rows.benign, ...pkg, ...rows.language, ...readLocaleMessages(PACKAGE_ROOT)].filter((s) => s.part === 'lm').map((s) => s.text);
  const ordinary = buildLm(lmTexts, LM_OPTIONS);
  const r = ordinary.report;
  log(`LM: ${r.characters} chars, kept ${JSON.stringify(r.kept)} of ${JSON.stringify(r.distinct)}, dropped ${r.dropped}, load ${r.load.toFixed(2)}`);
  const soupRand = prng(SEED + 2);
  const soupTexts = Array.from({ length: SOUP_TEXTS }, (_, i) => generateSuffix(fitStyles[i % fitStyles.length] as SuffixStyle, soupRand));
  const soup = buildLm(soupTexts, SOUP_OPTIONS);
  log(`soup LM: ${soup.report.characters} chars, kept ${JSON.stringify(soup.report.kept)}, load ${soup.report.load.toFixed(2)}`);
  return { ordinary, soup };
}

/** Fits the window scorer on the calibration part, then sets the bias so that 0 is the FPR_BUDGET cut-off. */
function fitScorer(models: { ordinary: Built; soup: Built }, rows: Rows, pkg: readonly Sample[], log: Log) {
  const { lm } = models.ordinary;
  const soup = models.soup.lm;
  const calPos = positiveSamples(rows.harmful.filter((r) => r.part === 'cal'), fitStyles, prng(SEED), 800);
  const calNeg = [...rows.benign, ...pkg].filter((s) => s.part === 'cal' && s.source !== 'code-minified');
  const posRows: number[][] = [];
  const negRows: number[][] = [];
  for (const p of calPos) collectWindows(lm, soup, p.text, WINDOW, posRows, p.from, p.to);
  for (const s of calNeg) collectWindows(lm, soup, s.text, WINDOW, negRows, 0, s.text.length, HARDEST);
  const first = fitLogistic(posRows, negRows);
  const fit = fitLogistic(posRows, negRows, tailWeights(first, posRows, negRows, TAIL.negTail, TAIL.posFloor, TAIL.boost));
  log(`fit on ${posRows.length} suffix windows / ${negRows.length} benign windows: ${JSON.stringify(fit)}`);
  const raw = new SuffixScorer(lm, soup, { ...WINDOW, ...fit, cutoffs: {} });
  // the cut-off is set on benign prompts (dataset rows); code and README chunks are evaluated, not calibrated on
  const calLogits = rows.benign.filter((s) => s.part === 'cal').map((s) => raw.best(s.text)?.logit ?? -Infinity).filter(Number.isFinite);
  const cut = upperQuantile(calLogits, FPR_BUDGET);
  const sig = (z: number) => 1 / (1 + Math.exp(-z));
  const cutoffs = {
    'fpr<=1% (cal)': round(sig(upperQuantile(calLogits, 0.01) - cut)),
    'fpr<=0.1% (cal)': 0.5,
    'max benign (cal)': round(sig(Math.max(...calLogits) - cut)),
  };
  const scorer = { ...WINDOW, mean: fit.mean.map(round), std: fit.std.map(round), weights: fit.weights.map(round), bias: round(fit.bias - cut - 1e-6), cutoffs };
  return { scorer, first, windows: { positive: posRows.length, negative: negRows.length } };
}

function artefactOf(models: { ordinary: Built; soup: Built }, scorer: SuffixArtefact['scorer']): SuffixArtefact {
  const part = (options: LmBuildOptions, tables: Uint8Array) => ({
    format: 'suffix-lm/1' as const,
    tableBits: options.tableBits,
    wordBits: options.wordBits,
    pairBits: options.pairBits,
    tables: gzipSync(tables, { level: 9 }).toString('base64'),
  });
  return { ...part(LM_OPTIONS, models.ordinary.tables), soup: part(SOUP_OPTIONS, models.soup.tables), scorer };
}

/** Held-out evaluation: recall per style and FPR per negative source at the shipped and the 1% cut-offs. */
function evaluate(scorer: SuffixScorer, rows: Rows, pkg: readonly Sample[]) {
  const loose = scorer.config.cutoffs['fpr<=1% (cal)'] as number;
  const cutNames = ['0.5 (0.1% cal FPR)', `${loose} (1% cal FPR)`];
  const cuts = [0.5, loose];
  const evalRand = prng(SEED + 1);
  const heldRequests = rows.harmful.filter((r) => r.part === 'heldout');
  const evalPos = SUFFIX_STYLES.flatMap((style) => positiveSamples(heldRequests, [style], evalRand, 300));
  const negSamples = [
    ...[...rows.benign, ...pkg].filter((s) => s.part === 'heldout'),
    ...handWritten(evalRand),
    ...heldRequests.map((r) => ({ text: r.text, source: `harmful request, no suffix (${r.source})` })),
  ];
  PUBLISHED_SUFFIXES.forEach((suffix, k) => {
    for (const r of heldRequests) {
      const text = `${r.text.trimEnd()} ${suffix}`;
      evalPos.push({ text, from: r.text.trimEnd().length + 1, to: text.length, group: `request + published GCG suffix ${k + 1}` });
    }
  });
  const posStats = positives(scorer, evalPos, cuts);
  const inSample = negatives(scorer, rows.benign.filter((s) => s.part === 'lm').map((s) => ({ text: s.text, source: 'all LM-training benign rows' })), cuts);
  const benignFpr = negatives(scorer, rows.benign.filter((s) => s.part === 'heldout').map((s) => ({ text: s.text, source: 'all held-out benign rows' })), cuts);
  const negStats = [...benignFpr, ...inSample, ...negatives(scorer, negSamples, cuts)];
  const readmes = pkg.filter((s) => s.source === 'readme' && s.part !== 'lm').map((s) => s.text.slice(0, 2048).padEnd(2048, ' '));
  const speed2k = speed(scorer, readmes.slice(0, 400));
  const text = [
    `held-out style: ${HELDOUT_STYLE}; fit styles: ${fitStyles.join(', ')}`,
    positiveTable(posStats, cutNames),
    negativeTable(negStats, cutNames),
    `speed per 2 KB README chunk: p50 ${speed2k.p50.toFixed(1)} µs, p99 ${speed2k.p99.toFixed(1)} µs`,
  ].join('\n\n');
  return { text, positives: posStats, negatives: negStats };
}

function main(): void {
  const dataDir = datasetsDir();
  const outDir = path.resolve(arg('out') ?? path.join(PACKAGE_ROOT, 'src', 'detection', 'classifiers', 'builtin', 'model'));
  const t0 = Date.now();
  const log: Log = (m) => console.log(`[train:suffix ${((Date.now() - t0) / 1000).toFixed(1)}s] ${m}`);
  const rows = readRows(dataDir);
  const pkg = readPackageTexts(PACKAGE_ROOT);
  log(`${rows.benign.length} benign rows, ${rows.harmful.length} harmful requests, ${pkg.length} package texts`);
  const models = buildModels(rows, pkg, log);
  const fitted = fitScorer(models, rows, pkg, log);
  const json = `${JSON.stringify(artefactOf(models, fitted.scorer))}\n`;
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'suffix-lm.json'), json);
  log(`wrote suffix-lm.json (${(json.length / 1024).toFixed(0)} KiB); cut-offs ${JSON.stringify(fitted.scorer.cutoffs)}`);
  const evaluation = evaluate(SuffixScorer.fromArtefact(JSON.parse(json)), rows, pkg);
  console.log(evaluation.text);
  const manifest = {
    artefact: { file: 'suffix-lm.json', sha256: createHash('sha256').update(json).digest('hex'), bytes: Buffer.byteLength(json) },
    data: rows.files,
    // the README, source and locale texts come from node_modules: the lock file pins them
    packageLockSha256: createHash('sha256').update(fs.readFileSync(path.join(PACKAGE_ROOT, 'package-lock.json'))).digest('hex'),
    lm: { ...LM_OPTIONS, ...models.ordinary.report },
    soupLm: { ...SOUP_OPTIONS, texts: SOUP_TEXTS, ...models.soup.report },
    scorer: {
      ...WINDOW,
      tail: TAIL,
      firstFit: fitted.first,
      features: FEATURE_NAMES,
      heldoutStyle: HELDOUT_STYLE,
      fprBudget: FPR_BUDGET,
      calibrationPositiveWindows: fitted.windows.positive,
      calibrationNegativeWindows: fitted.windows.negative,
    },
    evaluation: { positives: evaluation.positives, negatives: evaluation.negatives },
  };
  fs.writeFileSync(path.join(outDir, 'suffix-manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  log('wrote suffix-manifest.json');
}

function round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

main();
