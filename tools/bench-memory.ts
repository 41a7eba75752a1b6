import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Agent, request } from 'undici';
import { configureDefaultPolicy, freePort, r2, ROOT, start, startHealthy, threadCpuMs, THREAD_ROLE_SOURCE, treeCpuMs } from './bench-procs';
import { benignMegabyte, chatBody, envPairs, longStreamBody, messagesBody } from './bench-perf-lib';
import { benchStartSettings } from './start-settings';

/**
 * Resident memory of `node dist/main.js all` under bench:perf's load, per thread (npm run bench:memory;
 * issue 17). One run = a fresh process (embedded database, fresh DATA_DIR, every detector type on input
 * and output at L2, block) driven through bench:perf's phases, shortened: chat completions at
 * concurrency 1, 32 connections of chat completions (CPU per request of the process measured there),
 * sequential streams of both kinds, 1 MB `/v1/detect` calls, then 1,024 concurrent chat streams. Resident
 * memory is read right after start, right after the load (bench:perf's "after the benchmark") and after
 * BENCH_REST_S at rest; with it each thread's V8 heap (a `--require` probe writes
 * `v8.getHeapStatistics()` of every thread every 250 ms) and /proc/<pid>/smaps split into PGlite's
 * WebAssembly memory, the main malloc arena, other anonymous memory and file-backed pages.
 *
 * Settings (environment): BENCH_TREES (`label=/path/to/checkout,...`, default `this=<this checkout>`: the
 * trees measured, each with its own dist/, alternated run by run; `label=/path|--v8-flag ...` adds node options for
 * that entry only), BENCH_RUNS (3 per tree),
 * BENCH_SEQUENTIAL (200), BENCH_DURATION_S (4), BENCH_CONNECTIONS (32), BENCH_STREAM_SEQUENTIAL (100),
 * BENCH_DETECT_1MB (3, after one warm-up), BENCH_CONCURRENT_STREAMS (1024), BENCH_REST_S (35: past the idle reclaim's default 30 s),
 * BENCH_OURS_ENV (`KEY=value ...` for the measured process), BENCH_NODE_ARGS (extra `node` options for it, e.g.
 * V8 flags: `--heap-growing-percent=100`), BENCH_START_SETTINGS (false: without npm start's process settings,
 * tools/start-settings.ts; by default the measured process runs with them, as `npm start` does), BENCH_SNAPSHOT / BENCH_SNAPSHOT_MS (a heap
 * snapshot of the main thread that far into the concurrent streams; diagnosis only). Prints one line per run and a summary; writes
 * nothing to bench/RESULTS.md (copy what matters there).
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: Record<string, unknown>) => Promise<{ requests: { average: number; total: number }; non2xx: number; errors: number }>;

const env = process.env;
const RUNS = Number(env.BENCH_RUNS ?? 3);
const SEQUENTIAL = Number(env.BENCH_SEQUENTIAL ?? 200);
const DURATION_S = Number(env.BENCH_DURATION_S ?? 4);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 32);
const STREAM_SEQUENTIAL = Number(env.BENCH_STREAM_SEQUENTIAL ?? 100);
const DETECT_1MB = Number(env.BENCH_DETECT_1MB ?? 3);
const CONCURRENT_STREAMS = Number(env.BENCH_CONCURRENT_STREAMS ?? 1024);
const REST_S = Number(env.BENCH_REST_S ?? 35);
/** npm start's process settings (tools/start-settings.ts) unless BENCH_START_SETTINGS=false, plus BENCH_NODE_ARGS. */
const START = benchStartSettings(env);
/** `label=dir` or `label=dir|node options` (options for that tree only, e.g. `after-hgp=.|--heap-growing-percent=50`). */
const TREES = (env.BENCH_TREES ?? `this=${ROOT}`).split(',').map((s) => {
  const [spec = '', args = ''] = s.split('|');
  const eq = spec.indexOf('=');
  const nodeArgs = args.split(/\s+/).filter(Boolean);
  return eq > 0 ? { label: spec.slice(0, eq), dir: resolve(spec.slice(eq + 1)), nodeArgs } : { label: spec, dir: resolve(spec), nodeArgs };
});


