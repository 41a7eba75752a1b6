import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { buildViewSet } from '#src/detection/normalize';
import { benignMegabyte, benignPrompt, range } from './bench-perf-lib';
import { configureDefaultPolicy, freePort, memoryKb, quantile, r2, startHealthy, treeCpuMs } from './bench-procs';

/**
 * `npm run bench:detect-1mb`: the issue-17 line "1 MB /v1/detect ≤ 100 ms" on its own, through the real
 * gateway (`node dist/main.js all`, fresh DATA_DIR, detection in its thread) with bench:perf's policy
 * (every detector type on input and output, L2, block) and bench:perf's 1 MB texts (benign prompts of
 * 100–600 characters joined to 1,000,000 characters, different on every call).
 *
 * Settings (environment): BENCH_CONFIGS — configurations to compare, `;`-separated, each a list of
 * `KEY=value` pairs for the gateway's environment (default `CLASSIFIER_INLINE_SLICE=0;` = the workers
 * alone vs the default); BENCH_ROUNDS (3: each configuration gets a fresh process per round, rounds
 * interleave the configurations so they see the same machine load); BENCH_CALLS (5 calls per round after
 * one warm-up); BENCH_CPU_PROF (a directory: the gateway runs with `--cpu-prof`, one profile per thread —
 * main, detection, classifier workers — and their self time per stage is printed).
 * BENCH_SMALL (0): that many clients send small `/v1/detect` calls (bench:perf's benign prompts of
 * 100–600 characters) one after the other, first for BENCH_SMALL_ALONE_S (3) seconds alone, then while
 * the measured 1 MB calls run: their latency p50 / p99 alone and during says what a large text costs the
 * other requests.
 * BENCH_POLICY (`all`): `signatures` puts every signature detector and no classifier in the policy (a
 * detection service much faster per MB than the audit token worker: the case AUDIT_TOKEN_WORKER_MAX_PENDING_CHARS
 * bounds). BENCH_CLIENTS (1): that many clients send the measured 1 MB calls at once, BENCH_CALLS each.
 * Calls go back to back, as in bench:perf (a call's deferred audit work overlaps the next call).
 * Prints per configuration: wall ms per call (min–max, median), CPU ms per call of the whole process
 * (all threads, per round), 1 MB calls served per second, the process's resident memory (VmRSS, every
 * thread; sampled every 100 ms during the measured calls: peak, and after them), how many benign texts
 * came back blocked (a timeout fails closed), the 1-minute load average at each round; with
 * BENCH_CPU_PROF, each thread's busy ms per call by stage within the measured calls.
 */

const env = process.env;
const CONFIGS = (env.BENCH_CONFIGS ?? 'CLASSIFIER_INLINE_SLICE=0;').split(';').map((c) => c.trim());
const ROUNDS = Number(env.BENCH_ROUNDS ?? 3);
const CALLS = Number(env.BENCH_CALLS ?? 5);
const PROF_DIR = env.BENCH_CPU_PROF;
/**
 * The first text's number (bench:perf's numbering: the request counter when its 1 MB stage starts is in
 * the thousands). Until 2026-11-29 the request ids were base-36 and some read as leetspeak, giving those texts
 * a canonical view whose windows were scored too; they are decimal now. The window count is printed.
 */
const FIRST_TEXT = Number(env.BENCH_FIRST_TEXT ?? 1000);
const SMALL = Number(env.BENCH_SMALL ?? 0);
const SMALL_ALONE_S = Number(env.BENCH_SMALL_ALONE_S ?? 3);
const POLICY = env.BENCH_POLICY ?? 'all';
if (POLICY !== 'all' && POLICY !== 'signatures') throw new Error(`BENCH_POLICY must be all or signatures, not ${POLICY}`);
const CLIENTS = Number(env.BENCH_CLIENTS ?? 1);
if (!Number.isInteger(CLIENTS) || CLIENTS < 1) throw new Error(`BENCH_CLIENTS must be a positive integer, not ${env.BENCH_CLIENTS}`);

const pairs = (config: string): Record<string, string> =>
  Object.fromEntries(config.split(/\s+/).filter(Boolean).map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]));

