import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A chat-completions upstream that answers with exactly the bytes a test scripted, in the pieces it
 * scripted (each piece a separate write, `gapMs` apart, so they reach the gateway as separate reads):
 * for testing SSE framing (line endings, byte order marks, unterminated last events, splits at any
 * byte). The request's `model` names the script, so many requests can run at once. It records every
 * request body; a model without a script gets `fallback` (a JSON answer) when set, else 404.
 */
export interface ScriptedStream {
  pieces: Buffer[];
  /** The answer's status (200 unless set). */
  status?: number;
  /** Extra response headers (content-type is text/event-stream unless set here). */
  headers?: Record<string, string>;
  /** The pieces after the first are sent once this settles (a stream that pauses mid-way). */
  gate?: Promise<void>;
}

export interface FakeSseUpstream {
  url: string;
  scripts: Map<string, ScriptedStream>;
  /** Every request body received, as text. */
  bodies: string[];
  /** The JSON answer to a model without a script (null: 404). */
  fallback: Record<string, unknown> | null;
  gapMs: number;
  /** The `model` of every request received, in order. */
  received: string[];
  close(): Promise<void>;
}

export async function startFakeSseUpstream(): Promise<FakeSseUpstream> {
  const fake = { scripts: new Map<string, ScriptedStream>(), gapMs: 3, received: [] as string[], bodies: [] as string[], fallback: null } as FakeSseUpstream;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const { model } = JSON.parse(text) as { model: string };
      fake.received.push(model);
      fake.bodies.push(text);
      const script = fake.scripts.get(model);
      if (!script && fake.fallback) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(fake.fallback));
        return;
      }
      if (!script) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no script ${model}`, type: 'invalid_request_error', code: 'model_not_found' } }));
        return;
      }
      res.writeHead(script.status ?? 200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...script.headers });
      let i = 0;
      const tick = () => {
        if (res.destroyed) return;
        if (i >= script.pieces.length) return void res.end();
        res.write(script.pieces[i++]);
        if (i === 1 && script.gate) void script.gate.then(() => setTimeout(tick, fake.gapMs));
        else setTimeout(tick, fake.gapMs);
      };
      tick();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return fake;
}
