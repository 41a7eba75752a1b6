import os from 'node:os';
import { performance } from 'node:perf_hooks';
import RE2 from 're2';
import type { Detector } from '#src/detection/detector';
import { evaluate } from '#src/detection/engine';
import { findAll } from '#src/detection/regex-scan';
import { defaultRegistry } from '#src/detection/registry';
import type { DetectorType } from '#src/shared/detector-catalog';
import type { DetectionPolicy } from '#src/shared/policy';
import { countTextTokens } from '#src/shared/tokens';
import { generateProse } from './text-corpus';

/**
 * `npm run bench:adversarial`: the speed guard for pathological inputs, which unit tests do not assert
 * (no wall-clock bounds in unit tests). Each case runs one piece of code (a detector, the engine with a
 * custom pattern, the token counter) on a hostile input, the same inputs as the unit tests.
 *
 * The guarded number is GROWTH: the cost per MB of the full input divided by the cost per MB of the same
 * input at 1/16 of its size, same code, same run, alternated. Linear code gives about 1 (less when a cap,
 * 1000 findings or the phone detector's call budget, stops it early); quadratic code gives about 16 and
 * catastrophic backtracking far more, however fast or loaded the machine is. A case whose median growth
 * exceeds MAX_GROWTH fails (exit code 1). Printed for reference, not guarded: the cost against the same
 * code on the same number of bytes of ordinary generated prose, and against a plain linear pass over the
 * same hostile bytes (one RE2 scan for a never-matching pattern, UTF-8 conversion included); hostile
 * inputs are dense in candidates by construction, so these are large by design (bench/RESULTS.md).
 * Several repetitions; median (range). Not part of `npm test`: run by hand or in a scheduled job.
 */

const REPETITIONS = Number(process.env.BENCH_REPETITIONS ?? 5);
const MAX_GROWTH = Number(process.env.BENCH_MAX_GROWTH ?? 4);
const SMALL = 1 / 16;
const MB = 1e6;
/** Each measurement runs fresh copies until it has covered 1 MB or spent this long (at least one copy). */
const MIN_MS = 250;

interface Case {
  name: string;
  /** The hostile input at `scale` × its full size. */
  make: (scale: number) => string;
  run: (text: string) => unknown;
}

const signal = new AbortController().signal;

function detectorRun(type: DetectorType): (text: string) => unknown {
  const detector: Detector | undefined = defaultRegistry.get(type);
  if (!detector) throw new Error(`no detector ${type}`);
  return (text) => {
    try {
      return detector.detect({ text, direction: 'input' }, signal);
    } catch (err) {
      return err; // the phone detector refuses a wall of number-like digits: that is its answer
    }
  };
}

const evilPolicy: DetectionPolicy = {
  cacheKey: 'bench-adversarial',
  policyMode: 'IO',
  inputDetectors: [],
  outputDetectors: [],
  allowList: { entries: [], match_type: 'contains' },
  denyList: { entries: [], match_type: 'contains' },
  customDetectors: [{ name: 'evil', pattern: '(a+)+$', action: 'block' }],
};

/** `unit` repeated to about `bytes` × scale. */
const wall = (unit: string, bytes: number) => (scale: number) => unit.repeat(Math.ceil((bytes * scale) / unit.length));

function cases(): Case[] {
  const ip = detectorRun('pii/ip_address');
  const card = detectorRun('pii/credit_card');
  const phone = detectorRun('pii/phone_number');
  const runs = (n: number, scale: number) => Math.ceil(n * scale);
  return [
    { name: 'engine, custom `(a+)+$` on 50k "a" + "!"', make: (s) => `${'a'.repeat(runs(50_000, s))}!`, run: (text) => evaluate({ text, direction: 'input', config: evilPolicy }) },
    { name: 'pii/email, 1 MB of addresses', make: wall('x@corp.com ', 1_100_000), run: detectorRun('pii/email') },
    ...['1.', ':', 'a:', '1::'].map((unit): Case => ({ name: `pii/ip_address, 1 MB of "${unit}"`, make: wall(unit, 1 << 20), run: ip })),
    { name: 'pii/credit_card, 1 MB of prose with numbers', make: wall('The quarterly report for 2024 lists 17 offices and 3,400 staff. ', 1_024_000), run: card },
    { name: 'pii/credit_card, 1 MB of digit soup "4 1 "', make: wall('4 1 ', 1_000_000), run: card },
    { name: 'pii/phone_number, 1 MB of prose with numbers', make: wall('In 2024 the office moved to 42 Main Street; 3 of 17 teams relocated. ', 1_035_000), run: phone },
    { name: 'pii/phone_number, 1 MB wall of "4 " (refused)', make: wall('4 ', 1_000_000), run: phone },
    { name: 'pii/us_social_security_number, 1 MB of "4"', make: wall('4', 1 << 20), run: detectorRun('pii/us_social_security_number') },
    { name: 'pii/iban_code, 1 MB of "DE89 "', make: wall('DE89 ', 1_000_000), run: detectorRun('pii/iban_code') },
    {
      name: 'token count, unbroken runs (a, !, x, spaces, U+3000, é)',
      make: (s) => 'a'.repeat(runs(200_000, s)) + ' then ' + '!'.repeat(runs(50_000, s)) + 'x'.repeat(runs(50_000, s)) + ' '.repeat(runs(50_000, s)) + '\u3000'.repeat(runs(20_000, s)) + 'é'.repeat(runs(20_000, s)),
      run: (text) => countTextTokens(text),
    },
  ];
}

