import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { cpuMs, enableSignatureDetectors, quantile, r2, ROOT, start } from './bench-procs';
import { KEEP_MARKER, replaceTrafficSection } from './results-sections';

/**
 * The traffic-path benchmark (npm run bench:gateway): the same calls made directly to a fast fake
 * upstream and through the gateway / sensor, in one run on this machine, so the numbers are ratios
 * against a baseline measured alongside. Every process is separate: the fake upstream, the gateway
 * (`node dist/main.js all`, embedded database, default settings, every signature detector enabled on
 * input and output with action log), and this driver.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: Record<string, unknown>) => Promise<AutocannonResult>;

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 8);
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 1500);
const LOAD_CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const STREAMS = Number(process.env.BENCH_STREAMS ?? 512);

const DETECTION_THREAD = process.env.DETECTION_THREAD === 'false' ? 'false' : 'true';

/** Sequential requests (concurrency 1), precise latencies. */
async function sequential(url: string, headers: Record<string, string>, body: (i: number) => string, n: number): Promise<{ p50: number; p99: number }> {
  const agent = new Agent({ connections: 1 });
  const times: number[] = [];
  for (let i = 0; i < n + 100; i++) {
    const payload = body(i);
    const t0 = process.hrtime.bigint();
    const res = await request(url, { method: 'POST', headers, body: payload, dispatcher: agent });
    await res.body.arrayBuffer();
    if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}`);
    if (i >= 100) times.push(Number(process.hrtime.bigint() - t0) / 1e6); // the first 100 warm up
  }
  await agent.close();
  times.sort((a, b) => a - b);
  return { p50: r2(quantile(times, 0.5)), p99: r2(quantile(times, 0.99)) };
}

/** Load from LOAD_CONNECTIONS connections for DURATION_S (after a short warm-up); with the server's CPU time per request when `pid` is given. */
async function load(url: string, headers: Record<string, string>, body: (i: number) => string, pid?: number): Promise<LoadResult> {
  let i = 0;
  const requests = [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, body: body(i++) }) }];
  await autocannon({ url, method: 'POST', headers, requests, connections: LOAD_CONNECTIONS, duration: 1 });
  const before = pid === undefined ? undefined : cpuMs(pid);
  const result = await autocannon({ url, method: 'POST', headers, requests, connections: LOAD_CONNECTIONS, duration: DURATION_S });
  const after = pid === undefined ? undefined : cpuMs(pid);
  const n = result.requests.total;
  const cpu = before && after && n > 0 ? { total: r2((after.total - before.total) / n), main: r2((after.main - before.main) / n) } : undefined;
  return { ...result, cpu };
}

interface LoadResult extends AutocannonResult {
  /** CPU ms per request of the server process (all threads) and of its main thread. */
  cpu?: { total: number; main: number };
}

/**
 * Time to the first body byte of a streamed answer, sequentially. Each stream is read to its end, as a
 * client does, so the connection is reused: stopping at the first byte would abort every stream (a
 * new connection per request, and through the sensor an aborted upstream request and a new upstream
 * connection each time), which measures abort handling rather than the time to the first byte.
 */
async function ttfb(url: string, headers: Record<string, string>, body: (i: number) => string, n: number): Promise<{ p50: number; p99: number }> {
  const agent = new Agent({ connections: 1 });
  const times: number[] = [];
  for (let i = 0; i < n + 50; i++) {
    const payload = body(i);
    const t0 = process.hrtime.bigint();
    const res = await request(url, { method: 'POST', headers, body: payload, dispatcher: agent });
    let first = true;
    for await (const _ of res.body) {
      if (first && i >= 50) times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      first = false;
    }
  }
  await agent.close();
  times.sort((a, b) => a - b);
  return { p50: r2(quantile(times, 0.5)), p99: r2(quantile(times, 0.99)) };
}

/**
 * N streams through the sensor, all open at the same time. `spreadMs` 0: all requests arrive at once
 * (a burst: every admission scan queues on detection at the same moment); otherwise arrivals are spread
 * over that many milliseconds, still far shorter than one stream, so all N are open together.
 */
async function concurrentStreams(url: string, headers: Record<string, string>, body: (i: number) => string, n: number, spreadMs: number) {
  const agent = new Agent({ connections: n + 8, pipelining: 1 });
  const t0 = Date.now();
  const statuses = new Map<string, number>();
  let open = 0;
  let maxOpen = 0;
  const durations = await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      if (spreadMs > 0) await new Promise((r) => setTimeout(r, (i * spreadMs) / n));
      const s = Date.now();
      try {
        const res = await request(url, { method: 'POST', headers, body: body(i), dispatcher: agent });
        open += 1;
        maxOpen = Math.max(maxOpen, open);
        const text = await res.body.text();
        open -= 1;
        const key = res.statusCode === 200 && text.includes('message_stop') ? 'completed' : `status ${res.statusCode}`;
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
      } catch (err) {
        statuses.set('transport error', (statuses.get('transport error') ?? 0) + 1);
        void err;
      }
      return Date.now() - s;
    }),
  );
  await agent.close();
  durations.sort((a, b) => a - b);
  const outcome = [...statuses.entries()].map(([k, v]) => `${v} ${k}`).join(', ');
  return { n, spreadMs, wallMs: Date.now() - t0, p50Ms: quantile(durations, 0.5), maxMs: durations[durations.length - 1]!, maxOpen, outcome };
}

/** A 1 KB prompt, different for every request (`i`): nothing downstream can answer it from a cache. */
function prompt1k(i: number): string {
  const base = 'Please review the following function and suggest improvements to its error handling and naming. ';
  return (`Request ${i}. ${base.repeat(11)}Thanks.`).slice(0, 1024);
}

const chatBodyOf = (i: number) => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: prompt1k(i) }], temperature: 0.2 });
const detectBodyOf = (i: number) => JSON.stringify({ content: prompt1k(i), direction: 'input' });
const messagesBodyOf = (i: number) =>
  JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 64, stream: true, messages: [{ role: 'user', content: prompt1k(i) }] });

async function main(): Promise<void> {
  const procs: ChildProcess[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-'));
  try {
    const up = await start(['dist/tools/bench-upstream.js'], {}, /PORT (\d+)/);
    procs.push(up.child);
    const slowUp = await start(['dist/tools/bench-upstream.js'], { STREAM_EVENTS: '50', STREAM_GAP_MS: '20' }, /PORT (\d+)/);
    procs.push(slowUp.child);
    const upstream = `http://127.0.0.1:${up.match[1]}`;
    const key = `svc_sk_${randomBytes(24).toString('hex').slice(0, 40)}`;
    const gwEnv = {
      PORT: '0', SENSOR_PORT: '0', DETECTION_ADDRESS: '127.0.0.1:0', DATA_DIR: dataDir, BOOTSTRAP_API_KEY: key,
      OPENAI_BASE_URL: `${upstream}/v1`, ANTHROPIC_BASE_URL: upstream, OPENAI_API_KEY: 'sk-bench', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
      // DETECTION_THREAD=false in the driver's environment measures detection on the main event loop.
      DETECTION_THREAD: DETECTION_THREAD,
      // The benchmark measures the proxy path, not the platform limit (which it would hit in a second):
      // the limit check still runs on every request, with a ceiling it never reaches.
      PLATFORM_TRAFFIC_RPM: '10000000',
    };
    // The floor: an empty Node.js proxy in front of the same upstream (bench-passthrough.ts).
    const floor = await start(['dist/tools/bench-passthrough.js'], { UPSTREAM: upstream }, /PORT (\d+)/);
    procs.push(floor.child);
    const floorUrl = `http://127.0.0.1:${floor.match[1]}`;
    const gw = await start(['dist/main.js', 'all'], gwEnv, /Ready: gateway (\S+), sensor (\S+), detection grpc:\/\/(\S+)/);
    procs.push(gw.child);
    const [gateway, sensor] = [gw.match[1]!, gw.match[2]!];
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const enabled = await enableSignatureDetectors(gateway, auth);

    const direct = { 'content-type': 'application/json', authorization: 'Bearer sk-bench' };
    const seqDirect = await sequential(`${upstream}/v1/chat/completions`, direct, chatBodyOf, SEQUENTIAL);
    const seqGateway = await sequential(`${gateway}/v1/chat/completions`, auth, chatBodyOf, SEQUENTIAL);
    const seqDetect = await sequential(`${gateway}/v1/detect`, auth, detectBodyOf, SEQUENTIAL);
    const loadDirect = await load(`${upstream}/v1/chat/completions`, direct, chatBodyOf, up.child.pid);
    const loadGateway = await load(`${gateway}/v1/chat/completions`, auth, chatBodyOf, gw.child.pid);
    const seqFloor = await sequential(`${floorUrl}/v1/chat/completions`, direct, chatBodyOf, SEQUENTIAL);
    const loadFloor = await load(`${floorUrl}/v1/chat/completions`, direct, chatBodyOf, floor.child.pid);
    floor.child.kill('SIGTERM');

    const anth = { 'content-type': 'application/json', 'x-api-key': 'sk-ant-bench', 'anthropic-version': '2023-06-01' };
    const ttfbDirect = await ttfb(`${upstream}/v1/messages`, anth, messagesBodyOf, 500);
    const ttfbSensor = await ttfb(`${sensor}/v1/messages`, { ...anth, 'x-svc-key': key }, messagesBodyOf, 500);

    // Many long streams at once, through a sensor whose upstream streams for about a second each.
    // The slow upstream gets its own sensor process (its own embedded database: PGlite is one process
    // per directory), using the first process's detection service.
    const dataDir2 = mkdtempSync(join(tmpdir(), 'gw-bench2-'));
    const gw2 = await start(
      ['dist/main.js', 'sensor'],
      { ...gwEnv, DATA_DIR: dataDir2, ANTHROPIC_BASE_URL: `http://127.0.0.1:${slowUp.match[1]}`, DETECTION_ADDRESS: gw.match[3]! },
      /Ready: sensor (\S+)/,
    );
    procs.push(gw2.child);
    const streamUrl = `${gw2.match[1]}/v1/messages`;
    const spread = await concurrentStreams(streamUrl, { ...anth, 'x-svc-key': key }, messagesBodyOf, STREAMS, 500);
    const burst = await concurrentStreams(streamUrl, { ...anth, 'x-svc-key': key }, messagesBodyOf, STREAMS, 0);
    const streams = [spread, burst];
    gw2.child.kill('SIGTERM');
    setTimeout(() => rmSync(dataDir2, { recursive: true, force: true }), 1000).unref();

    const report = renderReport({ enabled, seqDirect, seqGateway, seqDetect, loadDirect, loadGateway, seqFloor, loadFloor, ttfbDirect, ttfbSensor, streams });
    process.stdout.write(report);
    writeSection(report);
  } finally {
    for (const p of procs.reverse()) p.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

interface ReportInput {
  enabled: string[];
  seqDirect: { p50: number; p99: number };
  seqGateway: { p50: number; p99: number };
  seqDetect: { p50: number; p99: number };
  loadDirect: LoadResult;
  loadGateway: LoadResult;
  seqFloor: { p50: number; p99: number };
  loadFloor: LoadResult;
  ttfbDirect: { p50: number; p99: number };
  ttfbSensor: { p50: number; p99: number };
  streams: Array<{ n: number; spreadMs: number; wallMs: number; p50Ms: number; maxMs: number; maxOpen: number; outcome: string }>;
}

const cpuCell = (l: LoadResult) => (l.cpu ? `${l.cpu.total} / ${l.cpu.main}` : 'n/a');

function renderReport(r: ReportInput): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const ratio = r.loadGateway.requests.average / Math.max(1, r.loadDirect.requests.average);
  const floorRatio = r.loadFloor.requests.average / Math.max(1, r.loadDirect.requests.average);
  const lines = [
    `## Traffic path (npm run bench:gateway)`,
    ``,
    `${new Date().toISOString().slice(0, 10)} · ${cpus().length} cores (${cpu}) · Node ${process.version} · embedded database · LOG_LEVEL ${process.env.BENCH_LOG_LEVEL ?? 'info'}.`,
    `Policy: ${r.enabled.length} signature detectors on input and output (${r.enabled.join(', ')}), action log; 1 KB prompt, different on every request; the gRPC hop (detection ${DETECTION_THREAD === 'false' ? 'on the main event loop, DETECTION_THREAD=false' : 'in its worker thread'}, "all" mode), audit writing and the platform limit check (ceiling raised) included; load from a separate process (autocannon in this driver), same connection count for direct and through us.`,
    ``,
    `| measurement | direct to upstream | through us | added |`,
    `|---|---|---|---|`,
    `| chat completions, concurrency 1, p50 (ms) | ${r.seqDirect.p50} | ${r.seqGateway.p50} | ${r2(r.seqGateway.p50 - r.seqDirect.p50)} |`,
    `| chat completions, concurrency 1, p99 (ms) | ${r.seqDirect.p99} | ${r.seqGateway.p99} | ${r2(r.seqGateway.p99 - r.seqDirect.p99)} |`,
    `| chat completions, ${LOAD_CONNECTIONS} connections, req/s | ${Math.round(r.loadDirect.requests.average)} | ${Math.round(r.loadGateway.requests.average)} | ratio ${r2(ratio)} |`,
    `| chat completions, ${LOAD_CONNECTIONS} connections, p99 (ms) | ${r.loadDirect.latency.p99} | ${r.loadGateway.latency.p99} | |`,
    `| chat completions, ${LOAD_CONNECTIONS} connections, CPU ms per request: whole process / main thread | ${cpuCell(r.loadDirect)} | ${cpuCell(r.loadGateway)} | |`,
    `| /v1/detect alone, concurrency 1, p50 / p99 (ms) | | ${r.seqDetect.p50} / ${r.seqDetect.p99} | |`,
    `| floor: an empty Node.js proxy (bench-passthrough.ts: no auth, detection, gRPC, audit or logs), concurrency 1, p50 / p99 (ms) | ${r.seqDirect.p50} / ${r.seqDirect.p99} | ${r.seqFloor.p50} / ${r.seqFloor.p99} | ${r2(r.seqFloor.p50 - r.seqDirect.p50)} / ${r2(r.seqFloor.p99 - r.seqDirect.p99)} |`,
    `| floor: the empty proxy, ${LOAD_CONNECTIONS} connections, req/s (CPU ms per request) | ${Math.round(r.loadDirect.requests.average)} | ${Math.round(r.loadFloor.requests.average)} (${cpuCell(r.loadFloor)}) | ratio ${r2(floorRatio)} |`,
    `| sensor stream, time to first byte p50 (ms) | ${r.ttfbDirect.p50} | ${r.ttfbSensor.p50} | ${r2(r.ttfbSensor.p50 - r.ttfbDirect.p50)} |`,
    `| sensor stream, time to first byte p99 (ms) | ${r.ttfbDirect.p99} | ${r.ttfbSensor.p99} | ${r2(r.ttfbSensor.p99 - r.ttfbDirect.p99)} |`,
    ...r.streams.map(
      (st) =>
        `| ${st.n} sensor streams open together (50 events 20 ms apart, ~1 s each), ${st.spreadMs === 0 ? 'all arriving at once' : `arriving over ${st.spreadMs} ms`} | | ${st.outcome}; ${st.maxOpen} open at once; p50 ${st.p50Ms} ms, slowest ${st.maxMs} ms | |`,
    ),
    ``,
    `Errors: direct ${r.loadDirect.errors + r.loadDirect.non2xx}, through us ${r.loadGateway.errors + r.loadGateway.non2xx}.`,
    ``,
    KEEP_MARKER,
  ];
  return lines.join('\n');
}

function writeSection(section: string): void {
  const file = join(ROOT, 'bench', 'RESULTS.md');
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    current = '# Benchmark results\n\n';
  }
  writeFileSync(file, replaceTrafficSection(current, section));
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
