import inspector from 'node:inspector';
import { writeFileSync } from 'node:fs';
import { createDetectionEngine } from '#src/detection/engine';
import { defaultRegistry } from '#src/detection/registry';
import { blockPolicy } from './bench-procs';
import { generateProse, sourceCodeText } from './text-corpus';

/**
 * `npm run profile:detect`: where the CPU of a 1,000,000-character Detect goes. Every implemented detector
 * type on input (L2, block), classifier windows scored inline; two warm-up calls, then PROFILE_CALLS calls
 * (default 5) under the V8 sampling profiler. Prints CPU per call and the self time per stage and per
 * function, and writes the profile to PROFILE_OUT (default detect-1mb.cpuprofile) for Chrome DevTools.
 * The texts are those of bench:cpu-path (half prose with PII, half source code, fixed seeds).
 */

const CALLS = Number(process.env.PROFILE_CALLS ?? 5);
const OUT = process.env.PROFILE_OUT ?? 'detect-1mb.cpuprofile';
const SIZE = 1_000_000;

const text = (seed: number) => generateProse({ seed, length: SIZE / 2, piiEvery: 20_000 }) + sourceCodeText(SIZE / 2, seed * 7919);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const STAGES: Array<[RegExp, string]> = [
  [/classifiers\/builtin\//, 'builtin classifier model'],
  [/classifiers\//, 'classifier plumbing'],
  [/detectors\//, 'signature detectors'],
  [/normalize/, 'normalisation (views)'],
  [/detection\//, 'engine'],
];

function report(profile: Profile): string[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    self.set(id, (self.get(id) ?? 0) + dt);
    total += dt;
  });
  const stageOf = (id: number): string => {
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const url = byId.get(cur)!.callFrame.url;
      const hit = STAGES.find(([re]) => re.test(url));
      if (hit) return hit[1];
    }
    const name = byId.get(id)!.callFrame.functionName;
    return name === '(garbage collector)' ? 'garbage collection' : 'other';
  };
  const stages = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, t] of self) {
    stages.set(stageOf(id), (stages.get(stageOf(id)) ?? 0) + t);
    const f = byId.get(id)!.callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url.split('/dist/').pop() ?? f.url}:${f.lineNumber + 1}`;
    functions.set(key, (functions.get(key) ?? 0) + t);
  }
  const pct = (t: number) => `${((100 * t) / total).toFixed(1)}%`;
  return [
    '| stage | self |',
    '|---|---|',
    ...[...stages].sort((a, b) => b[1] - a[1]).map(([k, t]) => `| ${k} | ${pct(t)} |`),
    '',
    '| function | self |',
    '|---|---|',
    ...[...functions].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([k, t]) => `| ${k} | ${pct(t)} |`),
  ];
}

async function main(): Promise<void> {
  const types = defaultRegistry.listDetectorTypes().filter((t) => t.implemented).map((t) => t.value);
  const config = blockPolicy(types, 'profile:detect');
  const engine = createDetectionEngine();
  const detect = (t: string) => engine.evaluate({ text: t, direction: 'input', config, detectorTimeoutMs: 60_000 });
  for (const seed of [101, 102]) await detect(text(seed));
  const texts = Array.from({ length: CALLS }, (_, i) => text(i + 1));
  const session = new inspector.Session();
  session.connect();
  const post = <T>(method: string, params?: object) =>
    new Promise<T>((resolve, reject) => session.post(method, params, (err, result) => (err ? reject(err) : resolve(result as T))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 200 });
  await post('Profiler.start');
  const cpu0 = process.cpuUsage();
  for (const t of texts) await detect(t);
  const cpu = process.cpuUsage(cpu0);
  const { profile } = await post<{ profile: Profile }>('Profiler.stop');
  session.disconnect();
  writeFileSync(OUT, JSON.stringify(profile));
  const lines = [`CPU per ${SIZE.toLocaleString('en')}-character Detect (all threads): ${Math.round((cpu.user + cpu.system) / 1000 / CALLS)} ms over ${CALLS} calls; profile in ${OUT}`, '', ...report(profile)];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
