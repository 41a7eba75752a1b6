import fs from 'node:fs';
import path from 'node:path';
import type { EvalReport, TypeReport } from '#src/detection/classifiers/builtin/training/evaluation';
import type { Manifest } from '#src/detection/classifiers/builtin/training/manifest';
import type { BuiltinModel } from '#src/detection/classifiers/builtin/builtin-model';
import type { BuiltinArtefact } from '#src/detection/classifiers/builtin/model-format';
import { scoreDocument } from '#src/detection/classifiers/builtin/document-scoring';
import { THRESHOLD_CUTOFFS } from '#src/detection/decide';
import { PACKAGE_ROOT } from './package-root';

/**
 * bench/CLASSIFIERS.md: written by `npm run eval:classifiers` (everything but the marked sections), and
 * per marked section by `npm run bench:classifiers` (speed), `eval:lofo`, `eval:moderation` and
 * `eval:robustness`; the "notes" section is hand-written. Each tool keeps the others' parts.
 */

export { PACKAGE_ROOT };
export const REPORT_FILE = path.join(PACKAGE_ROOT, 'bench', 'CLASSIFIERS.md');
/** The committed artefact. */
export const MODEL_DIR = path.join(PACKAGE_ROOT, 'src', 'detection', 'classifiers', 'builtin', 'model');

/**
 * The labelled datasets the training and evaluation tools read: `--data <dir>`, else the DATASETS_DIR
 * setting. They are not part of the repository: without either, or when the directory is missing, the
 * tool stops (exit 1) with a message saying so (docs/benchmarks.md, "Datasets").
 */
export function datasetsDir(): string {
  const flag = cliArg('data');
  const given = flag ?? process.env.DATASETS_DIR;
  const stop = (message: string): never => {
    process.stderr.write(`${message}\n`);
    process.exit(1);
  };
  if (!given) {
    return stop(
      'No datasets directory: pass --data <dir> (e.g. npm run eval:classifiers -- --data ./datasets) or set DATASETS_DIR.\n' +
        'The labelled datasets are not part of the repository (docs/benchmarks.md, "Datasets").',
    );
  }
  const dir = path.resolve(given);
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) return stop(`Datasets directory ${dir} (${flag ? '--data' : 'DATASETS_DIR'}) does not exist.`);
  return dir;
}

/** The value after `--name` on the command line of the classifier tools. */
export function cliArg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

let committed: BuiltinArtefact | undefined;
/** The committed model.json, read once (the evaluations reuse its heads they do not retrain). */
export function committedArtefact(): BuiltinArtefact {
  committed ??= JSON.parse(fs.readFileSync(path.join(MODEL_DIR, 'model.json'), 'utf8')) as BuiltinArtefact;
  return committed;
}

/** Whether some moderated_content type reaches L2 on the text (production scoring path). */
export function moderationFlagged(model: BuiltinModel, text: string): boolean {
  return Object.entries(scoreDocument(model, text)).some(([t, v]) => t.startsWith('moderated_content/') && typeof v === 'number' && v >= THRESHOLD_CUTOFFS.L2);
}

const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : 'n/a');
const num = (x: number, d = 3) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');

/** Issue 15's targets (the attack recall target is meant on unseen source families: see the LOFO section). */
export const TARGETS = {
  attackAuc: 0.97,
  attackRecallL2: 0.8,
  benignFprL2: 0.01,
  benignFprL1: 0.005,
  moderationF1L2: 0.7,
};

export function targetStatus(t: TypeReport): string {
  // L1 means "very few false positives" for every type: at most 0.5% of the benign prompts.
  const l1 = t.benignPromptFprL1 <= TARGETS.benignFprL1 ? '' : ' (L1 benign FPR over 0.5%)';
  if (t.type === 'prompt_attack' || t.type === 'jailbreak') {
    const ok = t.auc >= TARGETS.attackAuc && t.levels.L2.recall >= TARGETS.attackRecallL2 && t.benignPromptFprL2 <= TARGETS.benignFprL2;
    return (ok && !l1 ? 'met' : 'MISSED') + l1;
  }
  if (!t.enoughData) return `not enough data${l1}`;
  return (t.levels.L2.f1 >= TARGETS.moderationF1L2 && !l1 ? 'met' : 'MISSED') + l1;
}

export function mainTable(report: EvalReport): string[] {
  const lines = [
    '| type | pos | neg | ROC-AUC | P@L2 | R@L2 | F1@L2 | FPR L1 | FPR L2 | FPR L3 | FPR L4 | R@L1 | R@L4 | benign-prompt FPR@L1 | benign-prompt FPR@L2 | target |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const t of report.types) {
    const l = t.levels;
    lines.push(
      `| ${t.type} | ${t.positives} | ${t.negatives} | ${num(t.auc, 4)} | ${num(l.L2.precision)} | ${num(l.L2.recall)} | ${num(l.L2.f1)} | ` +
        `${pct(l.L1.fpr)} | ${pct(l.L2.fpr)} | ${pct(l.L3.fpr)} | ${pct(l.L4.fpr)} | ${num(l.L1.recall)} | ${num(l.L4.recall)} | ${pct(t.benignPromptFprL1)} | ${pct(t.benignPromptFprL2)} | ${targetStatus(t)} |`,
    );
  }
  return lines;
}

