import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { discardBody } from '../../shared/http/upstream';
import { StringDecoder } from 'node:string_decoder';
import zlib from 'node:zlib';
import { SseParser } from '../proxy/sse';
import type { WireApi } from './input-checks';
import { jsonOutputTokens, streamCounter, type StreamCounter } from './output-counters';
import type { EncodingName } from '../../shared/tokens';

const MAX_JSON_BYTES = 16 * 1024 * 1024;
const METERED = Symbol('limits.metered');

export interface OutputMeterOptions {
  wire: WireApi;
  encoding: EncodingName;
  maxOutputTokens: number;
  /** Called exactly once with the answer's output tokens (0 for errors and non-answers). */
  onDone: (outputTokens: number) => void;
}

export function isMetered(value: unknown): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[METERED] === true;
}

/** A streaming decoder of a Content-Encoding (gzip, deflate, br); null for identity or an unknown one. */
export function decompressor(encoding: string): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | null {
  if (encoding === 'gzip' || encoding === 'x-gzip') return zlib.createGunzip();
  if (encoding === 'deflate') return zlib.createInflate();
  if (encoding === 'br') return zlib.createBrotliDecompress();
  return null;
}

function decompressSync(buf: Buffer, encoding: string): Buffer {
  if (encoding === 'gzip' || encoding === 'x-gzip') return zlib.gunzipSync(buf);
  if (encoding === 'deflate') return zlib.inflateSync(buf);
  if (encoding === 'br') return zlib.brotliDecompressSync(buf);
  return buf;
}

/**
 * Counts the output of one answer for the token and cost budgets, and cuts an SSE stream cleanly at
 * max_output_tokens (the wire's own end-of-stream events are sent instead of the event that would
 * pass the limit, and the upstream is closed). A compressed stream is counted on a decompressed copy
 * but never cut (its bytes pass through untouched).
 */
export class OutputMeter {
  private settled = false;

  constructor(private readonly o: OutputMeterOptions) {}

  finish(outputTokens: number): void {
    if (this.settled) return;
    this.settled = true;
    this.o.onDone(outputTokens);
  }

  /** A whole answer already in memory. */
  countJson(payload: Buffer | string, contentEncoding = ''): void {
    try {
      const raw = typeof payload === 'string' ? payload : decompressSync(payload, contentEncoding).toString('utf8');
      this.finish(jsonOutputTokens(this.o.wire, raw, this.o.encoding));
    } catch {
      this.finish(0);
    }
  }

  /** Wraps a response body stream: SSE is metered (and cut) event by event, JSON is counted at its end. */
  wrap(source: Readable, contentType: string, contentEncoding = ''): Readable {
    const encoding = contentEncoding.trim().toLowerCase();
    const plain = encoding === '' || encoding === 'identity';
    const counter = contentType.includes('text/event-stream') ? streamCounter(this.o.wire, this.o.encoding, this.o.maxOutputTokens) : null;
    const meter = counter
      ? new SseMeter(source, counter, plain ? null : decompressor(encoding), (n) => this.finish(n))
      : new JsonTee(source, (buf) => this.countJson(buf, encoding), () => this.finish(0));
    (meter as unknown as Record<symbol, boolean>)[METERED] = true;
    source.on('error', (err) => {
      if (!meter.stopped) meter.destroy(err);
    });
    source.pipe(meter);
    return meter;
  }
}

class SseMeter extends Transform {
  private readonly parser = new SseParser();
  private readonly decoder = new StringDecoder('utf8');
  /** Cut at max_output_tokens: the upstream was closed on purpose (its abort error is expected). */
  stopped = false;
  private finished = false;
  private inflating = false;

  constructor(
    private readonly source: Readable,
    private readonly counter: StreamCounter,
    /** Set for a compressed stream: count from a decompressed copy, pass the bytes through unchanged. */
    private readonly inflater: zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | null,
    private readonly done: (n: number) => void,
  ) {
    super();
    if (inflater) {
      inflater.on('data', (chunk: Buffer) => this.count(this.decoder.write(chunk)));
      inflater.on('error', () => undefined); // a corrupt stream is the client's problem; count what was readable
    }
  }

  override _transform(chunk: Buffer | string, _enc: BufferEncoding, callback: TransformCallback): void {
    if (this.stopped) return callback();
    if (this.inflater) {
      this.inflater.write(chunk);
      return callback(null, chunk);
    }
    try {
      for (const event of this.parser.push(typeof chunk === 'string' ? chunk : this.decoder.write(chunk))) {
        if (this.counter.onEvent(event.data) === 'cut') {
          this.stopped = true;
          this.push(this.counter.tail());
          callback();
          this.source.unpipe(this);
          discardBody(this.source);
          this.end();
          return;
        }
        this.push(event.raw);
      }
      callback();
    } catch (err) {
      callback(err as Error);
    }
  }

  override _flush(callback: TransformCallback): void {
    if (this.inflater) {
      this.inflating = true;
      this.inflater.once('end', () => this.complete());
      this.inflater.once('error', () => this.complete());
      this.inflater.end();
      return callback();
    }
    if (!this.stopped) {
      const events = [...this.parser.push(this.decoder.end()), ...this.parser.end()];
      for (const event of events) {
        this.counter.onEvent(event.data);
        this.push(event.raw);
      }
    }
    this.complete();
    callback();
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.inflating || err) this.complete(); // else the inflater's end completes the count
    discardBody(this.source);
    callback(err);
  }

  private count(text: string): void {
    for (const event of this.parser.push(text)) this.counter.onEvent(event.data);
  }

  private complete(): void {
    if (this.finished) return;
    this.finished = true;
    this.done(this.counter.outputTokens());
  }
}

/** Passes a JSON body through unchanged while keeping a bounded copy to count at the end. */
class JsonTee extends Transform {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  readonly stopped = false;

  constructor(private readonly source: Readable, private readonly onBody: (body: Buffer) => void, private readonly onAbort: () => void) {
    super();
  }

  override _transform(chunk: Buffer | string, _enc: BufferEncoding, callback: TransformCallback): void {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (this.size <= MAX_JSON_BYTES) {
      this.chunks.push(buf);
      this.size += buf.length;
    }
    callback(null, buf);
  }

  override _flush(callback: TransformCallback): void {
    if (this.size <= MAX_JSON_BYTES) this.onBody(Buffer.concat(this.chunks));
    else this.onAbort();
    callback();
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    this.onAbort();
    discardBody(this.source);
    callback(err);
  }
}
