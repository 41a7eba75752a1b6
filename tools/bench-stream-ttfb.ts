import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { enableSignatureDetectors, quantile, r2, start } from './bench-procs';

/**
 * Where a streamed answer's first byte goes (npm run bench:ttfb): sequential requests, each read to
 * its end on a kept-alive connection, directly to the fake upstream and through the sensor
 * (/v1/messages) and the gateway (/v1/chat/completions), in one run. For each route: the time to the
 * first body byte of a stream and, as the reference for what the input scan and the hop cost, the
 * whole latency of the same request not streamed. "stream extra" = (stream TTFB − direct stream TTFB)
 * − (JSON latency − direct JSON latency): what streaming adds beyond a request's fixed cost.
 * The last column: time to the first text token (the first event carrying text), direct and through us.
 * Settings: BENCH_TTFB_N (default 500), BENCH_TTFB_POLICY=none|signatures (default signatures); any
 * GATEWAY_* variable is passed to the gateway without the prefix; STREAM_EVENTS, STREAM_EVENT_CHARS,
 * STREAM_GAP_MS and STREAM_NUMBERED go to the benchmark upstream (tools/bench-upstream.ts).
 */
const N = Number(process.env.BENCH_TTFB_N ?? 500);
const WARMUP = 100;
const POLICY = process.env.BENCH_TTFB_POLICY ?? 'signatures';

type Q = { p50: number; p90: number; p99: number };

