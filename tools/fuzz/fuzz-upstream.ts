import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { planAnswer, type Api } from './upstream-answers';

/**
 * The fuzz run's fake upstream, for both wire APIs (`/v1/chat/completions`, `/v1/messages`): each
 * request carries its case seed in `x-stainless-fuzz-case` (the gateway forwards `x-stainless-*`, the
 * sensor every header) and gets the answer `planAnswer` derives from it, written in its pieces.
 */
export const CASE_HEADER = 'x-stainless-fuzz-case';

export interface FuzzUpstream {
  /** Base URL without /v1 (the sensor's ANTHROPIC_BASE_URL); `${url}/v1` is OPENAI_BASE_URL. */
  url: string;
  requests: number;
  close(): Promise<void>;
}

function isStream(body: Buffer): boolean {
  try {
    return (JSON.parse(body.toString('utf8')) as { stream?: unknown }).stream === true;
  } catch {
    return false;
  }
}

function write(res: ServerResponse, pieces: Buffer[], ending: 'end' | 'destroy' | 'stall'): void {
  let i = 0;
  const tick = () => {
    if (res.destroyed) return;
    if (i < pieces.length) {
      res.write(pieces[i++]);
      return void (i % 16 === 0 ? setTimeout(tick, 1) : setImmediate(tick));
    }
    if (ending === 'end') res.end();
    else if (ending === 'destroy') res.destroy();
  };
  tick();
}

export async function startFuzzUpstream(): Promise<FuzzUpstream> {
  const fake = { requests: 0 } as FuzzUpstream;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    req.on('end', () => {
      fake.requests += 1;
      const api: Api = req.url?.includes('/messages') ? 'anthropic' : 'openai';
      const seed = Number(req.headers[CASE_HEADER] ?? 0) >>> 0;
      const answer = planAnswer(seed, api, isStream(Buffer.concat(chunks)));
      res.writeHead(answer.status, answer.headers);
      write(res, answer.pieces, answer.ending);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return fake;
}
