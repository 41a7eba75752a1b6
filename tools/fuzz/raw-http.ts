import { connect } from 'node:net';

/**
 * A raw HTTP/1.1 client for the fuzzer: it writes exactly the bytes it is given (duplicated headers,
 * wrong Content-Length, invalid bytes: what fetch would refuse to send) and reads the answer until the
 * server closes the connection (requests carry `Connection: close`), within a deadline.
 */
export interface RawResponse {
  status: number;
  headers: Map<string, string[]>;
  body: Buffer;
  /** The server closed (or reset) the connection before a complete chunked body. */
  incomplete: boolean;
}

export type RawOutcome =
  | { kind: 'response'; response: RawResponse; ms: number }
  | { kind: 'timeout'; ms: number; bytes: number }
  | { kind: 'no_response'; ms: number; error?: string };

export function sendRaw(port: number, request: Buffer, timeoutMs: number): Promise<RawOutcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    let error: string | undefined;
    const socket = connect({ port, host: '127.0.0.1' });
    const finish = (outcome: RawOutcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => {
      finish({ kind: 'timeout', ms: performance.now() - started, bytes: chunks.reduce((n, c) => n + c.length, 0) });
    }, timeoutMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
    socket.on('close', () => {
      const response = parseResponse(Buffer.concat(chunks));
      const ms = performance.now() - started;
      finish(response ? { kind: 'response', response, ms } : { kind: 'no_response', ms, error });
    });
    // The server may answer (and close) before the whole body is written: a write error is not a failure.
    socket.write(request, () => undefined);
  });
}

function dechunk(body: Buffer): { body: Buffer; complete: boolean } {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    if (eol < 0) return { body: Buffer.concat(parts), complete: false };
    const size = parseInt(body.subarray(at, eol).toString('latin1'), 16);
    if (!Number.isFinite(size)) return { body: Buffer.concat(parts), complete: false };
    if (size === 0) return { body: Buffer.concat(parts), complete: true };
    parts.push(body.subarray(eol + 2, eol + 2 + size));
    if (eol + 2 + size > body.length) return { body: Buffer.concat(parts), complete: false };
    at = eol + 2 + size + 2;
  }
}

/** The first response in `bytes` (a 100 Continue is skipped), or null when there is none. */
export function parseResponse(bytes: Buffer): RawResponse | null {
  let rest = bytes;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) return null;
    const lines = rest.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1]);
    if (!Number.isFinite(status)) return null;
    const body = rest.subarray(end + 4);
    if (status === 100) {
      rest = body;
      continue;
    }
    const headers = new Map<string, string[]>();
    for (const line of lines.slice(1)) {
      const i = line.indexOf(':');
      const name = line.slice(0, i).trim().toLowerCase();
      headers.set(name, [...(headers.get(name) ?? []), line.slice(i + 1).trim()]);
    }
    if (headers.get('transfer-encoding')?.some((v) => v.toLowerCase().includes('chunked'))) {
      const { body: decoded, complete } = dechunk(body);
      return { status, headers, body: decoded, incomplete: !complete };
    }
    const length = Number(headers.get('content-length')?.[0]);
    const sliced = Number.isFinite(length) ? body.subarray(0, length) : body;
    return { status, headers, body: sliced, incomplete: Number.isFinite(length) && body.length < length };
  }
}

export type HeaderList = Array<[string, string | Buffer]>;

/** Request bytes: request line, the headers in order (values may be raw bytes), blank line, body. */
export function buildRequest(method: string, path: string, headers: HeaderList, body: Buffer): Buffer {
  const head: Buffer[] = [Buffer.from(`${method} ${path} HTTP/1.1\r\n`, 'latin1')];
  for (const [name, value] of headers) head.push(Buffer.from(`${name}: `, 'latin1'), Buffer.isBuffer(value) ? value : Buffer.from(value, 'latin1'), Buffer.from('\r\n'));
  head.push(Buffer.from('\r\n'));
  return Buffer.concat([...head, body]);
}
