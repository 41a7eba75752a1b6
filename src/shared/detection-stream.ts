import * as grpc from '@grpc/grpc-js';
import type { DetectCategory, DetectFinding, DetectorOutcome } from './detection-client';
import type { DetectionAdmission } from './detection-admission';
import { decodeDetectStreamUpdate } from './detect-response-wire';
import { DetectStreamWriter } from './detection-stream-writer';
import { AppError, invalidRequest } from './errors';
import type { DetectionPolicy, Direction } from './policy';
import { REQUEST_ID_METADATA_KEY, validRequestId } from './request-id';
import {
  detectionStreamMethod,
  DIRECTION_TO_PROTO,
  FAIL_MODE_TO_PROTO,
  STREAM_RELEASE_TO_PROTO,
  type FailMode,
  type ProtoDetectorConfig,
  type ProtoDetectStreamRequest,
  type ProtoDetectStreamStart,
  type ProtoDetectStreamResponse,
} from './proto';

/**
 * The client side of the DetectStream RPC (see detection.proto): a text sent in chunks, answered with
 * settled findings, the running verdict and `releasedUpTo`, the prefix of the text that has been fully
 * scanned. Built for a streaming proxy: write each chunk of the upstream response as it arrives, and
 * release to the client only text before `latest.releasedUpTo`, and nothing once `latest.blocked`.
 * Opened through `DetectionClient.detectStream()`.
 */

/** Default deadline of a whole DetectStream call (a streamed model response can take minutes). */
export const DEFAULT_STREAM_TIMEOUT_MS = 15 * 60_000;

const streamMethod = detectionStreamMethod<ProtoDetectStreamRequest, ProtoDetectStreamResponse>('DetectStream');

/** Options of a streaming scan (DetectStream). */
/**
 * H of the gateway's and the sensor's output streams (adaptive release, see detection/stream-release.ts):
 * a number written in groups (a card, IBAN or phone number, a short address) and any match a blocking
 * rule found are held until this many characters follow their start, and findings are reported with this
 * much following context; a run of non-space characters up to the window (a key, an e-mail address, a
 * URL) is held whole whatever its length. Also the default H of adaptive release on the server.
 */
export const STREAM_HOLD_BACK_CHARS = 128;

export interface DetectStreamOptions {
  direction: Direction;
  policy: DetectionPolicy;
  /** Default closed. */
  failMode?: FailMode;
  /** Per-detector budget of each scan on the server; default: the server's. */
  detectorTimeoutMs?: number;
  /** Carry-over window on the server (characters of context around the settled region); default 1024. */
  windowChars?: number;
  /**
   * Incremental release (see stream-scanner.ts): text is released once this many characters follow it
   * (and never inside a run of non-space characters still arriving); default: once the window follows it.
   */
  holdBackChars?: number;
  /**
   * `adaptive`: release everything scanned except the tail a detector may still need whole (see
   * detection/stream-release.ts); holdBackChars is then how long numbers and found matches are held.
   * Default `fixed` (the holdBackChars rule).
   */
  release?: 'fixed' | 'adaptive';
  /** Deadline of the whole stream, in milliseconds (default DEFAULT_STREAM_TIMEOUT_MS). */
  timeoutMs?: number;
  /**
   * Called with every update, in order. When given, updates are not queued for async iteration (so a
   * caller that only uses the callback holds no backlog).
   */
  onUpdate?: (update: DetectStreamUpdate) => void;
  /** The HTTP request's id, sent as `x-request-id` metadata: the detection service's lines about the stream carry it. */
  requestId?: string;
}

/** One answer of the server: what became settled, and the running verdict. */
export interface DetectStreamUpdate {
  /** Findings settled by this scan, each reported once per stream; offsets from the start of the stream. */
  findings: DetectFinding[];
  /** Categories that fired for the first time in this scan (or again with a more severe action). */
  newCategories: DetectCategory[];
  /** Characters of the stream that have been fully scanned: this prefix may be released. */
  releasedUpTo: number;
  /** Characters the server has received. */
  received: number;
  /** Running verdict over everything scanned so far. */
  blocked: boolean;
  categories: DetectCategory[];
  blockReason: string;
  outcomes: DetectorOutcome[];
  scanned: boolean;
  allowListed: boolean;
  /** The last update of the stream (after end()). */
  done: boolean;
  elapsedMs: number;
}

