import * as http2 from 'node:http2';
import * as net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { InFlightBudget } from './in-flight-budget';

/**
 * A lean gRPC client for UNARY calls over one HTTP/2 connection (node:http2), speaking the standard
 * gRPC wire protocol (PROTOCOL-HTTP2.md): `POST /package.Service/Method`, `content-type:
 * application/grpc`, `te: trailers`, `grpc-timeout`, length-prefixed messages, the status in
 * `grpc-status` / `grpc-message` trailers (or in the headers of a Trailers-Only answer).
 *
 * Why not grpc-js for these: a grpc-js unary call goes through its resolving, retrying,
 * load-balancing, interceptor and filter layers, a Metadata object per call, and a caller-stack Error,
 * which made it about a third of the gateway's cost of a Detect round trip (benchmark and profile in
 * bench/RESULTS.md). The detection server is unchanged (grpc-js); streaming calls (DetectStream) still
 * use grpc-js.
 *
 * What it keeps of grpc-js's behaviour: a deadline per call (sent as `grpc-timeout` and enforced
 * locally: DEADLINE_EXCEEDED), send/receive message size limits (RESOURCE_EXHAUSTED), lazy connect and
 * reconnect after the connection is lost (a failed connect is UNAVAILABLE), one transparent retry of a
 * call that failed on the connection before the server answered anything (the same as grpc-js's
 * transparent retry: our unary methods are side-effect free), keepalive pings on an otherwise idle
 * connection, and errors shaped as grpc.ServiceError (code, details, trailing metadata).
 */

export interface UnaryChannelOptions {
  /** host:port (`[v6]:port` for IPv6), or `unix:/path` of a Unix domain socket. */
  address: string;
  maxSendMessageBytes: number;
  maxReceiveMessageBytes: number;
  /** A PING after this long without traffic; the connection is dropped when it is not answered within keepaliveTimeoutMs. */
  keepaliveTimeMs?: number;
  keepaliveTimeoutMs?: number;
  /**
   * nghttp2's memory cap of the session, in MB (Node's `maxSessionMemory`; Node's default, 10, is less
   * than two large requests in flight). Past it the session refuses every stream with ENHANCE_YOUR_CALM.
   */
  maxSessionMemoryMb?: number;
  /** Request bytes in flight at once (size-aware admission, see in-flight-budget.ts); unlimited when unset. */
  maxInFlightBytes?: number;
}

const CONNECT_TIMEOUT_MS = 20_000;
/** HTTP status of a non-gRPC answer → gRPC status (gRPC's http-grpc-status-mapping.md). */
const HTTP_TO_GRPC: Record<number, grpc.status> = {
  400: grpc.status.INTERNAL,
  401: grpc.status.UNAUTHENTICATED,
  403: grpc.status.PERMISSION_DENIED,
  404: grpc.status.UNIMPLEMENTED,
  429: grpc.status.UNAVAILABLE,
  502: grpc.status.UNAVAILABLE,
  503: grpc.status.UNAVAILABLE,
  504: grpc.status.UNAVAILABLE,
};

/** A failed call, shaped like grpc-js's ServiceError. */
export function serviceError(code: grpc.status, details: string, metadata = new grpc.Metadata()): grpc.ServiceError {
  return Object.assign(new Error(`${code} ${grpc.status[code] ?? 'UNKNOWN'}: ${details}`), { code, details, metadata });
}

/** Transport failure before the server answered: safe to retry once on a fresh connection. */
class NotAnswered extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
  }
}

function decodeGrpcMessage(value: unknown): string {
  if (typeof value !== 'string') return '';
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function metadataOf(headers: http2.IncomingHttpHeaders): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const [name, value] of Object.entries(headers)) {
    if (name.startsWith(':') || name.startsWith('grpc-') || name === 'content-type' || value === undefined) continue;
    // Binary (-bin) metadata is not used by the detection service; text values are kept as they are.
    if (name.endsWith('-bin')) continue;
    for (const v of Array.isArray(value) ? value : [value]) md.add(name, v);
  }
  return md;
}

export class UnaryChannel {
  private session: http2.ClientHttp2Session | undefined;
  private closed = false;
  private readonly authority: string;
  private readonly target: net.NetConnectOpts;
  private readonly budget: InFlightBudget | undefined;

