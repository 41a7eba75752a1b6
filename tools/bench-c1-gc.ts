import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { configureDefaultPolicy, freePort, quantile, r2, start, startHealthy, THREAD_ROLE_SOURCE } from './bench-procs';
import { chatBody, envPairs } from './bench-perf-lib';
import { benchStartSettings } from './start-settings';

/**
 * `npm run bench:c1-gc`: which latency outliers at concurrency 1 are garbage-collection pauses (issue 17, the p99
 * line). Starts `node dist/main.js all` as bench:perf does (npm start's process settings, embedded database, fresh
 * DATA_DIR, every detector type on input and output at L2, block; the fake upstream), warms it up with
 * BENCH_WARMUP_S (5) seconds at 32 connections, then sends BENCH_SEQUENTIAL (600) chat completions one at a time.
 * A `--require` probe records every GC pause of every thread (a `gc` PerformanceObserver per thread: start,
 * duration, kind). Prints the latency p50 / p90 / p99 / max, each thread's pauses during the sequential requests
 * (count, total, longest, by kind), and for the slowest BENCH_SLOWEST_PCT (2) % of the requests the pauses that
 * overlap each.
 *
 * Settings (environment): BENCH_RUNS (1), BENCH_OURS_ENV (`KEY=value …` for the measured process),
 * BENCH_NODE_ARGS and BENCH_START_SETTINGS (as for bench:perf; e.g. `--trace-gc-nvp` to see each scavenge's
 * survivors: the process's stdout is dropped, so run it by hand for that).
 * BENCH_CPU_PROF=1: the measured process also runs with `--cpu-prof` (every thread, 250 µs samples), and for each
 * of the slowest requests the tool prints what every thread was doing during it (busy ms and the functions with
 * the most self time), next to the same for the median request: what the outliers that overlap no GC pause are.
 * BENCH_HEAP_PROF=1: every thread's allocations during the sequential requests are sampled (the inspector's
 * sampling heap profiler, objects freed by either kind of collection included: every byte allocated, not only what
 * survives), and the tool prints, for the main, detection and database threads, the bytes allocated per request by
 * the nearest frame of this project's code (or the library / Node internals where none is on the stack).
 */

const env = process.env;
const RUNS = Number(env.BENCH_RUNS ?? 1);
const SEQUENTIAL = Number(env.BENCH_SEQUENTIAL ?? 600);
const WARMUP_S = Number(env.BENCH_WARMUP_S ?? 5);
const SLOWEST_PCT = Number(env.BENCH_SLOWEST_PCT ?? 2);
const CPU_PROF = env.BENCH_CPU_PROF === '1';
const HEAP_PROF = env.BENCH_HEAP_PROF === '1';
const START = benchStartSettings(env);

// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: Record<string, unknown>) => Promise<{ requests: { average: number } }>;

/** Loaded with --require into every thread of the measured process (workers inherit it): appends each GC pause to GC_TIMELINE. */
const PROBE = `'use strict';
const { appendFileSync } = require('node:fs');
const { PerformanceObserver, performance } = require('node:perf_hooks');
const wt = require('node:worker_threads');
${THREAD_ROLE_SOURCE}
const file = process.env.GC_TIMELINE;
if (file) {
  let named = 0;
  let pending = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) pending.push((performance.timeOrigin + e.startTime).toFixed(3) + ' ' + e.duration.toFixed(3) + ' ' + (e.detail ? e.detail.kind : e.kind));
  }).observe({ entryTypes: ['gc'] });
  setInterval(() => {
    // Which thread this is, once its modules say so (the CPU profiles are named by thread id).
    if (named >= 0 && (role() !== 'worker' || ++named > 50)) {
      appendFileSync(file + '.threads', role() + ' ' + wt.threadId + '\\n');
      named = -1;
    }
    if (pending.length === 0) return;
    const r = role();
    appendFileSync(file, pending.map((p) => r + ' ' + p + '\\n').join(''));
    pending = [];
  }, 100).unref();
}
const heapFile = process.env.HEAP_PROFILE;
if (heapFile) {
  // Each thread samples its allocations while the file HEAP_PROFILE + '.on' exists, and then writes its profile
  // to HEAP_PROFILE + '.<role>.json' (signals reach the main thread only; a file reaches every thread).
  const { existsSync, writeFileSync } = require('node:fs');
  const session = new (require('node:inspector').Session)();
  session.connect();
  let sampling = false;
  setInterval(() => {
    const on = existsSync(heapFile + '.on');
    if (on && !sampling) {
      sampling = true;
      session.post('HeapProfiler.enable', () =>
        session.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }),
      );
    } else if (!on && sampling) {
      sampling = false;
      const out = heapFile + '.' + role() + '.json';
      session.post('HeapProfiler.stopSampling', (err, res) => writeFileSync(out, err ? JSON.stringify({ error: String(err) }) : JSON.stringify(res.profile)));
    }
  }, 50).unref();
}
`;