/**
 * A streaming scan in progress. Write chunks in order, then end(). Updates arrive through the async
 * iterator (or `onUpdate`); `latest` is the most recent one. A streaming proxy releases text up to
 * `latest.releasedUpTo` unless `latest.blocked`.
 */
export interface DetectStream extends AsyncIterable<DetectStreamUpdate> {
  /**
   * Queues the next chunk (sent in batches, each one step of admitted detection work: see
   * detection-stream-writer.ts); waits only when much text is pending (backpressure). Rejects once the
   * stream failed.
   */
  write(chunk: string): Promise<void>;
  /** Ends the text and resolves with the final (`done`) update, which settles the rest of the text. */
  end(): Promise<DetectStreamUpdate>;
  /** Abandons the stream (the server stops scanning); pending promises reject. */
  cancel(): void;
  /** The most recent update, if any. */
  readonly latest: DetectStreamUpdate | undefined;
}


export interface OpenDetectStreamArgs {
  client: grpc.Client;
  options: DetectStreamOptions;
  toProtoConfig: (policy: DetectionPolicy) => ProtoDetectorConfig;
  toAppError: (err: grpc.ServiceError) => AppError;
  /** The process's admission control; every batch of text is one step of admitted work. */
  admission?: DetectionAdmission;
  /** Deadline of one step (a batch sent and acknowledged), from when its slot is granted. */
  stepTimeoutMs: number;
}

function requestMetadata(requestId: string | undefined): grpc.Metadata {
  const metadata = new grpc.Metadata();
  const id = validRequestId(requestId);
  if (id) metadata.set(REQUEST_ID_METADATA_KEY, id);
  return metadata;
}

export function openDetectStream({ client, options, toProtoConfig, toAppError, admission, stepTimeoutMs }: OpenDetectStreamArgs): DetectStream {
  const call = client.makeBidiStreamRequest<ProtoDetectStreamRequest, DetectStreamUpdate>(
    streamMethod.path,
    streamMethod.requestSerialize,
    // Straight into the gateway's shape (detect-response-wire.ts), not through protobufjs' objects.
    decodeDetectStreamUpdate,
    requestMetadata(options.requestId),
    { deadline: Date.now() + (options.timeoutMs ?? DEFAULT_STREAM_TIMEOUT_MS) },
  );
  const state = new StreamState(options.onUpdate);
  call.on('data', (u: DetectStreamUpdate) => state.push(u));
  call.on('error', (err: grpc.ServiceError) => state.fail(err.code === grpc.status.CANCELLED && state.cancelled ? err : toAppError(err)));
  call.on('end', () => state.close());

  const send = (msg: ProtoDetectStreamRequest) =>
    new Promise<void>((resolve, reject) => {
      if (state.error !== undefined) return reject(state.error);
      if (call.write(msg)) return resolve();
      const settle = () => {
        call.off('drain', settle);
        state.off(settle);
        if (state.error !== undefined) reject(state.error);
        else resolve();
      };
      call.on('drain', settle);
      state.onFailure(settle);
    });
  // The start (the configuration the server compiles) goes with the first batch: one step of admitted work.
  let start: ProtoDetectStreamStart | null = {
    direction: DIRECTION_TO_PROTO[options.direction],
    config: toProtoConfig(options.policy),
    fail_mode: FAIL_MODE_TO_PROTO[options.failMode ?? 'closed'],
    detector_timeout_ms: options.detectorTimeoutMs ?? 0,
    window_chars: options.windowChars ?? 0,
    hold_back_chars: options.holdBackChars ?? 0,
    release: STREAM_RELEASE_TO_PROTO[options.release ?? 'fixed'],
  };

  const cancelled = new AbortController();
  const writer = new DetectStreamWriter({
    send: ({ text, final, ack }) => {
      const first = start;
      start = null;
      return send({ start: first, text, final, ack });
    },
    received: (chars) => state.received(chars),
    fail: (err) => {
      state.fail(err);
      call.cancel();
    },
    admission,
    stepTimeoutMs,
    signal: cancelled.signal,
  });
  let ended = false;
  return {
    async write(chunk) {
      if (ended) throw invalidRequest('write() after end()');
      await writer.write(chunk);
    },
    async end() {
      if (!ended) {
        ended = true;
        await writer.end(state.done);
        call.end();
      }
      return state.done;
    },
    cancel() {
      state.cancelled = true;
      cancelled.abort(new Error('detection stream cancelled'));
      call.cancel();
    },
    get latest() {
      return state.latest;
    },
    [Symbol.asyncIterator]: () => state.iterator(),
  };
}