  constructor(private readonly options: UnaryChannelOptions) {
    if (options.maxInFlightBytes !== undefined) this.budget = new InFlightBudget(options.maxInFlightBytes, serviceError);
    if (options.address.startsWith('unix:')) {
      // `unix:/path` (and grpc's `unix:///path`); `:authority` as grpc-js sends it for a socket.
      this.target = { path: options.address.slice(5).replace(/^\/\/(?=\/)/, '') };
      this.authority = 'localhost';
    } else {
      const i = options.address.lastIndexOf(':');
      const host = options.address.slice(0, i);
      this.target = { host: host.startsWith('[') ? host.slice(1, -1) : host, port: Number(options.address.slice(i + 1)) };
      this.authority = options.address;
    }
  }

  /**
   * One unary call: `request` is the encoded message, the answer is the encoded response message.
   * `extraHeaders`: custom metadata (ASCII text values, e.g. `x-request-id`). Rejects with a grpc.ServiceError.
   */
  async call(path: string, request: Buffer, timeoutMs: number, extraHeaders?: Readonly<Record<string, string>>): Promise<Buffer> {
    if (request.length > this.options.maxSendMessageBytes) {
      throw serviceError(grpc.status.RESOURCE_EXHAUSTED, `Sent message larger than max (${request.length} vs. ${this.options.maxSendMessageBytes})`);
    }
    const deadline = Date.now() + timeoutMs;
    const release = this.budget ? (this.budget.tryAdmit(request.length) ?? (await this.budget.admit(request.length, deadline))) : undefined;
    try {
      return await this.attemptTwice(path, request, deadline, extraHeaders);
    } finally {
      release?.();
    }
  }

  private async attemptTwice(path: string, request: Buffer, deadline: number, extraHeaders?: Readonly<Record<string, string>>): Promise<Buffer> {
    try {
      return await this.attempt(path, request, deadline, extraHeaders);
    } catch (err) {
      if (!(err instanceof NotAnswered)) throw err;
      // Lost before the server answered (a connection closed under us, a refused stream): once more on a
      // fresh connection, within the same deadline.
      if (Date.now() >= deadline || this.closed) throw serviceError(grpc.status.UNAVAILABLE, err.message);
      try {
        return await this.attempt(path, request, deadline, extraHeaders);
      } catch (again) {
        if (again instanceof NotAnswered) throw serviceError(grpc.status.UNAVAILABLE, again.message);
        throw again;
      }
    }
  }

  close(): void {
    this.closed = true;
    this.session?.close();
    this.session = undefined;
  }

  private connect(): http2.ClientHttp2Session {
    if (this.closed) throw new Error('channel closed');
    if (this.session && !this.session.closed && !this.session.destroyed) return this.session;
    const session = http2.connect(`http://${this.authority}`, {
      createConnection: () => {
        const socket = net.connect(this.target);
        if (!('path' in this.target)) socket.setNoDelay(true);
        return socket;
      },
      settings: { enablePush: false },
      peerMaxConcurrentStreams: 1000,
      ...(this.options.maxSessionMemoryMb !== undefined && { maxSessionMemory: this.options.maxSessionMemoryMb }),
    });
    const drop = () => {
      if (this.session === session) this.session = undefined;
    };
    session.on('error', drop);
    session.on('close', drop);
    session.on('goaway', drop);
    // Connect timeout (a connect that never completes); further pings keep an idle connection honest.
    const connectTimer = setTimeout(() => session.destroy(new Error('connect timeout')), CONNECT_TIMEOUT_MS);
    connectTimer.unref();
    session.once('connect', () => clearTimeout(connectTimer));
    session.once('close', () => clearTimeout(connectTimer));
    this.keepalive(session);
    // Idle connections do not keep the process alive; a pending call's timer does.
    session.unref();
    this.session = session;
    return session;
  }

  private keepalive(session: http2.ClientHttp2Session): void {
    const every = this.options.keepaliveTimeMs;
    if (!every) return;
    const timeout = this.options.keepaliveTimeoutMs ?? 20_000;
    const timer = setInterval(() => {
      if (session.closed || session.destroyed) return clearInterval(timer);
      let answered = false;
      const guard = setTimeout(() => {
        if (!answered) session.destroy(new Error('keepalive ping not answered'));
      }, timeout);
      guard.unref();
      try {
        session.ping((err) => {
          answered = true;
          clearTimeout(guard);
          if (err) session.destroy(err);
        });
      } catch {
        clearTimeout(guard);
      }
    }, every);
    timer.unref();
    session.once('close', () => clearInterval(timer));
  }