/** Loaded with --require into every thread of the measured process (workers inherit it). */
const PROBE = `'use strict';
const { readlinkSync, writeFileSync } = require('node:fs');
const v8 = require('node:v8');
const wt = require('node:worker_threads');
const dir = process.env.MEM_PROBE_DIR;
if (dir) {
  ${THREAD_ROLE_SOURCE}
  // This thread's Linux thread id (its CPU time is /proc/<pid>/task/<tid>/stat).
  let tid = '';
  try { tid = readlinkSync('/proc/thread-self').split('/').pop(); } catch {}
  const write = () => {
    const h = v8.getHeapStatistics();
    const spaces = {};
    for (const sp of v8.getHeapSpaceStatistics()) spaces[sp.space_name.replace(/_space$/, '')] = [sp.space_size, sp.space_used_size];
    try {
      writeFileSync(dir + '/' + process.pid + '-' + wt.threadId + '.json', JSON.stringify({ role: role(), tid, t: Date.now(), committed: h.total_heap_size, used: h.used_heap_size, external: h.external_memory, malloced: h.malloced_memory, spaces }));
    } catch {}
  };
  write();
  setInterval(write, 250).unref();
}
`;

interface Snapshot {
  rssMb: number;
  /** Committed V8 heap per thread role (MB; several workers of a role summed), and their count. */
  heaps: Record<string, { mb: number; usedMb: number; n: number; spaces: Record<string, [number, number]> }>;
  smaps: { wasm: number; mallocMain: number; anonOther: number; file: number };
}

const mb = (bytes: number) => r2(bytes / 1048576);

/**
 * /proc/<pid>/smaps resident MB, split: PGlite's WebAssembly memory (the one writable anonymous mapping of ≥ 96 MB: its
 * memory is mapped at 128 MB, malloc's thread arenas are at most 64 MB and V8's heap pages are smaller), the main thread's
 * malloc arena ([heap]), other anonymous memory (V8 heaps of every thread, thread arenas, stacks) and file-backed pages.
 */
function smaps(pid: number): Snapshot['smaps'] {
  const text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  const out = { wasm: 0, mallocMain: 0, anonOther: 0, file: 0 };
  let kind: keyof typeof out = 'anonOther';
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (head) {
      const size = parseInt(head[2]!, 16) - parseInt(head[1]!, 16);
      const name = head[4]!.trim();
      kind = name === '[heap]' ? 'mallocMain' : head[3] !== '0' || name.startsWith('/') ? 'file' : size >= 96 << 20 && head[0]!.includes(' rw') ? 'wasm' : 'anonOther';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) out[kind] += Number(rss[1]);
  }
  return { wasm: r2(out.wasm / 1024), mallocMain: r2(out.mallocMain / 1024), anonOther: r2(out.anonOther / 1024), file: r2(out.file / 1024) };
}

/** What the probe last wrote for each thread of the process `pid` (a file being written is skipped). */
interface ProbeRecord {
  role: string;
  tid?: string;
  t: number;
  committed: number;
  used: number;
  spaces: Record<string, [number, number]>;
}
function probeRecords(pid: number, probeDir: string): ProbeRecord[] {
  const out: ProbeRecord[] = [];
  for (const f of readdirSync(probeDir)) {
    if (!f.startsWith(`${pid}-`)) continue;
    try {
      out.push(JSON.parse(readFileSync(join(probeDir, f), 'utf8')) as ProbeRecord);
    } catch {
      // written meanwhile
    }
  }
  return out;
}

async function snapshot(pid: number, probeDir: string): Promise<Snapshot> {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssMb = r2(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024);
  const heaps: Snapshot['heaps'] = {};
  const now = Date.now();
  for (const s of probeRecords(pid, probeDir)) {
    if (now - s.t > 3000) continue; // a thread that has ended (a pool worker stopped)
    const h = (heaps[s.role] ??= { mb: 0, usedMb: 0, n: 0, spaces: {} });
    for (const [k, [size, used]] of Object.entries(s.spaces)) {
      const sp = (h.spaces[k] ??= [0, 0]);
      sp[0] = r2(sp[0] + mb(size));
      sp[1] = r2(sp[1] + mb(used));
    }
    h.mb = r2(h.mb + mb(s.committed));
    h.usedMb = r2(h.usedMb + mb(s.used));
    h.n++;
  }
  return { rssMb, heaps, smaps: smaps(pid) };
}


