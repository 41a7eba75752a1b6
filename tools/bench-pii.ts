import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Detector } from '#src/detection/detector';
import { defaultRegistry } from '#src/detection/registry';
import { TextIndex } from '#src/detection/text-index';
import type { DetectorType } from '#src/shared/detector-catalog';
import { generateProse, PACKAGE_ROOT, sourceCodeText } from './text-corpus';

/**
 * `npm run bench:pii`: CPU cost of each PII detector on ORDINARY text (the detectors run on every
 * request): 100 KB of generated prose and of source code, and 2 KB chat-sized slices of both. p50 per
 * text, milliseconds, one core, each detector on its own (a shared TextIndex per text, as the engine
 * builds one per view). Real prose: README.md (or the file given as the first argument), which is full of
 * numbers, versions, ports and code. Short by design; compare runs on the same machine only.
 */

const TYPES: DetectorType[] = ['pii/phone_number', 'pii/credit_card', 'pii/address', 'pii/name', 'pii/email', 'pii/iban_code', 'pii/us_social_security_number', 'pii/ip_address'];
const ROUNDS = 25;

function p50(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

function timeOn(detector: Detector, texts: readonly string[]): number {
  const signal = new AbortController().signal;
  const times: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const text of texts) {
      const index = new TextIndex(text);
      const t0 = performance.now();
      detector.detect({ text, direction: 'input', index }, signal);
      times.push(performance.now() - t0);
    }
  }
  return p50(times);
}

function slices(text: string, size: number, count: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(text.slice(i * size, (i + 1) * size));
  return out;
}

function main(): void {
  const prose = generateProse({ seed: 7, length: 100 * 1024 });
  const code = sourceCodeText(100 * 1024);
  const readme = fs.readFileSync(process.argv[2] ?? path.join(PACKAGE_ROOT, 'README.md'), 'utf8').slice(0, 100 * 1024);
  const sets: Array<[string, string[]]> = [
    ['README 100 KB', [readme]],
    ['prose 100 KB', [prose]],
    ['code 100 KB', [code]],
    ['README 2 KB', slices(readme, 2048, 20)],
    ['prose 2 KB', slices(prose, 2048, 20)],
    ['code 2 KB', slices(code, 2048, 20)],
  ];
  console.log(`| detector | ${sets.map(([n]) => n).join(' | ')} |`);
  console.log(`|---|${sets.map(() => '---').join('|')}|`);
  for (const type of TYPES) {
    const detector = defaultRegistry.get(type);
    if (!detector) continue;
    for (const [, texts] of sets) timeOn(detector, texts); // warm-up
    console.log(`| ${type} | ${sets.map(([, texts]) => timeOn(detector, texts).toFixed(3)).join(' | ')} |`);
  }
}

main();