/** A copy no cache has seen (RE2 keeps the UTF-8 form of the last string it scanned). */
const fresh = (text: string) => Buffer.from(text, 'utf8').toString('utf8');

/** Milliseconds per MB of `run` over fresh copies of `text` (see MIN_MS). */
async function msPerMb(run: (text: string) => unknown, text: string): Promise<number> {
  const bytes = Buffer.byteLength(text);
  let ms = 0;
  let covered = 0;
  while (covered === 0 || (covered < MB && ms < MIN_MS)) {
    const copy = fresh(text);
    const start = performance.now();
    await run(copy);
    ms += performance.now() - start;
    covered += bytes;
  }
  return ms / (covered / MB);
}

interface Stats {
  median: number;
  min: number;
  max: number;
}

function stats(xs: number[]): Stats {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)]!, min: s[0]!, max: s[s.length - 1]! };
}

const NAMES = ['full', 'small', 'prose', 'linear', 'growth', 'xProse', 'xLinear'] as const;
type Row = Record<(typeof NAMES)[number], Stats> & { name: string; bytes: number };

async function measureCase(c: Case, prose: string, never: RE2): Promise<Row> {
  const full = c.make(1);
  const small = c.make(SMALL);
  const baseline = prose.slice(0, full.length);
  const linear = (t: string) => findAll(never, t, 1);
  await msPerMb(c.run, small); // warm-up
  await msPerMb(c.run, baseline);
  const xs = Object.fromEntries(NAMES.map((n) => [n, [] as number[]])) as Record<(typeof NAMES)[number], number[]>;
  for (let r = 0; r < REPETITIONS; r++) {
    const h = await msPerMb(c.run, full);
    const s = await msPerMb(c.run, small);
    const p = await msPerMb(c.run, baseline);
    const l = await msPerMb(linear, full);
    for (const [n, x] of [['full', h], ['small', s], ['prose', p], ['linear', l], ['growth', h / s], ['xProse', h / p], ['xLinear', h / l]] as const) xs[n].push(x);
  }
  const row = Object.fromEntries(NAMES.map((n) => [n, stats(xs[n])]));
  return { ...(row as Record<(typeof NAMES)[number], Stats>), name: c.name, bytes: Buffer.byteLength(full) };
}

const f = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const range = (s: Stats) => `${f(s.median)} (${f(s.min)}–${f(s.max)})`;

async function main(): Promise<void> {
  const all = cases();
  const prose = generateProse({ seed: 7, length: 1_200_000 });
  const never = new RE2('qzxjv{3}', 'gu');
  const load = () => os.loadavg()[0]?.toFixed(2);
  console.log(`${new Date().toISOString()} · ${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}) · Node ${process.version} · load average ${load()}`);
  console.log(`${REPETITIONS} repetitions; median (range); growth = ms per MB at full size ÷ at 1/${1 / SMALL} size; fail above ${MAX_GROWTH}×.\n`);
  console.log('| case | bytes | ms per MB, full | ms per MB, 1/16 | growth | × same code on prose | × linear pass | verdict |');
  console.log('|---|---|---|---|---|---|---|---|');
  let failed = 0;
  for (const c of all) {
    const row = await measureCase(c, prose, never);
    const ok = row.growth.median <= MAX_GROWTH;
    if (!ok) failed++;
    console.log(`| ${row.name} | ${row.bytes} | ${range(row.full)} | ${range(row.small)} | ${range(row.growth)} | ${range(row.xProse)} | ${range(row.xLinear)} | ${ok ? 'ok' : `FAIL (> ${MAX_GROWTH}×)`} |`);
  }
  console.log(`\nload average at the end ${load()}`);
  if (failed > 0) {
    console.error(`${failed} case(s) grow faster than linearly (above ${MAX_GROWTH}×)`);
    process.exitCode = 1;
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 2;
});
