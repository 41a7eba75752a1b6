import { createServer } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Agent, request } from 'undici';
import { createDetectionClient } from '#src/shared/detection-client';
import { blockPolicy } from './bench-procs';

/**
 * The measured floor of this design, for `npm run bench:perf` (issue 17): the empty Node proxy
 * (bench-passthrough.ts) plus exactly the two detection calls the design makes per request — an input
 * Detect of the prompt before the upstream is called and an output Detect of a JSON answer before it is
 * returned — over the same gRPC hop (DETECTION_TARGET: this project's detection socket, `unix:/path`),
 * with the same policy (DETECT_TYPES: comma-separated detector types, L2, block), through the gateway's
 * own detection client. Nothing else: no authentication, policy lookup, limits, audit event, logging,
 * metrics, JSON validation or header handling. A stream is piped once its input is scanned (its first
 * byte needs the input Detect only; the floor does not scan the streamed output). What this process adds
 * to a direct call, plus the detection service's CPU (in this project's process), bounds from below what
 * a gateway built on this design can add on this machine. Prints its port on stdout.
 */
const UPSTREAM = process.env.UPSTREAM ?? 'http://127.0.0.1:8080';
const TARGET = process.env.DETECTION_TARGET;
if (!TARGET) throw new Error('DETECTION_TARGET (unix:/path of the detection socket) is required');
const policy = blockPolicy((process.env.DETECT_TYPES ?? '').split(',').filter(Boolean), 'bench:perf design floor');
const detection = createDetectionClient({ address: TARGET, timeoutMs: 10_000 });
const agent = new Agent({ connections: 128 });

interface Message {
  content?: unknown;
}
/** The prompt's text: every message's string content or text parts, and an Anthropic `system`. */
function promptText(body: { messages?: Message[]; system?: unknown }): string {
  const out: string[] = [];
  const add = (c: unknown) => {
    if (typeof c === 'string') out.push(c);
    else if (Array.isArray(c)) for (const p of c as Array<{ text?: unknown }>) if (typeof p?.text === 'string') out.push(p.text);
  };
  add(body.system);
  for (const m of body.messages ?? []) add(m?.content);
  return out.join('\n');
}
/** The answer's text: chat `choices[].message.content`, Anthropic `content[].text`. */
function answerText(body: { choices?: Array<{ message?: Message }>; content?: unknown }): string {
  const out: string[] = [];
  for (const c of body.choices ?? []) if (typeof c?.message?.content === 'string') out.push(c.message.content);
  if (Array.isArray(body.content)) for (const p of body.content as Array<{ text?: unknown }>) if (typeof p?.text === 'string') out.push(p.text);
  return out.join('\n');
}

const fail = (res: import('node:http').ServerResponse, status: number, message: string): void => {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message, type: 'bench_error', code: 'design_floor' } }));
};

async function handle(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, raw: Buffer): Promise<void> {
  const input = await detection.detect({ text: promptText(JSON.parse(raw.toString('utf8'))), direction: 'input', policy });
  if (input.blocked) return fail(res, 400, 'blocked on input');
  const headers: Record<string, string> = { 'content-type': req.headers['content-type'] ?? 'application/json' };
  for (const h of ['authorization', 'x-api-key', 'anthropic-version']) if (typeof req.headers[h] === 'string') headers[h] = req.headers[h];
  const up = await request(`${UPSTREAM}${req.url ?? '/'}`, { method: 'POST', headers, body: raw, dispatcher: agent });
  const type = String(up.headers['content-type'] ?? 'application/json');
  if (type.includes('text/event-stream')) {
    res.writeHead(up.statusCode, { 'content-type': type });
    return pipeline(up.body, res);
  }
  const text = await up.body.text();
  const output = await detection.detect({ text: answerText(JSON.parse(text)), direction: 'output', policy, admitted: true });
  if (output.blocked) return fail(res, 400, 'blocked on output');
  res.writeHead(up.statusCode, { 'content-type': type });
  res.end(text);
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    handle(req, res, Buffer.concat(chunks)).catch((err: unknown) => fail(res, 502, err instanceof Error ? err.message : String(err)));
  });
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`PORT ${typeof address === 'object' && address ? address.port : 0}\n`);
});