interface Pause {
  thread: string;
  at: number;
  ms: number;
  kind: string;
}

const KINDS: Record<string, string> = { '1': 'scavenge', '2': 'minor mark-compact', '4': 'mark-compact', '8': 'incremental marking', '16': 'weak callbacks' };

async function oneRun(run: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-c1-gc-'));
  const probe = join(dir, 'probe.cjs');
  const timeline = join(dir, 'gc.txt');
  const heapProfile = join(dir, 'heap.json');
  writeFileSync(probe, PROBE);
  writeFileSync(timeline, '');
  const procs: Array<{ kill: (s: NodeJS.Signals) => void }> = [];
  try {
    const up = await start(['dist/tools/bench-upstream.js'], { STREAM_EVENTS: '10', STREAM_GAP_MS: '2' }, /PORT (\d+)/);
    procs.push(up.child);
    const upstream = `http://127.0.0.1:${up.match[1]}`;
    const [port, sensorPort] = [await freePort(), await freePort()];
    const key = `svc_sk_${randomBytes(24).toString('hex').slice(0, 40)}`;
    const gwEnv = {
      PORT: String(port), SENSOR_PORT: String(sensorPort), DETECTION_ADDRESS: '127.0.0.1:0', DATA_DIR: join(dir, 'data'), BOOTSTRAP_API_KEY: key,
      OPENAI_BASE_URL: `${upstream}/v1`, ANTHROPIC_BASE_URL: upstream, OPENAI_API_KEY: 'sk-bench', LOG_LEVEL: 'info',
      PLATFORM_TRAFFIC_RPM: '10000000', GC_TIMELINE: timeline,
      ...(HEAP_PROF ? { HEAP_PROFILE: heapProfile } : {}),
      ...START.env,
      ...envPairs(env.BENCH_OURS_ENV),
    };
    const gateway = `http://127.0.0.1:${port}`;
    const profDir = join(dir, 'prof');
    const profArgs = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, '--cpu-prof-interval=250'] : [];
    const gw = await startHealthy([...START.nodeArgs, ...profArgs, '--require', probe, 'dist/main.js', 'all'], gwEnv, [`${gateway}/health`, `http://127.0.0.1:${sensorPort}/health`], 180_000);
    procs.push(gw.child);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    await configureDefaultPolicy(gateway, headers, (types) => types.map((t) => ({ detector_type: t.value, threshold: 'L2', action: 'block' })));
    if (WARMUP_S > 0) await autocannon({ url: `${gateway}/v1/chat/completions`, method: 'POST', headers, body: chatBody(1), connections: 32, duration: WARMUP_S });

    const agent = new Agent({ connections: 1 });
    const spans: Array<[number, number]> = [];
    /** The same spans on the monotonic clock in µs (the clock of V8's CPU profiles). */
    const monoSpans: Array<[number, number]> = [];
    const now = () => performance.timeOrigin + performance.now();
    const micros = () => Number(process.hrtime.bigint() / 1000n);
    if (HEAP_PROF) {
      writeFileSync(`${heapProfile}.on`, '');
      await new Promise((r) => setTimeout(r, 500));
    }
    for (let i = 0; i < SEQUENTIAL; i++) {
      const m0 = micros();
      const t0 = now();
      const res = await request(`${gateway}/v1/chat/completions`, { method: 'POST', headers, body: chatBody(100_000 + i), dispatcher: agent });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`chat completion answered ${res.statusCode}: ${text.slice(0, 300)}`);
      spans.push([t0, now()]);
      monoSpans.push([m0, micros()]);
    }
    if (HEAP_PROF) rmSync(`${heapProfile}.on`);
    await new Promise((r) => setTimeout(r, 300)); // the probes' last writes
    await agent.close();

    const [first, last] = [spans[0]![0], spans.at(-1)![1]];
    const pauses: Pause[] = readFileSync(timeline, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [thread, at, ms, kind] = l.split(' ');
        return { thread: thread!, at: Number(at), ms: Number(ms), kind: KINDS[kind!] ?? `kind ${kind}` };
      })
      .filter((p) => p.at + p.ms >= first && p.at <= last);
    const latency = spans.map(([a, b]) => b - a);
    const sorted = [...latency].sort((a, b) => a - b);
    const q = (p: number) => r2(quantile(sorted, p));
    console.log(`\nrun ${run}: ${SEQUENTIAL} chat completions at concurrency 1: p50 ${q(0.5)} / p90 ${q(0.9)} / p99 ${q(0.99)} / max ${r2(sorted.at(-1)!)} ms (client side, the fake upstream included)`);
    const groups = new Map<string, number[]>();
    for (const p of pauses) (groups.get(`${p.thread} ${p.kind}`) ?? groups.set(`${p.thread} ${p.kind}`, []).get(`${p.thread} ${p.kind}`)!).push(p.ms);
    console.log('GC pauses during them, per thread and kind:');
    for (const [k, ms] of [...groups].sort((a, b) => b[1].reduce((x, y) => x + y, 0) - a[1].reduce((x, y) => x + y, 0))) {
      console.log(`  ${k.padEnd(36)} ${String(ms.length).padStart(5)} pauses, ${r2(ms.reduce((x, y) => x + y, 0))} ms in all, longest ${r2(Math.max(...ms))} ms`);
    }
    const cut = quantile(sorted, 1 - SLOWEST_PCT / 100);
    const overlapping = (a: number, b: number) => pauses.filter((p) => p.at < b && p.at + p.ms > a);
    const slow = spans.map(([a, b], i) => ({ a, b, ms: latency[i]! })).filter((x) => x.ms >= cut);
    let withPause = 0;
    for (const s of slow) {
      const over = overlapping(s.a, s.b);
      if (over.length) withPause++;
      console.log(`  slow ${r2(s.ms)} ms: ${over.map((p) => `${p.thread} ${p.kind} ${r2(p.ms)} ms`).join(', ') || 'no GC pause'}`);
    }
    const anyPause = spans.filter(([a, b]) => overlapping(a, b).length > 0).length;
    console.log(`slowest ${SLOWEST_PCT}% (${slow.length} requests): ${withPause} overlap a GC pause of some thread; of all ${SEQUENTIAL} requests, ${anyPause} do`);
    if (HEAP_PROF) {
      // Every serving thread writes its profile (the pool workers idle at concurrency 1: theirs are left out).
      for (const thread of ['main', 'detection', 'database']) {
        const file = `${heapProfile}.${thread}.json`;
        for (let waited = 0; !existsSync(file) && waited < 30_000; waited += 100) await new Promise((r) => setTimeout(r, 100));
        if (existsSync(file)) printAllocations(thread, JSON.parse(readFileSync(file, 'utf8')) as HeapProfile, SEQUENTIAL);
        else console.log(`\n${thread} thread: no heap profile written`);
      }
    }
    if (CPU_PROF) {
      // The profiles are written when the process exits.
      gw.child.kill('SIGTERM');
      await once(gw.child, 'exit');
      const roles = new Map(
        (existsSync(`${timeline}.threads`) ? readFileSync(`${timeline}.threads`, 'utf8') : '')
          .split('\n')
          .filter(Boolean)
          .map((l) => [l.split(' ')[1]!, l.split(' ')[0]!] as const),
      );
      const profiles = readdirSync(profDir)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => ({ thread: roles.get(f.split('.').at(-3)!) ?? `thread ${f.split('.').at(-3)}`, profile: loadProfile(join(profDir, f)) }));
      const order = latency.map((ms, i) => ({ ms, i })).sort((x, y) => x.ms - y.ms);
      const median = order.slice(Math.floor(order.length * 0.45), Math.ceil(order.length * 0.55)).map((x) => x.i);
      console.log(`\nWhat each thread did (CPU profiles, 250 µs samples; busy ms and the top self-time functions), the median 10% of requests averaged:`);
      for (const { thread, profile } of profiles) {
        const d = during(profile, median.map((i) => monoSpans[i]!));
        if (d.busy / median.length >= 0.05) console.log(`  ${thread.padEnd(11)} ${describe(d, median.length)}`);
      }
      for (const s of slow) {
        const i = spans.findIndex(([a]) => a === s.a);
        console.log(`slow ${r2(s.ms)} ms:`);
        for (const { thread, profile } of profiles) {
          const d = during(profile, [monoSpans[i]!]);
          if (d.busy >= 0.5) console.log(`  ${thread.padEnd(11)} ${describe(d, 1)}`);
        }
      }
    }
  } finally {
    for (const p of procs.reverse()) p.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    rmSync(dir, { recursive: true, force: true });
  }
}

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}
interface HeapProfile {
  head?: HeapNode;
  error?: string;
}

