import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { descendants, memoryKb, processCpuMs, ROOT, start } from './bench-procs';
import { replaceSection } from './results-sections';

/**
 * Start-up time and resident memory (npm run bench:startup), measured on this machine in one run:
 *
 * - `npm start` to healthy: `npm start` is spawned as an operator runs it (a fresh DATA_DIR: the first
 *   start creates the embedded database, applies the migrations and bootstraps; then a restart on the
 *   same directory) and GET /health on the gateway is polled every 25 ms (once the program printed its
 *   "Ready:" line with the ports it got) until it answers 200.
 * - Resident memory (VmRSS of the server process, every thread) once healthy, and after BENCH_LOAD_S
 *   seconds of traffic through the gateway (32 connections, benign prompts of 100–600 characters, every
 *   detector including the builtin classifiers on input and output, L2, block) against a fake upstream;
 *   VmHWM is the peak.
 *
 * BENCH_BASELINE_DIR=<another checkout with node_modules> measures that tree's `npm start` alongside,
 * in the same run (e.g. the main branch before a change), and prints the ratios.
 * BENCH_RUNS (default 3) runs of each; the table gives ranges (min–max) and medians. BENCH_LOAD_ONLY=1
 * skips the start-up runs; NODE_OPTIONS is passed on (e.g. to try V8 heap flags).
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: Record<string, unknown>) => Promise<{ requests: { total: number }; non2xx: number; errors: number }>;

/** Ends the generated part of this benchmark's section of bench/RESULTS.md; the analysis below it is kept. */
const STARTUP_KEEP_MARKER = '<!-- bench:startup output ends here; the text below it is kept when the benchmark rewrites the section -->';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const LOAD_S = Number(process.env.BENCH_LOAD_S ?? 30);
const HEALTH_TIMEOUT_MS = Number(process.env.BENCH_HEALTH_TIMEOUT_MS ?? 180_000);
const BASELINE = process.env.BENCH_BASELINE_DIR ? resolve(process.env.BENCH_BASELINE_DIR) : undefined;

interface StartSample {
  /** Spawn of `npm start` to the first 200 from GET /health. */
  healthyMs: number;
  /** VmRSS (MB) of the server process when healthy, and 2 s later. */
  rssMb: number;
  rssSettledMb: number;
}

/** The server: the process under `npm start` that runs the program (scripts/start.js or dist/main.js). */
function serverPid(npmPid: number): number | undefined {
  return descendants(npmPid).find((p) => {
    try {
      return /(scripts\/start\.js|dist\/main\.js)\0all/.test(readFileSync(`/proc/${p}/cmdline`, 'utf8'));
    } catch {
      return false;
    }
  });
}

