import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { enableSignatureDetectors, processCpuMs, quantile, r2, start } from './bench-procs';

/**
 * Streams under load (npm run bench:streams): N streamed chat completions opened at the same moment,
 * directly to a fake SSE upstream (the baseline, measured in the same run) and through the gateway
 * (`node dist/main.js all`: detection in its worker thread over gRPC, embedded database, every
 * signature detector on input and output, action log), each in its own process. Every stream is read
 * to its end and classified: complete (every event, `[DONE]`, no block), 503 (with its error code and
 * whether Retry-After and the envelope were there), failed closed (a 200 cut by the blocked tail after
 * part of it was released: a half-scanned stream), truncated, other status, transport error.
 *
 * Settings (environment): BENCH_STREAMS (comma-separated N, default 512,1024), BENCH_RUNS (default 3),
 * BENCH_STREAM_EVENTS (text events per stream, default 50), BENCH_STREAM_GAP_MS (default 20),
 * BENCH_STREAM_EVENT_CHARS (default 24); any GATEWAY_* variable is passed to the gateway without the
 * prefix (e.g. GATEWAY_DETECTION_MAX_ACTIVE=64); BENCH_GATEWAY_LOG: a file for the gateway's log.
 */
const COUNTS = (process.env.BENCH_STREAMS ?? '512,1024').split(',').map(Number);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const EVENTS = Number(process.env.BENCH_STREAM_EVENTS ?? 50);
const GAP_MS = Number(process.env.BENCH_STREAM_GAP_MS ?? 20);
const EVENT_CHARS = Number(process.env.BENCH_STREAM_EVENT_CHARS ?? 24);
/** Stream lengths (text events) of the sequential scan-cost measurement. */
const COST_LENGTHS = [50, 200, 800];
const COST_STREAMS = Number(process.env.BENCH_COST_STREAMS ?? 40);

interface StreamOutcome {
  kind: 'complete' | '503' | 'failed closed' | 'truncated' | 'status' | 'transport error';
  detail?: string;
  ttfbMs?: number;
  totalMs: number;
}

interface Round {
  n: number;
  target: 'direct' | 'gateway';
  wallMs: number;
  counts: Map<string, number>;
  ttfb: { p50: number; p99: number };
  total: { p50: number; p99: number };
}

const prompt = (i: number) => `Request ${i}. Please write a few sentences about gardening in a mild climate.`;
/** `events`: a stream of that many text events sent back to back (the bench upstream reads max_tokens and metadata.gap_ms). */
const chatBody = (i: number, events?: number) =>
  JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: prompt(i) }], ...(events ? { max_tokens: events, metadata: { gap_ms: '0' } } : {}) });

function classify(status: number, headers: Record<string, string | string[] | undefined>, text: string, events: number): Pick<StreamOutcome, 'kind' | 'detail'> {
  if (status === 503) {
    let code = 'no envelope';
    try {
      const e = (JSON.parse(text) as { error?: { type?: string; code?: string } }).error;
      if (e?.type && e.code) code = `${e.type}/${e.code}`;
    } catch {
      // not JSON: reported as such
    }
    return { kind: '503', detail: `${code}${headers['retry-after'] ? ', Retry-After' : ', no Retry-After'}` };
  }
  if (status !== 200) return { kind: 'status', detail: String(status) };
  if (text.includes('"security":{"blocked":true')) return { kind: 'failed closed' };
  const contentEvents = text.split('"delta":{"content":"').length - 1;
  if (!text.endsWith('data: [DONE]\n\n') || contentEvents !== events) return { kind: 'truncated' };
  return { kind: 'complete' };
}

