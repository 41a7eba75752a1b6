import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { createDetectionEngine } from '#src/detection/engine';
import { createDetectionClient } from '#src/shared/detection-client';
import { blockPolicy, configureDefaultPolicy, freePort, quantile, r2, ROOT, start, startHealthy, treeCpuMs, treeRssMb } from './bench-procs';
import { benignMegabyte, benignPrompt, chatBody, envPairs, longStreamBody, messagesBody, range, renderDetails, renderTable, rows, type Lat, type PerfRun, type SystemId, type SystemRun } from './bench-perf-lib';
import { replaceSection } from './results-sections';
import { benchStartSettings } from './start-settings';

/**
 * Performance v2, side by side (npm run bench:perf): the same fake upstream (bench-upstream.ts, OpenAI
 * and Anthropic wire formats, JSON and SSE) called directly, through an empty Node.js proxy
 * (bench-passthrough.ts), through this project (`node dist/main.js all` with npm start's process settings, embedded database, fresh
 * DATA_DIR, every detector type — signatures and the builtin classifiers — on input and output at L2,
 * action block) and through Portkey's open-source gateway (@portkey-ai/gateway 1.15.2, its Node build;
 * skipped with a message when it does not start). Each system runs in its own processes; the load comes
 * from this driver. The whole comparison runs BENCH_RUNS times with fresh processes, and the issue-17
 * table is printed as ranges over the runs of ratios against the floors measured in the same run, and
 * written to bench/RESULTS.md (its own section).
 *
 * Settings (environment): BENCH_RUNS (3), BENCH_SEQUENTIAL (600 requests per system at concurrency 1),
 * BENCH_DURATION_S (4 s of load per system, after 1 s of warm-up), BENCH_CONNECTIONS (32),
 * BENCH_STREAM_SEQUENTIAL (150 streams per system and kind), BENCH_STREAM_GAP_MS (2: the upstream's gap
 * between stream events), BENCH_CONCURRENT_STREAMS (1024), BENCH_DETECT_1MB (5 calls), BENCH_PORTKEY
 * (false: leave Portkey out), BENCH_DESIGN (false: leave out the measured floor of this design,
 * bench-design-floor.ts), BENCH_LOG_LEVEL (info: the gateway's LOG_LEVEL), BENCH_WRITE (false: print
 * only, leave bench/RESULTS.md alone), BENCH_REST_S (35: resident memory is read again this long after the
 * benchmark, nothing sent meanwhile; 0 skips it), BENCH_OURS_ENV (extra environment for this project's process,
 * `KEY=value` pairs separated by spaces, e.g. `CLASSIFIER_WORKERS=0 AUDIT_TOKEN_WORKERS=0` to measure a setting),
 * BENCH_NODE_ARGS (extra `node` options for this project's process), BENCH_START_SETTINGS (false: start this
 * project without npm start's process settings, tools/start-settings.ts: `--heap-growing-percent=30` and the
 * glibc malloc variables; by default it runs with them, as `npm start` does).
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: Record<string, unknown>) => Promise<{ requests: { average: number; total: number }; non2xx: number; errors: number }>;

const env = process.env;
const RUNS = Number(env.BENCH_RUNS ?? 3);
const SEQUENTIAL = Number(env.BENCH_SEQUENTIAL ?? 600);
const DURATION_S = Number(env.BENCH_DURATION_S ?? 4);
const CONNECTIONS = Number(env.BENCH_CONNECTIONS ?? 32);
const STREAM_SEQUENTIAL = Number(env.BENCH_STREAM_SEQUENTIAL ?? 150);
const STREAM_GAP_MS = Number(env.BENCH_STREAM_GAP_MS ?? 2);
const STREAM_EVENTS = 10;
const CONCURRENT_STREAMS = Number(env.BENCH_CONCURRENT_STREAMS ?? 1024);
const DETECT_1MB = Number(env.BENCH_DETECT_1MB ?? 5);
const WITH_PORTKEY = env.BENCH_PORTKEY !== 'false';
/** The measured floor of this design (bench-design-floor.ts) as a fifth system; BENCH_DESIGN=false leaves it out. */
const WITH_DESIGN = env.BENCH_DESIGN !== 'false';
/** At rest: read after the idle reclaim's default quiet period (MEMORY_RECLAIM_IDLE_MS, 30 s) has passed. */
const REST_S = Number(env.BENCH_REST_S ?? 35);
/** Unmeasured load per system before the first measured phase (seconds): the JIT settles (see warmUp). */
const WARMUP_S = Number(env.BENCH_WARMUP_S ?? 5);
/** Requests of the in-process detectors-alone floor (input + output scan each). */
const ALONE_REQUESTS = Number(env.BENCH_ALONE_REQUESTS ?? 1500);
/** Detect calls of the hop-alone measurement. */
const HOP_CALLS = Number(env.BENCH_HOP_CALLS ?? 2000);
/** Calls in flight while the hop's CPU is measured (about what the concurrency-32 load keeps in flight per direction). */
const HOP_IN_FLIGHT = 16;
const LOG_LEVEL = env.BENCH_LOG_LEVEL ?? 'info';
/** npm start's process settings (tools/start-settings.ts) unless BENCH_START_SETTINGS=false, plus BENCH_NODE_ARGS. */
const START = benchStartSettings(env);
const PORTKEY_VERSION = '1.15.2';
const PORTKEY_SERVER = join(ROOT, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');


const HEADING = '## Performance v2: side by side (npm run bench:perf)';
const MARKER = '<!-- bench:perf output ends here; the text below it is kept when the benchmark rewrites the section -->';

// ---------------------------------------------------------------------------------------------- processes

// ------------------------------------------------------------------------------------------------ traffic

interface Target {
  sys: SystemId;
  url: string;
  headers: Record<string, string>;
}


let requestNo = 0;
/** The detector types of this project's policy (set by the first run). */
let policyTypes: string[] = [];
const latOf = (xs: number[]): Lat | undefined => {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  return { p50: r2(quantile(s, 0.5)), p99: r2(quantile(s, 0.99)) };
};

/**
 * `n` sequential calls per target, the targets interleaved in chunks of 50 (a burst of noise from other
 * work on the machine then hits every system alike), after `warm` calls each. `one` returns the
 * sample(s) of a call or an error text.
 */
async function interleaved<S>(targets: Target[], n: number, warm: number, one: (t: Target, agent: Agent, i: number) => Promise<S | string>): Promise<Map<SystemId, { samples: S[]; errors: number; lastError?: string }>> {
  const agents = new Map(targets.map((t) => [t.sys, new Agent({ connections: 1, headersTimeout: 60_000, bodyTimeout: 60_000 })]));
  const out = new Map(targets.map((t) => [t.sys, { samples: [] as S[], errors: 0, lastError: undefined as string | undefined }]));
  for (const t of targets) for (let i = 0; i < warm; i++) await one(t, agents.get(t.sys)!, requestNo++);
  for (let done = 0; done < n; done += 50) {
    for (const t of targets) {
      const o = out.get(t.sys)!;
      for (let k = 0; k < Math.min(50, n - done); k++) {
        const s = await one(t, agents.get(t.sys)!, requestNo++);
        if (typeof s === 'string') {
          o.errors += 1;
          o.lastError = s;
        } else o.samples.push(s);
      }
    }
  }
  await Promise.all([...agents.values()].map((a) => a.close()));
  return out;
}

async function chatOnce(t: Target, agent: Agent, i: number): Promise<number | string> {
  const t0 = process.hrtime.bigint();
  try {
    const res = await request(`${t.url}/v1/chat/completions`, { method: 'POST', headers: t.headers, body: chatBody(i), dispatcher: agent });
    const text = await res.body.text();
    if (res.statusCode !== 200) return `${res.statusCode} ${text.slice(0, 160)}`;
    return Number(process.hrtime.bigint() - t0) / 1e6;
  } catch (err) {
    return `transport error: ${err instanceof Error ? err.message : String(err)}`;
  }
}

type StreamKind = 'messages' | 'chat';
const STREAM = {
  messages: { path: '/v1/messages', body: messagesBody, token: /"text_delta"/, complete: (s: string) => s.includes('message_stop') },
  chat: { path: '/v1/chat/completions', body: (i: number) => chatBody(i, true), token: /"content":"[^"]/, complete: (s: string) => s.trimEnd().endsWith('data: [DONE]') },
};

