import fs from 'node:fs';
import type { EvalReport, TypeReport } from './evaluation';
import type { TrainingFingerprint } from './fingerprint';
import type { HeadReport } from './trainer';

/** manifest.json: what the committed artefact was trained on, how, and how well it does on held-out data. */
export interface Manifest {
  model: string;
  family: string;
  createdAt: string;
  trainingSeconds: number;
  data: { directory: string; files: Array<{ file: string; sha256: string; rows: number; bytes: number }> };
  split: Record<string, unknown>;
  hyperParameters: Record<string, unknown>;
  heads: HeadReport[];
  artefact: { file: string; bytes: number; sha256: string };
  /** What the training code put in (fingerprint.ts); absent on artefacts trained before it was recorded. */
  trainingCode?: TrainingFingerprint;
  heuristics: unknown;
  heldout: ReturnType<typeof summarise>;
}

const r4 = (x: number) => (Number.isFinite(x) ? Math.round(x * 10_000) / 10_000 : null);

function summariseType(t: TypeReport) {
  const levels = Object.fromEntries(
    Object.entries(t.levels).map(([level, m]) => [level, { precision: r4(m.precision), recall: r4(m.recall), f1: r4(m.f1), fpr: r4(m.fpr) }]),
  );
  return {
    type: t.type,
    positives: t.positives,
    negatives: t.negatives,
    enoughData: t.enoughData,
    auc: r4(t.auc),
    levels,
    benignPromptFprL2: r4(t.benignPromptFprL2),
    benignPromptFprL1: r4(t.benignPromptFprL1),
  };
}

export function summarise(report: EvalReport) {
  return {
    heldoutRows: report.heldoutRows,
    benignPrompts: report.benignPrompts,
    jailbreakOnOtherAttacksL2: r4(report.jailbreakOnOtherAttacksL2),
    types: report.types.map(summariseType),
  };
}

export function writeManifest(file: string, manifest: Manifest): void {
  fs.writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
}

export function readManifest(file: string): Manifest {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Manifest;
}