export function levelTable(t: TypeReport): string[] {
  const lines = ['| level | precision | recall | F1 | FPR |', '|---|---|---|---|---|'];
  for (const [level, m] of Object.entries(t.levels)) lines.push(`| ${level} | ${num(m.precision)} | ${num(m.recall)} | ${num(m.f1)} | ${pct(m.fpr)} |`);
  return lines;
}

export function lengthTable(t: TypeReport): string[] {
  const lines = ['| length (chars) | positives | recall@L2 | negatives | FPR@L2 |', '|---|---|---|---|---|'];
  for (const b of t.byLength) lines.push(`| ${b.bucket} | ${b.positives} | ${num(b.recallL2)} | ${b.negatives} | ${pct(b.fprL2)} |`);
  return lines;
}

export function sourceTable(t: TypeReport): string[] {
  const lines = ['| source | class | rows | fired@L2 |', '|---|---|---|---|'];
  for (const s of t.bySource) lines.push(`| ${s.source} | ${s.positive ? 'positive' : 'negative'} | ${s.rows} | ${s.firedL2} (${pct(s.firedL2 / s.rows)}) |`);
  return lines;
}

export function manifestSection(m: Manifest): string[] {
  const lines = [
    `- model: \`${m.model}\`, trained ${m.createdAt} in ${m.trainingSeconds} s`,
    `- family: ${m.family}`,
    `- artefact: \`src/detection/classifiers/builtin/model/${m.artefact.file}\`, ${(m.artefact.bytes / 1024).toFixed(0)} KiB, sha256 \`${m.artefact.sha256}\``,
    // Not the directory the model was trained from (a path on the trainer's machine, outside the repository):
    // the files are identified by their hashes.
    '- data (`DATASETS_DIR`: the labelled datasets, not part of the repository; see docs/benchmarks.md, "Datasets"):',
  ];
  for (const f of m.data.files) lines.push(`  - \`${f.file}\`: ${f.rows} rows, sha256 \`${f.sha256}\``);
  lines.push(`- split: ${JSON.stringify(m.split)}`);
  lines.push(`- hyper-parameters: \`${JSON.stringify(m.hyperParameters)}\``);
  lines.push('', '| head | λ | iterations | loss | train + / − | calibration + / − (benign) | calibration AUC float / int8 | seconds |', '|---|---|---|---|---|---|---|---|');
  for (const h of m.heads) {
    lines.push(
      `| ${h.name} | ${h.lambda} | ${h.iterations} | ${h.loss} | ${h.trainRows.positive} / ${h.trainRows.negative} | ` +
        `${h.calibrationRows.positive} / ${h.calibrationRows.negative} (${h.calibrationRows.benign}) | ` +
        `${h.calibrationAuc ? `${h.calibrationAuc.float} / ${h.calibrationAuc.int8}` : ''} | ${h.seconds} |`,
    );
  }
  return lines;
}

/** Sections of bench/CLASSIFIERS.md that other tools write and writeReport keeps (marker name → title). */
const KEPT_SECTIONS: ReadonlyArray<{ name: string; placeholder: string }> = [
  { name: 'lofo', placeholder: '## Leave one source family out\n\nNot measured yet: run `npm run eval:lofo`.' },
  { name: 'moderation-lofo', placeholder: '## Moderation: leave one source family out\n\nNot measured yet: run `npm run eval:moderation`.' },
  // Hand-written findings (blind sets, guards): no tool writes them, every tool keeps them.
  { name: 'notes', placeholder: '## Notes\n\nNone yet.' },
  { name: 'robustness', placeholder: '## Robustness: identifiers and other languages\n\nNot measured yet: run `npm run eval:robustness`.' },
  { name: 'speed', placeholder: '## Speed\n\nNot measured yet: run `npm run bench:classifiers`.' },
];
const markers = (name: string) => ({ start: `<!-- ${name}:start -->`, end: `<!-- ${name}:end -->` });

function readSection(name: string): string | undefined {
  if (!fs.existsSync(REPORT_FILE)) return undefined;
  const text = fs.readFileSync(REPORT_FILE, 'utf8');
  const { start, end } = markers(name);
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  return a >= 0 && b > a ? text.slice(a, b + end.length) : undefined;
}

export function readSpeedSection(): string | undefined {
  return readSection('speed');
}

/** Writes the held-out report, keeping the sections other tools wrote (leave-one-family-out, speed). */
export function writeReport(body: string): void {
  const kept = KEPT_SECTIONS.map((s) => readSection(s.name) ?? `${markers(s.name).start}\n${s.placeholder}\n${markers(s.name).end}`);
  fs.mkdirSync(path.dirname(REPORT_FILE), { recursive: true });
  fs.writeFileSync(REPORT_FILE, `${body.trimEnd()}\n\n${kept.join('\n\n')}\n`);
}

/** Replaces (or appends) one marked section of bench/CLASSIFIERS.md. */
export function writeSection(name: 'speed' | 'lofo' | 'moderation-lofo' | 'robustness', section: string): void {
  const { start, end } = markers(name);
  const block = `${start}\n${section.trim()}\n${end}`;
  const text = fs.existsSync(REPORT_FILE) ? fs.readFileSync(REPORT_FILE, 'utf8') : '# Builtin classifiers\n';
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  const next = a >= 0 && b > a ? `${text.slice(0, a)}${block}${text.slice(b + end.length)}` : `${text.trimEnd()}\n\n${block}\n`;
  fs.writeFileSync(REPORT_FILE, next);
}

export function writeSpeedSection(section: string): void {
  writeSection('speed', section);
}