/** VmRSS and VmHWM (peak) of a process, in MB. */
function memoryMb(pid: number): { rss: number; hwm: number } {
  const kb = memoryKb(pid);
  return { rss: Math.round(kb.rss / 1024), hwm: Math.round(kb.hwm / 1024) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Started {
  npm: ChildProcess;
  pid: number;
  healthyMs: number;
  gateway: string;
  stop(): Promise<void>;
}

/** Spawns `npm start` in `dir` (ports 0: read from its "Ready:" line) and waits for GET /health to answer 200. */
async function npmStart(dir: string, env: Record<string, string>): Promise<Started> {
  const t0 = performance.now();
  const npm = spawn('npm', ['start'], {
    cwd: dir,
    detached: true, // its own process group: stop() signals npm, the shell and the server together
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...(process.env.NODE_OPTIONS ? { NODE_OPTIONS: process.env.NODE_OPTIONS } : {}), ...env, PORT: '0', SENSOR_PORT: '0', DETECTION_ADDRESS: '127.0.0.1:0', LOG_LEVEL: 'warn' },
  });
  let stderr = '';
  let stdout = '';
  npm.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  npm.stdout!.on('data', (d: Buffer) => (stdout = (stdout + d.toString()).slice(-8000)));
  const exited = new Promise<void>((r) => npm.once('exit', () => r()));
  let gateway: string | undefined;
  for (;;) {
    if (npm.exitCode !== null) throw new Error(`npm start in ${dir} exited ${npm.exitCode}: ${stderr}`);
    if (performance.now() - t0 > HEALTH_TIMEOUT_MS) throw new Error(`npm start in ${dir}: not healthy within ${HEALTH_TIMEOUT_MS} ms`);
    gateway ??= /Ready: gateway (\S+),/.exec(stdout)?.[1];
    const ok = gateway !== undefined && (await fetch(`${gateway}/health`).then((r) => r.status === 200, () => false));
    if (ok) break;
    await sleep(25);
  }
  const healthyMs = performance.now() - t0;
  const pid = serverPid(npm.pid!);
  if (pid === undefined) throw new Error('could not find the server process under npm start');
  return {
    npm,
    pid,
    healthyMs,
    gateway: gateway!,
    async stop() {
      process.kill(-npm.pid!, 'SIGTERM');
      await exited;
      // npm may exit before the server finished its shutdown: wait for the server too.
      for (let i = 0; i < 400 && existsSync(`/proc/${pid}`); i++) await sleep(25);
    },
  };
}

async function sample(dir: string, dataDir: string): Promise<StartSample> {
  const s = await npmStart(dir, { DATA_DIR: dataDir });
  try {
    const rssMb = memoryMb(s.pid).rss;
    await sleep(2000);
    return { healthyMs: s.healthyMs, rssMb, rssSettledMb: memoryMb(s.pid).rss };
  } finally {
    await s.stop();
  }
}

/** A benign prompt of 100–600 characters, different for every `i`. */
function benignPrompt(i: number): string {
  const words = 'please summarise the meeting notes about the garden project budget schedule and the next steps for the team'.split(' ');
  const len = 100 + ((i * 7919) % 501);
  let text = `Request ${i}:`;
  for (let k = 0; text.length < len; k++) text += ` ${words[(i + k * 3) % words.length]}`;
  return `${text.slice(0, len - 1)}.`;
}

interface LoadSample {
  afterStartMb: number;
  afterLoadMb: number;
  peakMb: number;
  requests: number;
  non2xx: number;
  /** CPU ms of the server process (every thread) per request during the load. */
  cpuMsPerRequest: number;
}

/** Starts `dir` on a fresh DATA_DIR, enables every detector (block, L2) and runs LOAD_S seconds of chat traffic. */
async function underLoad(dir: string, upstream: string): Promise<LoadSample> {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-startup-load-'));
  const key = `svc_sk_${randomBytes(24).toString('hex').slice(0, 40)}`;
  const s = await npmStart(dir, {
    DATA_DIR: dataDir, BOOTSTRAP_API_KEY: key, OPENAI_BASE_URL: `${upstream}/v1`, OPENAI_API_KEY: 'sk-bench', PLATFORM_TRAFFIC_RPM: '10000000',
  });
  try {
    await sleep(2000);
    const afterStartMb = memoryMb(s.pid).rss;
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const types = ((await (await fetch(`${s.gateway}/v1/policies/detector_types/`, { headers: auth })).json()) as { detector_types: Array<{ value: string }> }).detector_types;
    const entries = types.map((t) => ({ detector_type: t.value, threshold: 'L2', action: 'block' }));
    const policies = (await (await fetch(`${s.gateway}/v1/policies/?is_default=true`, { headers: auth })).json()) as { results: Array<{ id: string }> };
    const patched = await fetch(`${s.gateway}/v1/policies/${policies.results[0]!.id}/`, { method: 'PATCH', headers: auth, body: JSON.stringify({ input_detectors: entries, output_detectors: entries }) });
    if (!patched.ok) throw new Error(`could not configure the policy: ${await patched.text()}`);
    let i = 0;
    const body = () => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: benignPrompt(i++) }] });
    const cpu0 = processCpuMs(s.pid);
    const result = await autocannon({
      url: `${s.gateway}/v1/chat/completions`, method: 'POST', headers: auth, connections: 32, duration: LOAD_S,
      requests: [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, body: body() }) }],
    });
    const cpuPerRequest = (processCpuMs(s.pid) - cpu0) / Math.max(1, result.requests.total);
    await sleep(2000);
    const after = memoryMb(s.pid);
    return { afterStartMb, afterLoadMb: after.rss, peakMb: after.hwm, requests: result.requests.total, non2xx: result.non2xx, cpuMsPerRequest: cpuPerRequest };
  } finally {
    await s.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const range = (xs: number[], unit: string, digits = 0) => {
  const f = (n: number) => n.toFixed(digits);
  return `${f(Math.min(...xs))}–${f(Math.max(...xs))} ${unit} (median ${f(median(xs))})`;
};

interface TreeResult {
  first: StartSample[];
  restart: StartSample[];
  load: LoadSample[];
}

async function measureTree(dir: string, upstream: string): Promise<TreeResult> {
  const out: TreeResult = { first: [], restart: [], load: [] };
  for (let r = 0; r < (process.env.BENCH_LOAD_ONLY ? 0 : RUNS); r++) {
    const dataDir = mkdtempSync(join(tmpdir(), 'bench-startup-'));
    try {
      out.first.push(await sample(dir, dataDir));
      out.restart.push(await sample(dir, dataDir));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
    process.stdout.write(`${dir}: run ${r + 1}: first start ${(out.first[r]!.healthyMs / 1000).toFixed(1)} s, restart ${(out.restart[r]!.healthyMs / 1000).toFixed(1)} s\n`);
  }
  if (LOAD_S > 0) {
    for (let r = 0; r < RUNS; r++) {
      out.load.push(await underLoad(dir, upstream));
      const l = out.load[r]!;
      process.stdout.write(`${dir}: load run ${r + 1}: ${l.afterStartMb} MB after start, ${l.afterLoadMb} MB after ${LOAD_S} s of load (peak ${l.peakMb} MB), ${l.requests} requests, ${l.cpuMsPerRequest.toFixed(2)} ms CPU each\n`);
    }
  }
  return out;
}

function rows(label: string, t: TreeResult): string[] {
  const s = (xs: number[]) => range(xs.map((x) => x / 1000), 's', 1);
  const lines = t.first.length === 0 ? [] : [
    `| ${label}: \`npm start\` to healthy, first start (empty DATA_DIR) | ${s(t.first.map((x) => x.healthyMs))} |`,
    `| ${label}: \`npm start\` to healthy, restart | ${s(t.restart.map((x) => x.healthyMs))} |`,
    `| ${label}: RSS when healthy, first start / 2 s later | ${range(t.first.map((x) => x.rssMb), 'MB')} / ${range(t.first.map((x) => x.rssSettledMb), 'MB')} |`,
    `| ${label}: RSS when healthy, restart / 2 s later | ${range(t.restart.map((x) => x.rssMb), 'MB')} / ${range(t.restart.map((x) => x.rssSettledMb), 'MB')} |`,
  ];
  if (t.load.length > 0) {
    lines.push(
      `| ${label}: RSS 2 s after start (fresh DATA_DIR) | ${range(t.load.map((x) => x.afterStartMb), 'MB')} |`,
      `| ${label}: RSS after ${LOAD_S} s of load | ${range(t.load.map((x) => x.afterLoadMb), 'MB')} (peak ${range(t.load.map((x) => x.peakMb), 'MB')}; ${t.load.map((x) => `${x.requests} requests, ${x.non2xx} not 2xx`).join('; ')}) |`,
      `| ${label}: server CPU per request during the load (every thread) | ${range(t.load.map((x) => x.cpuMsPerRequest), 'ms', 2)} |`,
    );
  }
  return lines;
}

async function main(): Promise<void> {
  if (process.platform !== 'linux') throw new Error('bench:startup reads /proc: Linux only');
  const up = await start(['dist/tools/bench-upstream.js'], {}, /PORT (\d+)/);
  const upstream = `http://127.0.0.1:${up.match[1]}`;
  const load0 = loadavg()[0]!;
  try {
    const trees: Array<[string, string]> = [['this tree', ROOT]];
    if (BASELINE) trees.unshift(['baseline', BASELINE]);
    const results = new Map<string, TreeResult>();
    for (const [label, dir] of trees) results.set(label, await measureTree(dir, upstream));
    const table = ['| figure | value |', '|---|---|', ...[...results].flatMap(([label, t]) => rows(label, t))];
    const base = results.get('baseline');
    const mine = results.get('this tree')!;
    if (base) {
      const ratio = (a: number[], b: number[]) => `${(median(a) / median(b)).toFixed(2)}×`;
      if (mine.first.length > 0) table.push(
        `| ratio this tree / baseline: first start, restart (medians) | ${ratio(mine.first.map((x) => x.healthyMs), base.first.map((x) => x.healthyMs))}, ${ratio(mine.restart.map((x) => x.healthyMs), base.restart.map((x) => x.healthyMs))} |`,
      );
      if (mine.load.length > 0 && base.load.length > 0) {
        table.push(`| ratio this tree / baseline: RSS after load (medians) | ${ratio(mine.load.map((x) => x.afterLoadMb), base.load.map((x) => x.afterLoadMb))} |`);
      }
    }
    const section = [
      '## Start-up and memory (npm run bench:startup)',
      '',
      `${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${RUNS} runs of each, load average ${load0.toFixed(1)} at the start` +
        ` (the machine is shared: wall times stretch with it). \`npm start\` spawned as an operator runs it, GET /health polled every 25 ms once it printed its Ready line;` +
        ` RSS = VmRSS of the server process (all its threads).${BASELINE ? ' Baseline: another checkout measured in the same run (BENCH_BASELINE_DIR).' : ''}`,
      '',
      ...table,
      '',
      STARTUP_KEEP_MARKER,
    ].join('\n');
    process.stdout.write(`\n${section}\n`);
    const file = join(ROOT, 'bench', 'RESULTS.md');
    writeFileSync(file, replaceSection(readFileSync(file, 'utf8'), '## Start-up and memory (npm run bench:startup)', STARTUP_KEEP_MARKER, section));
  } finally {
    up.child.kill('SIGTERM');
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
