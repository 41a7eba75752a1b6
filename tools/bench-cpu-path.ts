import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { configureDefaultPolicy, cpuMs, quantile, r2, ROOT, start } from './bench-procs';
import { replaceSection } from './results-sections';
import { generateProse, sourceCodeText } from './text-corpus';

/**
 * `npm run bench:cpu-path`: CPU-heavy work off the request path (issue 17), through the real gateway
 * (`node dist/main.js all`, embedded database, detection in its thread) with the policy of the issue:
 * every detector type (signature and builtin classifiers) on input and output, L2, block.
 *
 * Two configurations in the same run, so the ratio holds whatever the machine's load:
 *   - inline: CLASSIFIER_WORKERS=0 and AUDIT_TOKEN_WORKERS=0 (classifier windows and audit token counts
 *     on the detection / gateway threads, as before the pools);
 *   - pools: the defaults (classifier worker pool of max(1, cores-1), one audit token-count worker).
 * Each measures
 *   - 1 MB POST /v1/detect: wall latency p50 / min / max over BENCH_1MB_CALLS calls (different texts:
 *     half prose, half source code, reproducible seeds), after two warm-up calls;
 *   - a 1 KB prompt on /v1/detect: CPU of the whole process (all threads) and of its main thread per
 *     request, over BENCH_1KB_CALLS sequential calls (Linux /proc, 10 ms ticks).
 * The results are printed and written to bench/RESULTS.md under SECTION.
 */

const CALLS_1MB = Number(process.env.BENCH_1MB_CALLS ?? 7);
const CALLS_1KB = Number(process.env.BENCH_1KB_CALLS ?? 600);
/** The largest content /v1/detect takes (1,000,000 characters). */
const MB = 1_000_000;
const SECTION = '## CPU off the request path (npm run bench:cpu-path)';
/** Ends the generated part of the section: notes written below it survive the next run. */
const MARKER = '<!-- bench:cpu-path output ends here; the text below it is kept when the benchmark rewrites the section -->';

const CONFIGS = [
  { name: 'inline', env: { CLASSIFIER_WORKERS: '0', AUDIT_TOKEN_WORKERS: '0' } },
  { name: 'pools', env: {} },
] as const;

/** 1 MB of text (JSON-escaped it is a little more): prose with some PII, then source code. */
function megabyte(seed: number): string {
  return generateProse({ seed, length: MB / 2, piiEvery: 20_000 }) + sourceCodeText(MB / 2, seed * 7919);
}

interface Measured {
  name: string;
  latencies: number[];
  unscanned: number;
  blocked: number;
  cpuPerRequest?: { total: number; main: number };
}

async function detect(url: string, auth: Record<string, string>, content: string): Promise<{ ms: number; blocked: boolean; unscanned: number }> {
  const body = JSON.stringify({ content });
  const t = performance.now();
  const res = await fetch(`${url}/v1/detect`, { method: 'POST', headers: auth, body });
  const json = (await res.json()) as { blocked?: boolean; unscanned?: unknown[] };
  const ms = performance.now() - t;
  if (res.status !== 200) throw new Error(`/v1/detect answered ${res.status}: ${JSON.stringify(json).slice(0, 300)}`);
  return { ms, blocked: json.blocked === true, unscanned: json.unscanned?.length ?? 0 };
}

interface Service {
  config: (typeof CONFIGS)[number];
  child: ChildProcess;
  gateway: string;
  auth: Record<string, string>;
  dataDir: string;
}

async function startService(config: (typeof CONFIGS)[number]): Promise<Service> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cpu-path-bench-'));
  const key = `svc_sk_${randomBytes(24).toString('hex').slice(0, 40)}`;
  const env = {
    PORT: '0', SENSOR_PORT: '0', DETECTION_ADDRESS: '127.0.0.1:0', DATA_DIR: dataDir, BOOTSTRAP_API_KEY: key,
    LOG_LEVEL: 'info', PLATFORM_TRAFFIC_RPM: '10000000',
    // A 1 MB scan must not hit the gRPC deadline on a loaded machine: the latency is what is measured.
    DETECTION_TIMEOUT_MS: '60000',
    ...config.env,
  };
  // Start-up takes 20–40 s on a loaded 2-core machine (models, migrations).
  const gw = await start(['dist/main.js', 'all'], env, /Ready: gateway (\S+), sensor (\S+), detection grpc:\/\/(\S+)/, undefined, 180_000);
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  await configureDefaultPolicy(gw.match[1]!, auth, (types) => types.map((t) => ({ detector_type: t.value, threshold: 'L2', action: 'block' })));
  return { config, child: gw.child, gateway: gw.match[1]!, auth, dataDir };
}