interface Round {
  wall: number[];
  /** CPU of the process (all threads) per measured call, the deferred audit work of the calls included. */
  cpu: number;
  blocked: number;
  /** Measured calls whose text has more views than the normalised one (canonical: its windows are scored too). */
  multiView: number;
  load: number;
  /** CLOCK_MONOTONIC µs of the measured calls (the profiles' clock): [first start, last end + settle]. */
  window: [number, number];
  /** With BENCH_SMALL: small calls' latencies (ms), alone and during the measured 1 MB calls. */
  small?: { alone: number[]; during: number[] };
  /** Measured 1 MB calls answered per second (all clients). */
  perSecond: number;
  /** VmRSS (MB, every thread): the highest sample during the measured calls, and after them (SETTLE_MS later). */
  rssPeak: number;
  rssAfter: number;
}

/** BENCH_SMALL clients sending small /v1/detect calls back to back until `stop()`; resolves to their latencies (ms). */
function smallLoad(gateway: string, auth: Record<string, string>, firstText: number): { stop: () => Promise<number[]> } {
  let running = true;
  let n = firstText;
  const lat: number[] = [];
  const client = async () => {
    while (running) {
      const body = JSON.stringify({ content: benignPrompt(n++), direction: 'input' });
      const t0 = process.hrtime.bigint();
      const res = await request(`${gateway}/v1/detect`, { method: 'POST', headers: auth, body });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`small /v1/detect answered ${res.statusCode}: ${text.slice(0, 300)}`);
      lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  };
  const clients = Array.from({ length: SMALL }, client);
  return {
    stop: async () => {
      running = false;
      await Promise.all(clients);
      return lat;
    },
  };
}

/** After the last call: its deferred audit work (token count in its worker) is left to finish. */
const SETTLE_MS = 500;
const micros = () => Number(process.hrtime.bigint() / 1000n);

