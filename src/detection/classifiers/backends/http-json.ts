import type { Agent, Dispatcher } from 'undici';
import { BackendError, describeError } from './backend-errors';

/**
 * undici is loaded on the first external backend's use, not at start: the detection thread of a deployment
 * that runs only the builtin classifier never needs it, and loading it costs that thread's heap ~5 MB
 * (bench/RESULTS.md, issue 17, start-up memory). onnx-classifier-backend.ts loads onnxruntime-node the same way.
 */
type Undici = typeof import('undici');
let undici: Undici | undefined;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const lib = (): Undici => (undici ??= require('undici') as Undici);

/**
 * The one HTTP call every external backend makes: POST a JSON body, read a bounded JSON answer. Uses an
 * undici Agent per backend (persistent keep-alive connections, bounded pool), and the caller's signal
 * (the resilient wrapper combines the request's deadline with the per-call timeout).
 */

/** A classifier verdict is small; anything bigger than this is not what the wire format promises. */
export const MAX_RESPONSE_BYTES = 1024 * 1024;

export interface AgentOptions {
  /** Upper bound of open connections to the backend's origin. */
  connections: number;
}

export function createKeepAliveAgent(options: AgentOptions): Agent {
  return new (lib().Agent)({
    connections: Math.max(1, options.connections),
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 120_000,
    connectTimeout: 10_000,
  });
}

export interface PostJsonArgs {
  dispatcher: Dispatcher;
  url: string;
  body: unknown;
  signal: AbortSignal;
  /** Sent as `Authorization: Bearer <key>` when set. */
  bearer?: string;
  /** Backend name, for error messages. */
  name: string;
}

export async function postJson(args: PostJsonArgs): Promise<unknown> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (args.bearer) headers.authorization = `Bearer ${args.bearer}`;
  let response: Dispatcher.ResponseData;
  try {
    response = await lib().request(args.url, {
      method: 'POST',
      headers,
      body: JSON.stringify(args.body),
      signal: args.signal,
      dispatcher: args.dispatcher,
    });
  } catch (err) {
    if (args.signal.aborted) throw args.signal.reason instanceof Error ? args.signal.reason : abortError(args.name);
    throw new BackendError('transport', `${args.name}: request failed (${describeError(err)})`, { cause: err });
  }
  const text = await readBounded(response, args);
  if (response.statusCode < 200 || response.statusCode > 299) {
    throw new BackendError('http_status', `${args.name}: HTTP ${response.statusCode}${errorHint(text)}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new BackendError('malformed', `${args.name}: response body is not JSON`);
  }
}

async function readBounded(response: Dispatcher.ResponseData, args: PostJsonArgs): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body) {
      const buf = chunk as Buffer;
      size += buf.length;
      if (size > MAX_RESPONSE_BYTES) {
        response.body.destroy();
        throw new BackendError('malformed', `${args.name}: response larger than ${MAX_RESPONSE_BYTES} bytes`);
      }
      chunks.push(buf);
    }
  } catch (err) {
    if (err instanceof BackendError) throw err;
    if (args.signal.aborted) throw args.signal.reason instanceof Error ? args.signal.reason : abortError(args.name);
    throw new BackendError('transport', `${args.name}: reading the response failed (${describeError(err)})`, { cause: err });
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The machine-readable part of an error body, never its free text: error messages of some servers quote the input.
 */
function errorHint(text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return '';
  }
  if (typeof parsed !== 'object' || parsed === null) return '';
  const record = parsed as Record<string, unknown>;
  const inner = typeof record.error === 'object' && record.error !== null ? (record.error as Record<string, unknown>) : {};
  // OpenAI: {error: {type, code}}; vLLM: {object: "error", type}; TEI: {error_type}.
  const vllmType = record.object === 'error' ? record.type : undefined;
  const parts = [inner.type, inner.code, vllmType, record.error_type]
    .filter((v): v is string => typeof v === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(v));
  return parts.length > 0 ? ` (${[...new Set(parts)].join(', ')})` : '';
}

function abortError(name: string): BackendError {
  return new BackendError('aborted', `${name}: call aborted`);
}

/** Joins a base URL (no trailing slash required) and a path starting with "/". */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}