let requestNo = 0;

async function expectOk(res: Awaited<ReturnType<typeof request>>, what: string): Promise<string> {
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${what}: ${res.statusCode} ${text.slice(0, 200)}`);
  return text;
}

interface RunResult {
  label: string;
  start: Snapshot;
  /** After the chat completions, the sequential streams and the 1 MB detects (before the concurrent streams). */
  afterDetect: Snapshot;
  after: Snapshot;
  rest?: Snapshot;
  hwmMb: number;
  rps: number;
  cpuMsPerRequest: number;
  /**
   * The same CPU per request (µs) by thread: the roles the probe names (main, detection, database, workers),
   * and `V8 and libuv threads` for the rest (V8's platform threads: parallel and concurrent GC, the optimising
   * compiler; libuv's pool).
   */
  cpuUsPerRequestByThread: Record<string, number>;
  streamsComplete: number;
  detectMs: number[];
}

async function oneRun(tree: { label: string; dir: string; nodeArgs: string[] }, log: (m: string) => void): Promise<RunResult> {
  const procs: Array<{ kill: (s: NodeJS.Signals) => void }> = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-memory-'));
  const probeDir = mkdtempSync(join(tmpdir(), 'gw-bench-memory-probe-'));
  writeFileSync(join(probeDir, 'probe.cjs'), PROBE);
  try {
    const up = await start(['dist/tools/bench-upstream.js'], { STREAM_EVENTS: '10', STREAM_GAP_MS: '2' }, /PORT (\d+)/);
    procs.push(up.child);
    const upstream = `http://127.0.0.1:${up.match[1]}`;
    const [port, sensorPort] = [await freePort(), await freePort()];
    const key = `svc_sk_${randomBytes(24).toString('hex').slice(0, 40)}`;
    const gwEnv = {
      PORT: String(port), SENSOR_PORT: String(sensorPort), DETECTION_ADDRESS: '127.0.0.1:0', DATA_DIR: dataDir, BOOTSTRAP_API_KEY: key,
      OPENAI_BASE_URL: `${upstream}/v1`, ANTHROPIC_BASE_URL: upstream, OPENAI_API_KEY: 'sk-bench', LOG_LEVEL: 'info',
      PLATFORM_TRAFFIC_RPM: '10000000', MEM_PROBE_DIR: probeDir,
      ...START.env,
      ...envPairs(env.BENCH_OURS_ENV),
    };
    const gateway = `http://127.0.0.1:${port}`;
    const sensor = `http://127.0.0.1:${sensorPort}`;
    const nodeArgs = [...START.nodeArgs, ...tree.nodeArgs];
    const gw = await startHealthy([...nodeArgs, '--require', join(probeDir, 'probe.cjs'), join(tree.dir, 'dist', 'main.js'), 'all'], gwEnv, [`${gateway}/health`, `${sensor}/health`], 180_000);
    procs.push(gw.child);
    const pid = gw.child.pid!;
    await new Promise((r) => setTimeout(r, 600)); // every thread's probe has written once
    const startSnap = await snapshot(pid, probeDir);
    log(`healthy after ${r2(gw.ms)} ms, ${startSnap.rssMb} MB`);
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    await configureDefaultPolicy(gateway, auth, (types) => types.map((t) => ({ detector_type: t.value, threshold: 'L2', action: 'block' })));

    const one = new Agent({ connections: 1 });
    for (let i = 0; i < SEQUENTIAL; i++) {
      await expectOk(await request(`${gateway}/v1/chat/completions`, { method: 'POST', headers: auth, body: chatBody(requestNo++), dispatcher: one }), 'chat completion');
    }

    let i = 0;
    const requests = [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, body: chatBody(requestNo + i++) }) }];
    const opts = { url: `${gateway}/v1/chat/completions`, method: 'POST', headers: auth, requests, connections: CONNECTIONS };
    await autocannon({ ...opts, duration: 1 });
    const cpu0 = treeCpuMs(pid);
    const threads0 = threadCpuMs(pid);
    const res = await autocannon({ ...opts, duration: DURATION_S });
    const cpu = treeCpuMs(pid) - cpu0;
    const cpuUsPerRequestByThread = byThread(pid, threads0, threadCpuMs(pid), probeDir, res.requests.total);
    requestNo += i;
    if (res.errors + res.non2xx > 0) throw new Error(`load: ${res.errors} errors, ${res.non2xx} not 2xx`);

    const anthropic = { 'content-type': 'application/json', 'x-api-key': 'sk-ant-bench', 'anthropic-version': '2023-06-01', 'x-svc-key': key };
    for (let s = 0; s < STREAM_SEQUENTIAL; s++) {
      await expectOk(await request(`${sensor}/v1/messages`, { method: 'POST', headers: anthropic, body: messagesBody(requestNo++), dispatcher: one }), 'messages stream');
      await expectOk(await request(`${gateway}/v1/chat/completions`, { method: 'POST', headers: auth, body: chatBody(requestNo++, true), dispatcher: one }), 'chat stream');
    }
    await one.close();

    log(`load done (${r2(res.requests.average)} req/s), streams done; 1 MB detects`);
    const detectMs: number[] = [];
    for (let d = 0; d <= DETECT_1MB; d++) {
      const body = JSON.stringify({ content: benignMegabyte(requestNo++), direction: 'input' });
      const t0 = process.hrtime.bigint();
      await expectOk(await request(`${gateway}/v1/detect`, { method: 'POST', headers: auth, body, headersTimeout: 120_000, bodyTimeout: 120_000 }), '1 MB detect');
      if (d > 0) detectMs.push(r2(Number(process.hrtime.bigint() - t0) / 1e6));
    }

    // BENCH_SNAPSHOT=1 (diagnosis only): a heap snapshot of the main thread BENCH_SNAPSHOT_MS (1500) into the concurrent streams
    // (with BENCH_NODE_ARGS=--heapsnapshot-signal=SIGUSR2; node writes it to the working directory).
    const afterDetect = await snapshot(pid, probeDir);
    log(`1 MB detects done (${afterDetect.rssMb} MB); ${CONCURRENT_STREAMS} concurrent streams`);
    const snap = env.BENCH_SNAPSHOT === '1' ? setTimeout(() => process.kill(pid, 'SIGUSR2'), Number(env.BENCH_SNAPSHOT_MS ?? 1500)) : undefined;
    const many = new Agent({ connections: CONCURRENT_STREAMS + 8, pipelining: 1, connectTimeout: 120_000, headersTimeout: 120_000, bodyTimeout: 120_000 });
    const base = requestNo;
    requestNo += CONCURRENT_STREAMS;
    let complete = 0;
    await Promise.all(
      Array.from({ length: CONCURRENT_STREAMS }, async (_, k) => {
        try {
          const r = await request(`${gateway}/v1/chat/completions`, { method: 'POST', headers: auth, body: longStreamBody(base + k), dispatcher: many });
          const text = await r.body.text();
          if (r.statusCode === 200 && text.trimEnd().endsWith('data: [DONE]')) complete++;
        } catch {
          // counted as incomplete
        }
      }),
    );
    await many.close();
    clearTimeout(snap);
    const after = await snapshot(pid, probeDir);
    log('concurrent streams done');
    const hwmMb = r2(Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024);
    let rest: Snapshot | undefined;
    if (REST_S > 0) {
      await new Promise((r) => setTimeout(r, REST_S * 1000));
      rest = await snapshot(pid, probeDir);
    }
    return { label: tree.label, start: startSnap, afterDetect, after, rest, hwmMb, rps: r2(res.requests.average), cpuMsPerRequest: r2(cpu / Math.max(1, res.requests.total)), cpuUsPerRequestByThread, streamsComplete: complete, detectMs };
  } finally {
    for (const p of procs.reverse()) p.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(probeDir, { recursive: true, force: true });
  }
}