/** One stream read to its end: time to the first body byte and to the first text token (ms). */
async function streamOnce(kind: StreamKind, t: Target, agent: Agent, i: number): Promise<{ ttfb: number; token: number } | string> {
  const k = STREAM[kind];
  const t0 = process.hrtime.bigint();
  const ms = () => Number(process.hrtime.bigint() - t0) / 1e6;
  try {
    const res = await request(`${t.url}${k.path}`, { method: 'POST', headers: t.headers, body: k.body(i), dispatcher: agent });
    let ttfb: number | undefined;
    let token: number | undefined;
    let text = '';
    for await (const chunk of res.body) {
      const now = ms();
      ttfb ??= now;
      const tail = text.slice(-64);
      text += (chunk as Buffer).toString('utf8');
      if (token === undefined && k.token.test(tail + (chunk as Buffer).toString('utf8'))) token = now;
    }
    if (res.statusCode !== 200) return `${res.statusCode} ${text.slice(0, 160)}`;
    if (!k.complete(text) || token === undefined || ttfb === undefined) return `200 but incomplete: ${text.slice(-160)}`;
    return { ttfb, token };
  } catch (err) {
    return `transport error: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** Load from CONNECTIONS connections for DURATION_S (after 1 s of warm-up); CPU ms per request of `pid`'s tree. */
async function load(t: Target, pids: number[]): Promise<{ rps: number; cpu: number; errors: number }> {
  const treesCpu = () => pids.reduce((sum, pid) => sum + treeCpuMs(pid), 0);
  let i = 0;
  const requests = [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, body: chatBody(requestNo + i++) }) }];
  const opts = { url: `${t.url}/v1/chat/completions`, method: 'POST', headers: t.headers, requests, connections: CONNECTIONS };
  await autocannon({ ...opts, duration: 1 });
  const before = treesCpu();
  const res = await autocannon({ ...opts, duration: DURATION_S });
  const cpu = treesCpu() - before;
  requestNo += i;
  return { rps: r2(res.requests.average), cpu: r2(cpu / Math.max(1, res.requests.total)), errors: res.errors + res.non2xx };
}

/**
 * Unmeasured load before any measured phase, the same for every system. A process that has served only a
 * few hundred sequential requests is still compiling under load: through this project the first 5 s at
 * 32 connections cost 2.8–3.0 ms of CPU per request, 0.6–0.9 ms of it in V8's background threads
 * (optimising compiler: perf shows `compiler::GraphReducer`), and the next 5 s 1.8–2.0 ms with those
 * threads at ~0.2 ms (2026-11-28, bench/RESULTS.md). Without it the figures compare warm-up, not the
 * steady state an operator runs.
 */
async function warmUp(t: Target): Promise<void> {
  if (WARMUP_S <= 0) return;
  let i = 0;
  const requests = [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, body: chatBody(requestNo + i++) }) }];
  await autocannon({ url: `${t.url}/v1/chat/completions`, method: 'POST', headers: t.headers, requests, connections: CONNECTIONS, duration: WARMUP_S });
  requestNo += i;
}

/**
 * The floor of this project's own work: the same detection engine and policy (every detector type, L2,
 * block) called in this process on the benchmark's prompts, an input scan and an output scan per
 * "request" (the fake upstream's answer as the output), with no HTTP, gRPC, database, audit or logging.
 * CPU of this process per request (process.cpuUsage: every thread, garbage collection included) and the
 * latency of the two scans one after the other. Whatever the gateway does, its added latency cannot be
 * below the empty proxy's plus this.
 */
async function detectorsAlone(types: readonly string[]): Promise<{ cpuMs: number; p50: number; p99: number; inputP50: number }> {
  const engine = createDetectionEngine();
  const config = blockPolicy(types, 'bench:perf detectors alone');
  const answer = 'A short and harmless answer from the benchmark upstream.';
  const inputTimes: number[] = [];
  const once = async (i: number) => {
    const t0 = process.hrtime.bigint();
    await engine.evaluate({ text: benignPrompt(i, 23), direction: 'input', config });
    inputTimes.push(Number(process.hrtime.bigint() - t0) / 1e6);
    await engine.evaluate({ text: answer, direction: 'output', config });
  };
  for (let i = 0; i < 500; i++) await once(i);
  inputTimes.length = 0;
  const times: number[] = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < ALONE_REQUESTS; i++) {
    const t0 = process.hrtime.bigint();
    await once(1_000 + i);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const cpu = process.cpuUsage(cpu0);
  times.sort((a, b) => a - b);
  inputTimes.sort((a, b) => a - b);
  return { cpuMs: r2((cpu.user + cpu.system) / 1000 / ALONE_REQUESTS), p50: r2(quantile(times, 0.5)), p99: r2(quantile(times, 0.99)), inputP50: r2(quantile(inputTimes, 0.5)) };
}

/**
 * The design's internal hop alone: Detect calls with a policy of no detectors from this process to this
 * project's detection service over its Unix socket (as the co-located gateway calls it). Wall time per
 * call one at a time (as in the concurrency-1 phase); CPU per call with HOP_IN_FLIGHT calls in flight (as
 * under the load, where calls share syscalls and event-loop turns), of the caller (this process: the
 * gateway's detection client) and of the service (its process tree, otherwise idle now). A request
 * through the gateway makes two (input and output).
 */
async function hopAlone(address: string, pid: number): Promise<{ clientMs: number; serverMs: number; p50: number }> {
  const client = createDetectionClient({ address, timeoutMs: 10_000 });
  const policy = blockPolicy([], 'bench:perf hop alone');
  const once = (i: number) => client.detect({ text: benignPrompt(i, 29), direction: i % 2 === 0 ? 'input' : 'output', policy });
  try {
    for (let i = 0; i < 300; i++) await once(i);
    const times: number[] = [];
    for (let i = 0; i < HOP_CALLS; i++) {
      const t0 = process.hrtime.bigint();
      await once(1_000 + i);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    times.sort((a, b) => a - b);
    const cpu0 = process.cpuUsage();
    const server0 = treeCpuMs(pid);
    let next = 0;
    await Promise.all(Array.from({ length: HOP_IN_FLIGHT }, async () => {
      while (next < HOP_CALLS) await once(100_000 + next++);
    }));
    const serverMs = treeCpuMs(pid) - server0;
    const cpu = process.cpuUsage(cpu0);
    return { clientMs: r2((cpu.user + cpu.system) / 1000 / HOP_CALLS), serverMs: r2(serverMs / HOP_CALLS), p50: r2(quantile(times, 0.5)) };
  } finally {
    client.close();
  }
}

/** `n` long chat streams opened at the same moment, each read to its end. */
async function concurrentStreams(t: Target, n: number): Promise<{ n: number; complete: number; outcome: string }> {
  const agent = new Agent({ connections: n + 8, pipelining: 1, connectTimeout: 120_000, headersTimeout: 120_000, bodyTimeout: 120_000 });
  const counts = new Map<string, number>();
  const add = (k: string) => counts.set(k, (counts.get(k) ?? 0) + 1);
  const base = requestNo;
  requestNo += n;
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      try {
        const res = await request(`${t.url}/v1/chat/completions`, { method: 'POST', headers: t.headers, body: longStreamBody(base + i), dispatcher: agent });
        const text = await res.body.text();
        if (res.statusCode !== 200) return add(`status ${res.statusCode}`);
        const events = text.split('"delta":{"content":"').length - 1;
        add(text.trimEnd().endsWith('data: [DONE]') && events === 50 && !text.includes('"blocked":true') ? 'complete' : 'truncated or blocked');
      } catch {
        add('transport error');
      }
    }),
  );
  await agent.close();
  const outcome = [...counts.entries()].map(([k, v]) => `${v} ${k}`).join(', ');
  return { n, complete: counts.get('complete') ?? 0, outcome };
}

/**
 * DETECT_1MB sequential calls after one warm-up. A failed call (not 200) is counted, not fatal; failures
 * and blocked verdicts on the benign text come back as one note each (count, times, the first answer).
 */
async function detect1mb(gateway: string, auth: Record<string, string>): Promise<{ lat?: { p50: number; max: number }; failed: number; notes: string[] }> {
  const times: number[] = [];
  const failed: Array<{ ms: number; text: string }> = [];
  const blocked: string[] = [];
  for (let i = 0; i <= DETECT_1MB; i++) {
    const body = JSON.stringify({ content: benignMegabyte(requestNo++), direction: 'input' });
    const t0 = process.hrtime.bigint();
    const res = await request(`${gateway}/v1/detect`, { method: 'POST', headers: auth, body, headersTimeout: 120_000, bodyTimeout: 120_000 });
    const text = await res.body.text();
    const ms = r2(Number(process.hrtime.bigint() - t0) / 1e6);
    if (res.statusCode !== 200) failed.push({ ms, text: `${res.statusCode} ${text}` });
    else if (text.includes('"blocked":true')) blocked.push(text);
    if (i > 0 && res.statusCode === 200) times.push(ms); // the first warms up
  }
  times.sort((a, b) => a - b);
  const calls = DETECT_1MB + 1;
  const notes = [
    ...(failed.length ? [`${failed.length} of ${calls} 1 MB \`/v1/detect\` calls failed after ${range(failed.map((f) => f.ms), { unit: ' ms' })}: ${failed[0]!.text.slice(0, 160)}`] : []),
    ...(blocked.length ? [`${blocked.length} of ${calls} benign 1 MB texts blocked by \`/v1/detect\`: ${blocked[0]!.slice(0, 240)}`] : []),
  ];
  return { lat: times.length ? { p50: r2(quantile(times, 0.5)), max: r2(times[times.length - 1]!) } : undefined, failed: failed.length, notes };
}