/** Bytes allocated per request by the nearest frame of this project (dist/), else by the first library or Node frame. */
function printAllocations(thread: string, profile: HeapProfile, requests: number): void {
  if (!profile.head) {
    console.log(`\n${thread} thread: heap profile ${profile.error ?? 'empty'}`);
    return;
  }
  const bySite = new Map<string, number>();
  let total = 0;
  const label = (f: HeapNode['callFrame']): string => `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/dist\//, '').replace(/^.*\/node_modules\//, '')}:${f.lineNumber + 1}`;
  const walk = (node: HeapNode, project: string | undefined, outside: string | undefined): void => {
    const f = node.callFrame;
    const here = f.url.includes('/dist/') && !f.url.includes('/node_modules/') ? label(f) : undefined;
    const site = here ?? project;
    const lib = outside ?? (f.url && !f.url.includes('/dist/') ? `${label(f)} (no project frame)` : undefined);
    if (node.selfSize > 0) {
      const key = site ?? lib ?? `${f.functionName || '(root)'} (no project frame)`;
      bySite.set(key, (bySite.get(key) ?? 0) + node.selfSize);
      total += node.selfSize;
    }
    for (const c of node.children) walk(c, site, site ? undefined : lib);
  };
  walk(profile.head, undefined, undefined);
  console.log(`\n${thread} thread: ${r2(total / requests / 1024)} KB allocated per request (sampled, every object counted until collected); by the nearest project frame:`);
  for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
    console.log(`  ${r2(bytes / requests / 1024).toString().padStart(7)} KB  ${r2((100 * bytes) / total).toString().padStart(5)}%  ${site}`);
  }
}