/** CPU µs per request of each thread role between two readings (threadCpuMs), the probe's files naming the threads. */
function byThread(pid: number, before: Map<string, number>, after: Map<string, number>, probeDir: string, requests: number): Record<string, number> {
  const roles = new Map<string, string>();
  for (const s of probeRecords(pid, probeDir)) if (s.tid) roles.set(s.tid, s.role);
  const out: Record<string, number> = {};
  for (const [tid, ms] of after) {
    const role = roles.get(tid) ?? 'V8 and libuv threads';
    out[role] = (out[role] ?? 0) + ms - (before.get(tid) ?? 0);
  }
  return Object.fromEntries(
    Object.entries(out)
      .filter(([, ms]) => ms > 0)
      .sort(([, a], [, b]) => b - a)
      .map(([role, ms]) => [role, Math.round((ms * 1000) / Math.max(1, requests))]),
  );
}

const threadText = (t: Record<string, number>) => Object.entries(t).map(([role, us]) => `${role} ${us}`).join(', ');
/** Each thread role's µs per request over the runs (min–max), in the first run's order. */
const threadRanges = (rs: RunResult[]) =>
  [...new Set(rs.flatMap((r) => Object.keys(r.cpuUsPerRequestByThread)))].map((role) => `${role} ${range(rs.map((r) => r.cpuUsPerRequestByThread[role] ?? 0))}`).join(', ');