/** One fresh process, CALLS + 1 calls with texts firstText, firstText + 1, … (every configuration of a round gets the same texts). */
async function round(config: string, profDir: string | undefined, firstText: number): Promise<Round> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-1mb-'));
  const [port, sensorPort] = [await freePort(), await freePort()];
  const key = `svc_sk_${randomBytes(24).toString('hex').slice(0, 40)}`;
  const gwEnv = {
    PORT: String(port), SENSOR_PORT: String(sensorPort), DETECTION_ADDRESS: '127.0.0.1:0', DATA_DIR: dataDir, BOOTSTRAP_API_KEY: key,
    OPENAI_API_KEY: 'sk-bench', LOG_LEVEL: 'info', PLATFORM_TRAFFIC_RPM: '10000000',
    // Profiled threads run slower: the calls get a budget they cannot overrun (DETECTION_TIMEOUT_MS in BENCH_CONFIGS wins).
    ...(profDir ? { DETECTION_TIMEOUT_MS: '60000' } : {}),
    ...pairs(config),
  };
  const args = [...(profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, '--cpu-prof-interval=500'] : []), 'dist/main.js', 'all'];
  const gateway = `http://127.0.0.1:${port}`;
  const gw = await startHealthy(args, gwEnv, [`${gateway}/health`, `http://127.0.0.1:${sensorPort}/health`], 180_000);
  try {
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    await configureDefaultPolicy(gateway, auth, (types) =>
      types
        .filter((t) => POLICY === 'all' || !['prompt_defense', 'content_moderation'].includes(t.category))
        .map((t) => ({ detector_type: t.value, threshold: 'L2', action: 'block' })),
    );
    const out: Round = { wall: [], cpu: 0, blocked: 0, multiView: 0, load: loadavg()[0] as number, window: [0, 0], perSecond: 0, rssPeak: 0, rssAfter: 0 };
    const texts = Array.from({ length: CALLS * CLIENTS + 1 }, (_, i) => benignMegabyte(firstText + i));
    const bodies = texts.map((content) => JSON.stringify({ content, direction: 'input' }));
    out.multiView = texts.slice(1).filter((t) => buildViewSet(t).views.length > 1).length;
    const call = async (i: number): Promise<void> => {
      const t0 = process.hrtime.bigint();
      const res = await request(`${gateway}/v1/detect`, { method: 'POST', headers: auth, body: bodies[i], headersTimeout: 120_000, bodyTimeout: 120_000 });
      const text = await res.body.text();
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (res.statusCode !== 200) throw new Error(`/v1/detect answered ${res.statusCode}: ${text.slice(0, 300)}`);
      if (i === 0) return;
      if (text.includes('"blocked":true')) out.blocked++;
      out.wall.push(r2(ms));
    };
    // The first call warms up.
    await call(0);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    let small: ReturnType<typeof smallLoad> | undefined;
    if (SMALL > 0) {
      const alone = smallLoad(gateway, auth, firstText * 1000);
      await new Promise((r) => setTimeout(r, SMALL_ALONE_S * 1000));
      out.small = { alone: await alone.stop(), during: [] };
      small = smallLoad(gateway, auth, firstText * 1000 + 500_000);
    }
    const rssMb = () => r2(memoryKb(gw.child.pid!).rss / 1024);
    const sampler = setInterval(() => (out.rssPeak = Math.max(out.rssPeak, rssMb())), 100);
    const cpu0 = treeCpuMs(gw.child.pid!);
    out.window[0] = micros();
    const t0 = performance.now();
    try {
      // Each client sends its calls back to back, as bench:perf sends them (texts 1 + c·CALLS …).
      await Promise.all(
        Array.from({ length: CLIENTS }, async (_, c) => {
          for (let k = 0; k < CALLS; k++) await call(1 + c * CALLS + k);
        }),
      );
    } finally {
      clearInterval(sampler);
    }
    out.perSecond = r2((CALLS * CLIENTS) / ((performance.now() - t0) / 1000));
    out.rssPeak = Math.max(out.rssPeak, rssMb());
    if (small && out.small) out.small.during = await small.stop();
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    out.rssAfter = rssMb();
    out.window[1] = micros();
    out.cpu = r2((treeCpuMs(gw.child.pid!) - cpu0) / (CALLS * CLIENTS));
    return out;
  } finally {
    const exited = new Promise((r) => gw.child.once('exit', r));
    gw.child.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

const STAGES: Array<[RegExp, string]> = [
  [/classifiers\/builtin\/suffix-/, 'classifier: adversarial-suffix scorer'],
  [/classifiers\/builtin\/(features|builtin-model)/, 'classifier: hashed n-grams + linear heads'],
  [/classifiers\/builtin\/(heuristics|triggers|lexicons|text-prep)/, 'classifier: text prep, triggers, heuristics, lexicons'],
  [/classifiers\/builtin\//, 'classifier: other'],
  [/classifiers\//, 'classifier plumbing (router, shared calls, windows)'],
  [/shared\/(o200k|tokens|token-counter)/, 'audit token count'],
  [/shared\/worker-pool/, 'worker pool messaging'],
  [/detection\/detectors\//, 'signature detectors'],
  [/detection\/normalize/, 'normalisation (views)'],
  [/detection\//, 'detection engine, gRPC service'],
  [/gateway\//, 'gateway'],
  [/@grpc|grpc-js/, 'gRPC library'],
  [/node_modules/, 'other libraries'],
];

/**
 * Self time per stage (ms) of one thread's profile within `window` (the measured calls); a frame counts
 * for the nearest ancestor with a known file.
 */
function stages(file: string, window: [number, number]): { total: number; byStage: Map<string, number> } {
  const p = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number };
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stageOf = new Map<number, string>();
  const find = (id: number): string => {
    const known = stageOf.get(id);
    if (known) return known;
    const f = byId.get(id)!.callFrame;
    const hit = STAGES.find(([re]) => re.test(f.url));
    const name = f.functionName;
    const s = hit
      ? hit[1]
      : name === '(garbage collector)'
        ? 'garbage collection'
        : name === '(idle)' || name === '(program)'
          ? name
          : parent.has(id)
            ? find(parent.get(id)!)
            : 'other';
    stageOf.set(id, s);
    return s;
  };
  const byStage = new Map<string, number>();
  let total = 0;
  let at = p.startTime;
  p.samples.forEach((id, i) => {
    at += p.timeDeltas[i] ?? 0;
    if (at < window[0] || at > window[1]) return;
    const dt = (p.timeDeltas[i] ?? 0) / 1000;
    const s = find(id);
    byStage.set(s, (byStage.get(s) ?? 0) + dt);
    if (s !== '(idle)') total += dt;
  });
  return { total, byStage };
}

/** "p50 x / p99 y ms (n calls)" of small-call latencies. */
function smallSummary(lat: number[]): string {
  const sorted = [...lat].sort((a, b) => a - b);
  return sorted.length ? `p50 ${r2(quantile(sorted, 0.5))} / p99 ${r2(quantile(sorted, 0.99))} ms (${sorted.length} calls)` : 'no calls';
}

async function main(): Promise<void> {
  const results = new Map<string, Round[]>(CONFIGS.map((c) => [c, []]));
  for (let r = 1; r <= ROUNDS; r++) {
    for (const config of CONFIGS) {
      const profDir = PROF_DIR ? join(PROF_DIR, `${r}-${config.replace(/[^A-Za-z0-9=_-]+/g, '_') || 'default'}`) : undefined;
      if (profDir) mkdirSync(profDir, { recursive: true });
      const res = await round(config, profDir, FIRST_TEXT + (r - 1) * (CALLS * CLIENTS + 1));
      results.get(config)!.push(res);
      process.stderr.write(`round ${r} [${config || 'defaults'}]: wall ${res.wall.join(', ')} ms; CPU ${res.cpu} ms per call; ${res.perSecond} calls/s; RSS peak ${res.rssPeak} MB, after ${res.rssAfter} MB; ${res.multiView} with a canonical view; ${res.blocked} blocked; load ${res.load.toFixed(2)}${res.small ? `; small calls ${smallSummary(res.small.alone)} alone, ${smallSummary(res.small.during)} during` : ''}\n`);
      if (profDir) {
        for (const f of readdirSync(profDir).filter((x) => x.endsWith('.cpuprofile')).sort()) {
          const { total, byStage } = stages(join(profDir, f), res.window);
          if (total < 5 * CALLS) continue;
          const calls = CALLS * CLIENTS;
          const rows = [...byStage].filter(([s]) => s !== '(idle)').sort((a, b) => b[1] - a[1]);
          process.stdout.write(`\n${f} (one thread): ${Math.round(total / calls)} ms busy per call over the ${calls} measured calls\n`);
          for (const [s, ms] of rows) if (ms >= 1) process.stdout.write(`  ${s.padEnd(56)} ${Math.round(ms / calls).toString().padStart(6)} ms/call\n`);
        }
      }
    }
  }
  process.stdout.write(
    `\n1 MB /v1/detect, ${ROUNDS} round(s) × ${CLIENTS > 1 ? `${CLIENTS} clients × ` : ''}${CALLS} calls per configuration (after one warm-up each), policy: ${POLICY === 'all' ? 'every detector type' : 'every signature detector, no classifier'}:\n`,
  );
  for (const [config, rounds] of results) {
    const wall = rounds.flatMap((x) => x.wall);
    const cpu = rounds.map((x) => x.cpu);
    const blocked = rounds.reduce((n, x) => n + x.blocked, 0);
    const multiView = rounds.reduce((n, x) => n + x.multiView, 0);
    const small = rounds[0]?.small ? `; small calls (${SMALL} clients) ${smallSummary(rounds.flatMap((x) => x.small!.alone))} alone, ${smallSummary(rounds.flatMap((x) => x.small!.during))} during the 1 MB calls` : '';
    process.stdout.write(
      `  [${config || 'defaults'}] wall ${range(wall, { unit: ' ms' })}; CPU of the process per call ${range(cpu, { unit: ' ms' })}; ${range(rounds.map((x) => x.perSecond))} calls/s; RSS peak ${range(rounds.map((x) => x.rssPeak), { unit: ' MB' })}, after the calls ${range(rounds.map((x) => x.rssAfter), { unit: ' MB' })}; ${multiView} of ${wall.length} texts with a canonical view; ${blocked} blocked; load average (1 min) ${rounds.map((x) => x.load.toFixed(1)).join(' / ')}${small}\n`,
    );
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