// ---------------------------------------------------------------------------------------------------- run

interface Running {
  procs: ChildProcess[];
  dirs: string[];
}

async function oneRun(run: number, notes: string[]): Promise<PerfRun> {
  const r: Running = { procs: [], dirs: [] };
  const systems: Partial<Record<SystemId, SystemRun>> = { direct: {}, floor: {}, ours: {} };
  const log = (m: string) => process.stderr.write(`[run ${run}] ${m}\n`);
  try {
    const up = await start(['dist/tools/bench-upstream.js'], { STREAM_EVENTS: String(STREAM_EVENTS), STREAM_GAP_MS: String(STREAM_GAP_MS), STREAM_NUMBERED: '0' }, /PORT (\d+)/);
    r.procs.push(up.child);
    const upstream = `http://127.0.0.1:${up.match[1]}`;
    const floorT0 = process.hrtime.bigint();
    const floor = await start(['dist/tools/bench-passthrough.js'], { UPSTREAM: upstream }, /PORT (\d+)/);
    r.procs.push(floor.child);
    systems.floor!.startMs = r2(Number(process.hrtime.bigint() - floorT0) / 1e6);
    const floorUrl = `http://127.0.0.1:${floor.match[1]}`;

    // Portkey: its Node build, routed to the fake upstream by headers.
    let portkey: { url: string; pid: number } | undefined;
    if (WITH_PORTKEY && run === 1 && !existsSync(PORTKEY_SERVER)) notes.push(`Portkey skipped: ${PORTKEY_SERVER} is missing (npm install: devDependency @portkey-ai/gateway ${PORTKEY_VERSION}).`);
    if (WITH_PORTKEY && existsSync(PORTKEY_SERVER)) {
      try {
        const port = await freePort();
        const pk = await startHealthy([PORTKEY_SERVER, `--port=${port}`, '--headless'], { NODE_ENV: 'production' }, [`http://127.0.0.1:${port}/`], 60_000);
        r.procs.push(pk.child);
        portkey = { url: `http://127.0.0.1:${port}`, pid: pk.child.pid! };
        systems.portkey = { startMs: r2(pk.ms) };
      } catch (err) {
        const msg = `Portkey skipped in run ${run}: it did not start (${err instanceof Error ? err.message.slice(0, 300) : String(err)}).`;
        notes.push(msg);
        log(msg);
      }
    }

    // This project: fresh DATA_DIR, embedded database, installed (compiled) tree.
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-perf-'));
    r.dirs.push(dataDir);
    const [port, sensorPort] = [await freePort(), await freePort()];
    const key = `svc_sk_${randomBytes(24).toString('hex').slice(0, 40)}`;
    // The detection socket at a known path: the driver also calls it (the hop alone, below).
    const detectionSocket = join(dataDir, 'detection.sock');
    const gwEnv = {
      PORT: String(port), SENSOR_PORT: String(sensorPort), DETECTION_ADDRESS: '127.0.0.1:0', DETECTION_SOCKET: detectionSocket, DATA_DIR: dataDir, BOOTSTRAP_API_KEY: key,
      OPENAI_BASE_URL: `${upstream}/v1`, ANTHROPIC_BASE_URL: upstream, OPENAI_API_KEY: 'sk-bench', LOG_LEVEL,
      // The platform limit check runs on every request, with a ceiling the benchmark never reaches.
      PLATFORM_TRAFFIC_RPM: '10000000',
      ...START.env,
      ...envPairs(env.BENCH_OURS_ENV),
    };
    const gateway = `http://127.0.0.1:${port}`;
    const sensor = `http://127.0.0.1:${sensorPort}`;
    const gw = await startHealthy([...START.nodeArgs, 'dist/main.js', 'all'], gwEnv, [`${gateway}/health`, `${sensor}/health`], 180_000);
    r.procs.push(gw.child);
    systems.ours = { startMs: r2(gw.ms), rssStartMb: treeRssMb(gw.child.pid!) };
    log(`this project healthy after ${r2(gw.ms)} ms, ${systems.ours.rssStartMb} MB`);
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const policy = await configureDefaultPolicy(gateway, auth, (types) => types.map((t) => ({ detector_type: t.value, threshold: 'L2', action: 'block' })));
    if (run === 1) notes.push(`This project's process: \`node ${[...START.nodeArgs, 'dist/main.js', 'all'].join(' ')}\`${Object.keys(START.env).length ? ` with ${Object.entries(START.env).map(([k, v]) => `${k}=${v}`).join(' ')}` : ''}${env.BENCH_OURS_ENV ? ` and ${env.BENCH_OURS_ENV}` : ''}${START.enabled ? ' (npm start\'s process settings, tools/start-settings.ts)' : ' (BENCH_START_SETTINGS=false: without npm start\'s process settings)'}.`);
    if (run === 1) notes.push(`Policy of this project: ${policy.length} detector types on input and output (${policy.join(', ')}), L2, block.`);
    policyTypes = policy;

    // The design's floor, measured: the empty proxy plus the two Detect calls over this project's detection
    // socket with the same policy (bench-design-floor.ts); its CPU is counted with this project's (the
    // detection service runs there).
    let design: { url: string; pid: number } | undefined;
    if (WITH_DESIGN) {
      const df = await start(['dist/tools/bench-design-floor.js'], { UPSTREAM: upstream, DETECTION_TARGET: `unix:${detectionSocket}`, DETECT_TYPES: policy.join(',') }, /PORT (\d+)/);
      r.procs.push(df.child);
      design = { url: `http://127.0.0.1:${df.match[1]}`, pid: df.child.pid! };
      systems.design = {};
    }

    const openai = { 'content-type': 'application/json', authorization: 'Bearer sk-bench' };
    const anthropic = { 'content-type': 'application/json', 'x-api-key': 'sk-ant-bench', 'anthropic-version': '2023-06-01' };
    const pkHeaders = (kind: StreamKind) =>
      kind === 'chat' ? { ...openai, 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${upstream}/v1` } : { ...anthropic, 'x-portkey-provider': 'anthropic', 'x-portkey-custom-host': `${upstream}/v1` };
    const targets = (kind: StreamKind): Target[] => [
      { sys: 'direct', url: upstream, headers: kind === 'chat' ? openai : anthropic },
      { sys: 'floor', url: floorUrl, headers: kind === 'chat' ? openai : anthropic },
      ...(design ? [{ sys: 'design' as const, url: design.url, headers: kind === 'chat' ? openai : anthropic }] : []),
      kind === 'chat' ? { sys: 'ours', url: gateway, headers: auth } : { sys: 'ours', url: sensor, headers: { ...anthropic, 'x-svc-key': key } },
      ...(portkey ? [{ sys: 'portkey' as const, url: portkey.url, headers: pkHeaders(kind) }] : []),
    ];
    const pids: Record<SystemId, number | undefined> = { direct: up.child.pid, floor: floor.child.pid, design: design?.pid, ours: gw.child.pid, portkey: portkey?.pid };
    // The processes whose CPU a system's requests cost: the design floor's include this project's (detection).
    const cpuPids = (sys: SystemId): number[] => (sys === 'design' ? [design!.pid, gw.child.pid!] : [pids[sys]!]);

    // Preflight: a system whose chat completion fails is left out of this run, with the reason.
    const chatTargets: Target[] = [];
    for (const t of targets('chat')) {
      const agent = new Agent({ connections: 1 });
      const res = await chatOnce(t, agent, requestNo++);
      await agent.close();
      if (typeof res === 'string') {
        const msg = `${t.sys} left out of run ${run}: a chat completion failed (${res}).`;
        notes.push(msg);
        log(msg);
        if (t.sys === 'portkey' || t.sys === 'design') delete systems[t.sys];
        else throw new Error(msg);
      } else chatTargets.push(t);
    }

    for (const t of chatTargets) {
      log(`warm-up ${t.sys} (${WARMUP_S} s at ${CONNECTIONS} connections, not measured)`);
      await warmUp(t);
    }

    log('concurrency 1');
    const c1 = await interleaved(chatTargets, SEQUENTIAL, 50, chatOnce);
    for (const [sys, o] of c1) Object.assign(systems[sys]!, { c1: latOf(o.samples), errors: o.errors });

    for (const t of chatTargets) {
      log(`load ${t.sys}`);
      const l = await load(t, cpuPids(t.sys));
      Object.assign(systems[t.sys]!, { rps: l.rps, cpuMsPerRequest: l.cpu, errors: (systems[t.sys]!.errors ?? 0) + l.errors });
    }

    for (const kind of ['messages', 'chat'] as StreamKind[]) {
      log(`streams (${kind}), sequential`);
      const ok: Target[] = [];
      for (const t of targets(kind).filter((x) => systems[x.sys])) {
        const agent = new Agent({ connections: 1 });
        const res = await streamOnce(kind, t, agent, requestNo++);
        await agent.close();
        if (typeof res === 'string') {
          systems[t.sys]!.streamErrors = { ...systems[t.sys]!.streamErrors, [kind]: res.replace(/\s+/g, ' ').replace(/\|/g, '\\|').slice(0, 120) };
          log(`${t.sys} ${kind} stream failed: ${res}`);
        } else ok.push(t);
      }
      const s = await interleaved(ok, STREAM_SEQUENTIAL, 20, (t, agent, i) => streamOnce(kind, t, agent, i));
      for (const [sys, o] of s) {
        const key = kind === 'chat' ? { ttfb: 'ttfbChat', token: 'firstTokenChat' } : { ttfb: 'ttfbMessages', token: 'firstTokenMessages' };
        Object.assign(systems[sys]!, { [key.ttfb]: latOf(o.samples.map((x) => x.ttfb)), [key.token]: latOf(o.samples.map((x) => x.token)) });
        if (o.errors > 0) notes.push(`run ${run}: ${o.errors} ${kind} streams of ${sys} failed (last: ${o.lastError?.slice(0, 160)}).`);
      }
    }

    log('1 MB /v1/detect');
    const d = await detect1mb(gateway, auth);
    systems.ours.detect1mb = d.lat ? { ...d.lat, failed: d.failed } : d.failed ? { p50: NaN, max: NaN, failed: d.failed } : undefined;
    for (const n of d.notes) notes.push(`run ${run}: ${n}`);

    for (const t of targets('chat').filter((x) => x.sys !== 'floor' && x.sys !== 'design' && systems[x.sys] && !systems[x.sys]!.streamErrors?.chat)) {
      log(`${CONCURRENT_STREAMS} concurrent streams: ${t.sys}`);
      systems[t.sys]!.streams = await concurrentStreams(t, CONCURRENT_STREAMS);
    }

    if (ALONE_REQUESTS > 0 && policyTypes.length > 0) {
      log('detectors alone, in-process');
      systems.ours!.detectorsAlone = await detectorsAlone(policyTypes);
      log('the internal hop alone');
      systems.ours!.hopAlone = await hopAlone(`unix:${detectionSocket}`, gw.child.pid!);
    }

    const measured = (['floor', 'ours', 'portkey'] as SystemId[]).filter((sys) => systems[sys] && pids[sys]);
    for (const sys of measured) systems[sys]!.rssAfterMb = treeRssMb(pids[sys]!);
    if (REST_S > 0) {
      // At rest: the same processes after BENCH_REST_S with nothing sent (a burst's garbage collected or not).
      await new Promise((res) => setTimeout(res, REST_S * 1000));
      for (const sys of measured) systems[sys]!.rssRestMb = treeRssMb(pids[sys]!);
    }
    return { systems };
  } finally {
    for (const p of r.procs.reverse()) p.kill('SIGTERM');
    await new Promise((res) => setTimeout(res, 1000));
    for (const d of r.dirs) rmSync(d, { recursive: true, force: true });
  }
}

function report(runs: PerfRun[], notes: string[], load: { before: number[]; after: number[] }): string {
  const la = (x: number[]) => x.map((v) => v.toFixed(1)).join(' / ');
  return [
    HEADING,
    '',
    `${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC · ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}) · Node ${process.version} · load average before ${la(load.before)}, after ${la(load.after)} (1 / 5 / 15 min).`,
    `${runs.length} run(s), each with fresh processes: the fake upstream (bench-upstream.ts), the empty Node proxy (bench-passthrough.ts), the floor of this design measured (bench-design-floor.ts: the empty proxy plus an input and an output Detect over this project's detection socket with the same policy), this project (\`node dist/main.js all\` with the process settings in the notes below, embedded database, fresh DATA_DIR, LOG_LEVEL ${LOG_LEVEL}) and Portkey OSS ${PORTKEY_VERSION} (\`build/start-server.js\`, routed by \`x-portkey-provider\` / \`x-portkey-custom-host\`). Benign prompts of 100–600 characters, different on every request. First ${WARMUP_S} s of unmeasured load at ${CONNECTIONS} connections per system (warm-up). Concurrency 1: ${SEQUENTIAL} chat completions per system, interleaved in chunks of 50; load: ${CONNECTIONS} connections for ${DURATION_S} s per system (autocannon in this driver); streams: ${STREAM_SEQUENTIAL} per system and kind, ${STREAM_EVENTS} text events of plain prose (no numbers: a number is held until 128 characters follow it) ${STREAM_GAP_MS} ms apart, read to the end; ${CONCURRENT_STREAMS} concurrent chat streams of 50 events 20 ms apart; 1 MB \`/v1/detect\` (1,000,000 characters, the most it takes): ${DETECT_1MB} calls after one warm-up; detectors alone: ${ALONE_REQUESTS} input + output scans in the driver's process after 500 warm-up; the hop alone: ${HOP_CALLS} Detect calls with no detectors from the driver over the detection socket one at a time (wall), then ${HOP_CALLS} with ${HOP_IN_FLIGHT} in flight (CPU), after 300 warm-up.`,
    'Cells: min–max over the runs (median); "added" is the system minus direct in the same run; met / not met is decided on the median, (k/N runs) counts the runs that met it alone.',
    '',
    ...renderTable(rows(runs, CONCURRENT_STREAMS)),
    '',
    ...notes.map((n) => `- ${n}`),
    '',
    '<details><summary>Every run, every system (raw figures; ms unless stated)</summary>',
    '',
    ...renderDetails(runs),
    '',
    '</details>',
    '',
    MARKER,
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  if (!existsSync(join(ROOT, 'dist', 'main.js'))) throw new Error('dist/main.js is missing: run `npm run build` (npm run bench:perf builds first)');
  const runs: PerfRun[] = [];
  const notes: string[] = [];
  const before = loadavg();
  for (let run = 1; run <= RUNS; run++) {
    const t0 = Date.now();
    try {
      runs.push(await oneRun(run, notes));
    } catch (err) {
      // One failed run (a process that did not start, a broken phase) is reported; the others still count.
      const msg = `run ${run} failed and is left out: ${err instanceof Error ? err.message.slice(0, 400) : String(err)}`;
      notes.push(msg);
      process.stderr.write(`${msg}\n`);
      continue;
    }
    process.stderr.write(`[run ${run}] done in ${Math.round((Date.now() - t0) / 1000)} s\n${renderTable(rows(runs.slice(-1), CONCURRENT_STREAMS)).join('\n')}\n`);
  }
  if (runs.length === 0) throw new Error(`no run completed:\n${notes.join('\n')}`);
  const text = report(runs, notes, { before, after: loadavg() });
  process.stdout.write(text);
  if (env.BENCH_WRITE !== 'false') {
    const file = join(ROOT, 'bench', 'RESULTS.md');
    const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmark results\n';
    writeFileSync(file, replaceSection(current, HEADING, MARKER, text));
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