/** Latency quantiles of a route: to the first body byte (firstByte), else to the end; `token`: also to the first text token. */
async function measure(url: string, headers: Record<string, string>, body: (i: number) => string, firstByte: boolean, token?: RegExp): Promise<Q & { token?: Q }> {
  const agent = new Agent({ connections: 1 });
  const times: number[] = [];
  const tokens: number[] = [];
  for (let i = 0; i < N + WARMUP; i++) {
    const payload = body(i);
    const t0 = process.hrtime.bigint();
    const res = await request(url, { method: 'POST', headers, body: payload, dispatcher: agent });
    let at: number | undefined;
    let tokenAt: number | undefined;
    let tail = '';
    for await (const chunk of res.body) {
      const now = Number(process.hrtime.bigint() - t0) / 1e6;
      at ??= now;
      if (token && tokenAt === undefined) {
        const seen = tail + (chunk as Buffer).toString('utf8');
        if (token.test(seen)) tokenAt = now;
        tail = seen.slice(-64);
      }
    }
    const total = Number(process.hrtime.bigint() - t0) / 1e6;
    if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}`);
    if (i >= WARMUP) {
      times.push(firstByte ? at ?? total : total);
      tokens.push(tokenAt ?? total);
    }
  }
  await agent.close();
  return { ...quantiles(times), token: token ? quantiles(tokens) : undefined };
}

function quantiles(times: number[]): Q {
  times.sort((a, b) => a - b);
  return { p50: r2(quantile(times, 0.5)), p90: r2(quantile(times, 0.9)), p99: r2(quantile(times, 0.99)) };
}

const prompt = (i: number) => `Request ${i}. Please write a few sentences about gardening in a mild climate, and keep it short.`;
const messages = (stream: boolean) => (i: number) =>
  JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 64, stream, messages: [{ role: 'user', content: prompt(i) }] });
const chat = (stream: boolean) => (i: number) => JSON.stringify({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content: prompt(i) }] });

const firstToken = (d: Q | undefined, o: Q | undefined) => (d && o ? `${d.p50} / ${d.p90} → ${o.p50} / ${o.p90} (+${r2(o.p50 - d.p50)})` : '');

async function main(): Promise<void> {
  const procs: ChildProcess[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-bench-ttfb-'));
  try {
    const up = await start(['dist/tools/bench-upstream.js'], { STREAM_EVENTS: '10', ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('STREAM_')).map(([k, v]) => [k, v ?? ''])) }, /PORT (\d+)/);
    procs.push(up.child);
    const upstream = `http://127.0.0.1:${up.match[1]}`;
    const key = `svc_sk_${randomBytes(24).toString('hex').slice(0, 40)}`;
    const gw = await start(
      ['dist/main.js', 'all'],
      {
        PORT: '0', SENSOR_PORT: '0', DETECTION_ADDRESS: '127.0.0.1:0', DATA_DIR: dataDir, BOOTSTRAP_API_KEY: key,
        OPENAI_BASE_URL: `${upstream}/v1`, ANTHROPIC_BASE_URL: upstream, OPENAI_API_KEY: 'sk-bench', LOG_LEVEL: 'warn',
        PLATFORM_TRAFFIC_RPM: '10000000',
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('GATEWAY_')).map(([k, v]) => [k.slice('GATEWAY_'.length), v ?? ''])),
      },
      /Ready: gateway (\S+), sensor (\S+), detection/,
    );
    procs.push(gw.child);
    const [gateway, sensor] = [gw.match[1]!, gw.match[2]!];
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const enabled = POLICY === 'none' ? [] : await enableSignatureDetectors(gateway, auth);
    const direct = { 'content-type': 'application/json', authorization: 'Bearer sk-bench' };
    const anth = { 'content-type': 'application/json', 'x-api-key': 'sk-ant-bench', 'anthropic-version': '2023-06-01' };

    const rows: string[] = [];
    const route = async (name: string, directUrl: string, directHeaders: Record<string, string>, ourUrl: string, ourHeaders: Record<string, string>, body: (s: boolean) => (i: number) => string, token: RegExp) => {
      const dStream = await measure(directUrl, directHeaders, body(true), true, token);
      const oStream = await measure(ourUrl, ourHeaders, body(true), true, token);
      const dJson = await measure(directUrl, directHeaders, body(false), false);
      const oJson = await measure(ourUrl, ourHeaders, body(false), false);
      const extra = (k: keyof Q) => r2(oStream[k] - dStream[k] - (oJson[k] - dJson[k]));
      rows.push(
        `| ${name} | ${dStream.p50} / ${dStream.p90} / ${dStream.p99} | ${oStream.p50} / ${oStream.p90} / ${oStream.p99} | ${r2(oStream.p50 - dStream.p50)} / ${r2(oStream.p90 - dStream.p90)} / ${r2(oStream.p99 - dStream.p99)} | ${r2(oJson.p50 - dJson.p50)} / ${r2(oJson.p90 - dJson.p90)} / ${r2(oJson.p99 - dJson.p99)} | ${extra('p50')} / ${extra('p90')} / ${extra('p99')} | ${firstToken(dStream.token, oStream.token)} |`,
      );
      process.stderr.write(`${rows[rows.length - 1]}\n`);
    };
    await route('sensor /v1/messages', `${upstream}/v1/messages`, anth, `${sensor}/v1/messages`, { ...anth, 'x-svc-key': key }, messages, /"text_delta"/);
    await route('gateway /v1/chat/completions', `${upstream}/v1/chat/completions`, direct, `${gateway}/v1/chat/completions`, auth, chat, /"content":"[^"]/);
    process.stdout.write(
      [
        `${new Date().toISOString()} · ${cpus().length} cores · Node ${process.version} · ${N} sequential requests per cell · policy: ${enabled.length} signature detectors on input and output (log)`,
        ``,
        `Upstream: ${process.env.STREAM_EVENTS ?? 10} text events of ${process.env.STREAM_EVENT_CHARS ?? 24} characters, ${process.env.STREAM_GAP_MS ?? 0} ms apart, ${process.env.STREAM_NUMBERED === '0' ? 'plain prose' : 'each beginning with its number'}.`,
        ``,
        `| route | direct stream TTFB p50/p90/p99 (ms) | through us | added TTFB | added latency, same request not streamed | stream extra | first token direct → through us p50/p90 (added p50) |`,
        `|---|---|---|---|---|---|---|`,
        ...rows,
        ``,
      ].join('\n'),
    );
  } finally {
    for (const p of procs.reverse()) p.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