/** N streams opened at the same moment, each read to its end. */
async function burst(url: string, headers: Record<string, string>, n: number): Promise<Omit<Round, 'target'>> {
  // Generous client timeouts: a slow answer is measured, not counted as a transport error.
  const agent = new Agent({ connections: n + 8, pipelining: 1, connectTimeout: 120_000, headersTimeout: 120_000, bodyTimeout: 120_000 });
  const t0 = Date.now();
  const outcomes = await Promise.all(
    Array.from({ length: n }, async (_, i): Promise<StreamOutcome> => {
      const s = process.hrtime.bigint();
      const ms = () => Number(process.hrtime.bigint() - s) / 1e6;
      try {
        const res = await request(url, { method: 'POST', headers, body: chatBody(i), dispatcher: agent });
        let ttfbMs: number | undefined;
        const parts: Buffer[] = [];
        for await (const chunk of res.body) {
          ttfbMs ??= ms();
          parts.push(chunk as Buffer);
        }
        return { ...classify(res.statusCode, res.headers, Buffer.concat(parts).toString('utf8'), EVENTS), ttfbMs, totalMs: ms() };
      } catch (err) {
        return { kind: 'transport error', detail: err instanceof Error ? err.message : String(err), totalMs: ms() };
      }
    }),
  );
  const wallMs = Date.now() - t0;
  await agent.close();
  const counts = new Map<string, number>();
  for (const o of outcomes) {
    const key = o.detail ? `${o.kind} (${o.detail.slice(0, 60)})` : o.kind;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const complete = outcomes.filter((o) => o.kind === 'complete');
  const ttfbs = complete.map((o) => o.ttfbMs ?? o.totalMs).sort((a, b) => a - b);
  const totals = complete.map((o) => o.totalMs).sort((a, b) => a - b);
  const q = (xs: number[]) => (xs.length === 0 ? { p50: NaN, p99: NaN } : { p50: Math.round(quantile(xs, 0.5)), p99: Math.round(quantile(xs, 0.99)) });
  return { n, wallMs, counts, ttfb: q(ttfbs), total: q(totals) };
}

/**
 * Incremental scanning, measured: COST_STREAMS sequential streams of each length through the gateway
 * (events back to back), the gateway's CPU per stream and per 1,000 streamed characters. Per-character
 * cost flat across lengths = each scan handles only new text plus the window; growing = rescanning.
 */
async function scanCost(url: string, headers: Record<string, string>, pid: number): Promise<Array<{ events: number; chars: number; cpuPerStream: number; cpuPerKChar: number }>> {
  const agent = new Agent({ connections: 1 });
  const rows = [];
  for (const events of COST_LENGTHS) {
    const run = async (k: number) => {
      for (let i = 0; i < k; i++) {
        const res = await request(url, { method: 'POST', headers, body: chatBody(i, events), dispatcher: agent });
        const text = await res.body.text();
        if (classify(res.statusCode, res.headers, text, events).kind !== 'complete') throw new Error(`scan-cost stream of ${events} events did not complete (${res.statusCode})`);
      }
    };
    await run(5);
    const before = processCpuMs(pid);
    await run(COST_STREAMS);
    const perStream = (processCpuMs(pid) - before) / COST_STREAMS;
    const chars = events * EVENT_CHARS;
    rows.push({ events, chars, cpuPerStream: r2(perStream), cpuPerKChar: r2((perStream / chars) * 1000) });
  }
  await agent.close();
  return rows;
}

function gatewayOverrides(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (k.startsWith('GATEWAY_') && v !== undefined) out[k.slice('GATEWAY_'.length)] = v;
  return out;
}

async function main(): Promise<void> {
  const procs: ChildProcess[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-streams-'));
  try {
    const upEnv = { STREAM_EVENTS: String(EVENTS), STREAM_GAP_MS: String(GAP_MS), STREAM_EVENT_CHARS: String(EVENT_CHARS) };
    const up = await start(['dist/tools/bench-upstream.js'], upEnv, /PORT (\d+)/);
    procs.push(up.child);
    const upstream = `http://127.0.0.1:${up.match[1]}`;
    const key = `svc_sk_${randomBytes(24).toString('hex').slice(0, 40)}`;
    const overrides = gatewayOverrides();
    const gwEnv = {
      PORT: '0', SENSOR_PORT: '0', DETECTION_ADDRESS: '127.0.0.1:0', DATA_DIR: dataDir, BOOTSTRAP_API_KEY: key,
      OPENAI_BASE_URL: `${upstream}/v1`, ANTHROPIC_BASE_URL: upstream, OPENAI_API_KEY: 'sk-bench', LOG_LEVEL: 'warn',
      PLATFORM_TRAFFIC_RPM: '10000000',
      ...overrides,
    };
    const gw = await start(['dist/main.js', 'all'], gwEnv, /Ready: gateway (\S+), sensor (\S+)/, process.env.BENCH_GATEWAY_LOG);
    procs.push(gw.child);
    const gateway = gw.match[1]!;
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const enabled = await enableSignatureDetectors(gateway, auth);
    const direct = { 'content-type': 'application/json', authorization: 'Bearer sk-bench' };

    const rounds: Round[] = [];
    for (let run = 0; run < RUNS; run++) {
      for (const n of COUNTS) {
        rounds.push({ ...(await burst(`${upstream}/v1/chat/completions`, direct, n)), target: 'direct' });
        rounds.push({ ...(await burst(`${gateway}/v1/chat/completions`, auth, n)), target: 'gateway' });
        process.stderr.write(`run ${run + 1} n=${n}: ${render(rounds.slice(-2))}\n`);
      }
    }
    const cost = process.env.BENCH_SKIP_COST ? [] : await scanCost(`${gateway}/v1/chat/completions`, auth, gw.child.pid!);
    process.stdout.write(report({ enabled, rounds, cost, overrides }));
  } finally {
    for (const p of procs.reverse()) p.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const outcomeText = (counts: Map<string, number>) => [...counts.entries()].map(([k, v]) => `${v} ${k}`).join(', ');

function render(rounds: Round[]): string {
  return rounds.map((r) => `${r.target}: ${outcomeText(r.counts)}; TTFB p50/p99 ${r.ttfb.p50}/${r.ttfb.p99} ms; total p50/p99 ${r.total.p50}/${r.total.p99} ms; wall ${r.wallMs} ms`).join(' | ');
}

function report(r: { enabled: string[]; rounds: Round[]; cost: Awaited<ReturnType<typeof scanCost>>; overrides: Record<string, string> }): string {
  const lines = [
    `${new Date().toISOString()} · ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}) · Node ${process.version}`,
    `${EVENTS} text events of ${EVENT_CHARS} characters per stream, ${GAP_MS} ms apart; ${r.enabled.length} signature detectors on input and output (log); gateway settings: ${JSON.stringify(r.overrides)}`,
    ``,
    `| N | target | outcome | TTFB p50 / p99 (ms) | total p50 / p99 (ms) | wall (ms) |`,
    `|---|---|---|---|---|---|`,
    ...r.rounds.map((x) => `| ${x.n} | ${x.target} | ${outcomeText(x.counts)} | ${x.ttfb.p50} / ${x.ttfb.p99} | ${x.total.p50} / ${x.total.p99} | ${x.wallMs} |`),
    ``,
  ];
  if (r.cost.length > 0) {
    lines.push(`| stream length (events / characters) | gateway process CPU per stream (ms) | per 1,000 characters (ms) |`, `|---|---|---|`);
    for (const c of r.cost) lines.push(`| ${c.events} / ${c.chars} | ${c.cpuPerStream} | ${c.cpuPerKChar} |`);
  }
  return `${lines.join('\n')}\n`;
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