/**
 * Both configurations run side by side and the 1 MB calls alternate between them, so the load of a shared
 * machine weighs on both alike; the 1 KB CPU is per process (CPU time, not wall time).
 */
async function measureAll(services: Service[]): Promise<Measured[]> {
  const out = services.map((s): Measured => ({ name: s.config.name, latencies: [], unscanned: 0, blocked: 0 }));
  for (const seed of [1001, 1002]) for (const s of services) await detect(s.gateway, s.auth, megabyte(seed));
  for (let i = 0; i < CALLS_1MB; i++) {
    const text = megabyte(i + 1);
    for (const [k, s] of services.entries()) {
      const r = await detect(s.gateway, s.auth, text);
      const m = out[k]!;
      m.latencies.push(r.ms);
      m.unscanned += r.unscanned;
      if (r.blocked) m.blocked++;
    }
  }
  for (const m of out) m.latencies.sort((a, b) => a - b);
  const prompts = Array.from({ length: 50 }, (_, i) => generateProse({ seed: 5000 + i, length: 1000 }));
  for (const [k, s] of services.entries()) {
    for (let i = 0; i < 50; i++) await detect(s.gateway, s.auth, prompts[i]!);
    const before = cpuMs(s.child.pid!);
    for (let i = 0; i < CALLS_1KB; i++) await detect(s.gateway, s.auth, `${prompts[i % 50]!} #${i}`);
    const after = cpuMs(s.child.pid!);
    if (before && after) out[k]!.cpuPerRequest = { total: (after.total - before.total) / CALLS_1KB, main: (after.main - before.main) / CALLS_1KB };
  }
  return out;
}

function render(results: Measured[]): string {
  const [inline, pools] = results as [Measured, Measured];
  const p50 = (m: Measured) => quantile(m.latencies, 0.5);
  const cpu = (m: Measured) => (m.cpuPerRequest ? `${r2(m.cpuPerRequest.total)} / ${r2(m.cpuPerRequest.main)}` : 'n/a');
  const row = (m: Measured) =>
    `| ${m.name} | ${Math.round(p50(m))} | ${Math.round(m.latencies[0]!)}–${Math.round(m.latencies[m.latencies.length - 1]!)} | ${m.blocked}/${m.latencies.length} | ${m.unscanned} | ${cpu(m)} |`;
  const cpuModel = cpus()[0]?.model ?? 'unknown CPU';
  return [
    SECTION,
    '',
    `${new Date().toISOString().slice(0, 10)} · ${cpus().length} cores (${cpuModel}) · Node ${process.version} · \`node dist/main.js all\`, embedded database, LOG_LEVEL info.`,
    'Policy: every detector type (signature and builtin classifiers) on input and output, L2, block. `inline`: CLASSIFIER_WORKERS=0 and',
    'AUDIT_TOKEN_WORKERS=0 (the work on the serving threads, as before the pools); `pools`: the defaults. Both run side by side, the 1 MB',
    'calls alternate between them (same texts). "unscanned detectors": detector runs that hit the 1 s detector budget (fail closed).',
    '',
    `| configuration | 1 MB /v1/detect p50 (ms, ${inline.latencies.length} calls) | min–max (ms) | blocked | unscanned detectors | 1 KB /v1/detect CPU per request, all threads / main thread (ms) |`,
    '|---|---|---|---|---|---|',
    row(inline),
    row(pools),
    '',
    `1 MB p50, pools / inline: **${r2(p50(pools) / p50(inline))}×**.` +
      (inline.cpuPerRequest && pools.cpuPerRequest ? ` 1 KB CPU per request, pools / inline: ${r2(pools.cpuPerRequest.total / inline.cpuPerRequest.total)}× (all threads).` : ''),
    '(1 MB texts are benign prose with some PII, then source code; "blocked" counts PII findings: the policy blocks at L2.)',
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const services: Service[] = [];
  try {
    for (const config of CONFIGS) services.push(await startService(config));
    const section = render(await measureAll(services));
    process.stdout.write(`\n${section}\n`);
    const file = join(ROOT, 'bench', 'RESULTS.md');
    writeFileSync(file, replaceSection(readFileSync(file, 'utf8'), SECTION, MARKER, `${section.trimEnd()}\n${MARKER}\n`));
  } finally {
    for (const s of services) s.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 1000));
    for (const s of services) rmSync(s.dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