/** The spaces of ≥ 1 MB committed: name committed/used. */
const spaceText = (spaces: Record<string, [number, number]>) =>
  Object.entries(spaces)
    .filter(([, [size]]) => size >= 1)
    .map(([k, [size, used]]) => `${k} ${Math.round(size)}/${Math.round(used)}`)
    .join(' ');
const heapText = (s: Snapshot) =>
  Object.entries(s.heaps)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([role, h]) => `${role}${h.n > 1 ? `×${h.n}` : ''} ${Math.round(h.mb)} (used ${Math.round(h.usedMb)}; ${spaceText(h.spaces)})`)
    .join(', ');
const smapsText = (s: Snapshot) => `wasm ${Math.round(s.smaps.wasm)}, [heap] ${Math.round(s.smaps.mallocMain)}, other anon ${Math.round(s.smaps.anonOther)}, file ${Math.round(s.smaps.file)}`;

function range(xs: number[], digits = 0): string {
  const f = (x: number) => x.toFixed(digits);
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? '–' : s[0] === s[s.length - 1] ? f(s[0]!) : `${f(s[0]!)}–${f(s[s.length - 1]!)}`;
}

async function main(): Promise<void> {
  const results: RunResult[] = [];
  for (let run = 1; run <= RUNS; run++) {
    // Alternated: the order of the trees flips every run, so a quieter or busier minute hits both.
    const order = run % 2 === 1 ? TREES : [...TREES].reverse();
    for (const tree of order) {
      const log = (m: string) => process.stderr.write(`${new Date().toISOString().slice(11, 23)} [run ${run} ${tree.label}] ${m}\n`);
      const r = await oneRun(tree, log);
      results.push(r);
      log(`RSS start ${r.start.rssMb} / after ${r.after.rssMb} / rest ${r.rest?.rssMb ?? '–'} MB (peak ${r.hwmMb}); ${r.rps} req/s, CPU ${r.cpuMsPerRequest} ms/req (µs by thread: ${threadText(r.cpuUsPerRequestByThread)}); 1 MB detect ${r.detectMs.join(', ')} ms; ${r.streamsComplete}/${CONCURRENT_STREAMS} streams`);
      for (const [name, s] of [['start', r.start], ['after the 1 MB detects', r.afterDetect], ['after', r.after], ['rest', r.rest]] as const) {
        if (s) log(`  ${name}: heaps (MB committed) ${heapText(s)}; smaps (MB) ${smapsText(s)}`);
      }
    }
  }
  process.stdout.write(`\n| tree | runs | RSS start (MB) | RSS after the load (MB) | RSS at rest after ${REST_S} s (MB) | peak (MB) | CPU ms/request at ${CONNECTIONS} | of it by thread (µs) | req/s | 1 MB detect (ms) |\n|---|---|---|---|---|---|---|---|---|---|\n`);
  for (const t of TREES) {
    const rs = results.filter((r) => r.label === t.label);
    process.stdout.write(
      `| ${t.label} | ${rs.length} | ${range(rs.map((r) => r.start.rssMb))} | ${range(rs.map((r) => r.after.rssMb))} | ${range(rs.filter((r) => r.rest).map((r) => r.rest!.rssMb))} | ${range(rs.map((r) => r.hwmMb))} | ${range(rs.map((r) => r.cpuMsPerRequest), 2)} | ${threadRanges(rs)} | ${range(rs.map((r) => r.rps))} | ${range(rs.flatMap((r) => r.detectMs))} |\n`,
    );
  }
  process.stdout.write(`\nJSON: ${JSON.stringify(results)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