interface Profile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
  startTime: number;
}

/** A CPU profile's samples as [time µs, node id] and its nodes by id. */
function loadProfile(file: string): { times: number[]; ids: number[]; names: Map<number, string> } {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const names = new Map(
    p.nodes.map((n) => {
      const f = n.callFrame;
      const where = f.url ? ` ${f.url.replace(/^.*\/(node_modules\/)?/, '')}:${f.lineNumber + 1}` : '';
      return [n.id, `${f.functionName || '(anonymous)'}${where}`];
    }),
  );
  const times: number[] = [];
  let at = p.startTime;
  for (const d of p.timeDeltas) times.push((at += d));
  return { times, ids: p.samples, names };
}

/** Self time per function (ms) of one thread within the given spans (µs, monotonic), idle left out. */
function during(profile: ReturnType<typeof loadProfile>, spans: Array<[number, number]>): { busy: number; top: Array<[string, number]> } {
  const self = new Map<string, number>();
  let busy = 0;
  for (const [a, b] of spans) {
    // Samples are in time order: binary search for the first one inside the span.
    let lo = 0;
    let hi = profile.times.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (profile.times[mid]! < a) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; k < profile.times.length && profile.times[k]! <= b; k++) {
      const name = profile.names.get(profile.ids[k]!)!;
      if (name.startsWith('(idle)')) continue;
      const dt = ((profile.times[k + 1] ?? profile.times[k]!) - profile.times[k]!) / 1000;
      busy += dt;
      self.set(name, (self.get(name) ?? 0) + dt);
    }
  }
  return { busy, top: [...self].sort((x, y) => y[1] - x[1]).slice(0, 4) };
}

function describe(d: { busy: number; top: Array<[string, number]> }, n: number): string {
  return `busy ${r2(d.busy / n)} ms: ${d.top.map(([f, ms]) => `${f} ${r2(ms / n)}`).join('; ')}`;
}

async function main(): Promise<void> {
  console.log(`bench:c1-gc: this project's process: node ${START.nodeArgs.join(' ')} dist/main.js all${START.enabled ? " (npm start's process settings)" : ''}`);
  for (let r = 1; r <= RUNS; r++) await oneRun(r);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