  private attempt(path: string, request: Buffer, deadline: number, extraHeaders?: Readonly<Record<string, string>>): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      const remaining = Math.max(1, deadline - Date.now());
      let stream: http2.ClientHttp2Stream;
      try {
        stream = this.connect().request(
          {
            ':method': 'POST',
            ':path': path,
            'content-type': 'application/grpc',
            te: 'trailers',
            'grpc-timeout': grpcTimeout(remaining),
            'grpc-accept-encoding': 'identity',
            ...extraHeaders,
          },
          { endStream: false },
        );
      } catch (err) {
        // e.g. the session ran out of stream ids or was closed between our check and the request.
        this.session?.destroy();
        this.session = undefined;
        reject(new NotAnswered(err));
        return;
      }
      let settled = false;
      let answered = false;
      let status: grpc.status | undefined;
      let details = '';
      /** The headers that carried the status: their metadata is built only for a failed call (an OK answer's is never read). */
      let statusHeaders: http2.IncomingHttpHeaders | undefined;
      let httpStatus = 0;
      const chunks: Buffer[] = [];
      let received = 0;
      const timer = setTimeout(() => {
        finish(serviceError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded'));
        stream.close(http2.constants.NGHTTP2_CANCEL);
      }, remaining);
      const finish = (err: unknown, value?: Buffer) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(value!);
      };
      const readStatus = (headers: http2.IncomingHttpHeaders) => {
        const code = headers['grpc-status'];
        if (code === undefined) return;
        status = Number(code) as grpc.status;
        details = decodeGrpcMessage(headers['grpc-message']);
        statusHeaders = headers;
      };
      stream.on('response', (headers) => {
        answered = true;
        httpStatus = Number(headers[':status']);
        readStatus(headers); // Trailers-Only
      });
      stream.on('trailers', readStatus);
      stream.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > this.options.maxReceiveMessageBytes + 5) {
          finish(serviceError(grpc.status.RESOURCE_EXHAUSTED, `Received message larger than max (${received} vs. ${this.options.maxReceiveMessageBytes})`));
          stream.close(http2.constants.NGHTTP2_CANCEL);
          return;
        }
        chunks.push(chunk);
      });
      stream.on('error', (err) => {
        // Before any answer nothing reached the server's handler or it refused the stream: retryable.
        finish(answered ? serviceError(grpc.status.UNAVAILABLE, err.message) : new NotAnswered(err));
      });
      stream.on('close', () => {
        if (settled) return;
        if (!answered) return finish(new NotAnswered(new Error(`stream closed (${stream.rstCode ?? 'no code'})`)));
        if (status === undefined) {
          const code = httpStatus === 200 ? grpc.status.UNKNOWN : HTTP_TO_GRPC[httpStatus] ?? grpc.status.UNKNOWN;
          return finish(serviceError(code, httpStatus === 200 ? 'No status received' : `Received HTTP status code ${httpStatus}`));
        }
        if (status !== grpc.status.OK) return finish(serviceError(status, details, metadataOf(statusHeaders!)));
        const message = decodeMessage(Buffer.concat(chunks));
        if (message instanceof Error) finish(message);
        else finish(null, message);
      });
      const head = Buffer.allocUnsafe(5);
      head.writeUInt8(0, 0);
      head.writeUInt32BE(request.length, 1);
      stream.end(Buffer.concat([head, request]));
    });
  }
}

/** A `grpc-timeout` value: at most 8 digits and a unit (milliseconds, or seconds past ~27 hours). */
export function grpcTimeout(ms: number): string {
  return ms < 1e8 ? `${Math.ceil(ms)}m` : `${Math.min(99_999_999, Math.ceil(ms / 1000))}S`;
}

/** The single length-prefixed message of a unary answer (uncompressed: we offer identity only). */
function decodeMessage(body: Buffer): Buffer | grpc.ServiceError {
  if (body.length < 5) return serviceError(grpc.status.INTERNAL, 'Response message missing');
  if (body[0] !== 0) return serviceError(grpc.status.INTERNAL, 'Compressed response message not supported');
  const length = body.readUInt32BE(1);
  if (body.length !== 5 + length) return serviceError(grpc.status.INTERNAL, 'Malformed response message framing');
  return body.subarray(5);
}