/** Updates of one stream: the latest, a queue for the async iterator, the final one, and failure. */
class StreamState {
  latest: DetectStreamUpdate | undefined;
  error: unknown;
  cancelled = false;
  readonly done: Promise<DetectStreamUpdate>;
  private resolveDone!: (u: DetectStreamUpdate) => void;
  private rejectDone!: (e: unknown) => void;
  private readonly queue: DetectStreamUpdate[] = [];
  private waiting: Array<{ resolve: (r: IteratorResult<DetectStreamUpdate>) => void; reject: (e: unknown) => void }> = [];
  private closed = false;

  constructor(private readonly onUpdate?: (update: DetectStreamUpdate) => void) {
    this.done = new Promise<DetectStreamUpdate>((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    this.done.catch(() => undefined);
  }

  /** Waiters for `received` to reach a count (the acknowledgements of the writer's batches), in order. */
  private readonly receivedWaiters: Array<{ chars: number; resolve: () => void; reject: (e: unknown) => void }> = [];

  /** Resolves once an update counts `chars` characters received; rejects once the stream failed. */
  received(chars: number): Promise<void> {
    if (this.error !== undefined) return Promise.reject(this.error);
    if ((this.latest?.received ?? 0) >= chars) return Promise.resolve();
    return new Promise((resolve, reject) => this.receivedWaiters.push({ chars, resolve, reject }));
  }

  push(update: DetectStreamUpdate): void {
    this.latest = update;
    while (this.receivedWaiters.length > 0 && this.receivedWaiters[0]!.chars <= update.received) this.receivedWaiters.shift()!.resolve();
    if (this.onUpdate) this.onUpdate(update);
    else {
      const waiter = this.waiting.shift();
      if (waiter) waiter.resolve({ value: update, done: false });
      else this.queue.push(update);
    }
    if (update.done) this.resolveDone(update);
  }

  private readonly failureListeners = new Set<() => void>();

  onFailure(listener: () => void): void {
    this.failureListeners.add(listener);
  }

  off(listener: () => void): void {
    this.failureListeners.delete(listener);
  }

  fail(err: unknown): void {
    if (this.error !== undefined) return;
    this.error = err;
    this.closed = true;
    this.rejectDone(err);
    for (const w of this.waiting.splice(0)) w.reject(err);
    for (const w of this.receivedWaiters.splice(0)) w.reject(err);
    for (const listener of [...this.failureListeners]) listener();
  }

  close(): void {
    this.closed = true;
    if (!this.latest?.done && this.error === undefined) {
      this.fail(new AppError('internal_error', 'Detection stream ended without a final update', { code: 'detection_unavailable', status: 503 }));
      return;
    }
    for (const w of this.waiting.splice(0)) w.resolve({ value: undefined, done: true });
  }

  iterator(): AsyncIterator<DetectStreamUpdate> {
    return {
      next: () => {
        const value = this.queue.shift();
        if (value) return Promise.resolve({ value, done: false });
        if (this.error !== undefined) return Promise.reject(this.error);
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
      },
    };
  }
}

