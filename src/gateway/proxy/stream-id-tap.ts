import { pipeline, Transform, type Readable, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type zlib from 'node:zlib';
import { decompressor } from '../limits/output-meter';
import { SseParser } from './sse';

/**
 * Passes an upstream SSE stream through unchanged while looking for the first event that names the
 * answer's id (`idOf` of its JSON data), and hands that id to `record`. The event carrying it (and so
 * everything after it) is held until `record` settled: a client that read the id can use it at once.
 * A compressed stream (which the gateway only relays unscanned) is read from a decompressed copy; its
 * end is held instead. Events that are not JSON, or a stream that cannot be framed, are no concern here
 * (the relay deals with them): the search just stops. `record` must not reject.
 */
export function tapStreamId(body: Readable, contentEncoding: string, idOf: (parsed: unknown) => string | null, record: (id: string) => Promise<void>): Readable {
  const tap = new IdTap(contentEncoding.trim().toLowerCase(), idOf, record);
  // Errors and destruction travel both ways: the relay stopping reading ends the upstream request.
  pipeline(body, tap, () => undefined);
  return tap;
}

class IdTap extends Transform {
  private readonly parser = new SseParser();
  private readonly decoder = new StringDecoder('utf8');
  private readonly inflater: zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | null;
  /** Stopped looking: the id was found, or the stream cannot be read for one. */
  private done = false;
  private recording: Promise<void> = Promise.resolve();

  constructor(
    encoding: string,
    private readonly idOf: (parsed: unknown) => string | null,
    private readonly record: (id: string) => Promise<void>,
  ) {
    super();
    this.inflater = encoding === '' || encoding === 'identity' ? null : decompressor(encoding);
    if (encoding !== '' && encoding !== 'identity' && !this.inflater) this.done = true; // an encoding we cannot read
    this.inflater?.on('data', (chunk: Buffer) => this.look(this.decoder.write(chunk)));
    this.inflater?.on('error', () => {
      this.done = true;
    });
  }

  override _transform(chunk: Buffer | string, _enc: BufferEncoding, callback: TransformCallback): void {
    if (this.done) return callback(null, chunk);
    if (this.inflater) {
      this.inflater.write(chunk);
      return callback(null, chunk);
    }
    if (!this.look(typeof chunk === 'string' ? chunk : this.decoder.write(chunk))) return callback(null, chunk);
    void this.recording.then(() => callback(null, chunk));
  }

  override _flush(callback: TransformCallback): void {
    if (!this.inflater || this.done) return void this.recording.then(() => callback());
    this.inflater.once('end', () => void this.recording.then(() => callback()));
    this.inflater.once('error', () => void this.recording.then(() => callback()));
    this.inflater.end();
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    this.inflater?.destroy();
    callback(err);
  }

  /** Reads the text for the id; true when this text named it (its record started). */
  private look(text: string): boolean {
    if (this.done) return false;
    try {
      for (const event of this.parser.push(text)) {
        const id = idOfEvent(event.data, this.idOf);
        if (id === null) continue;
        this.done = true;
        this.recording = this.record(id);
        return true;
      }
    } catch {
      this.done = true; // an oversized or unframeable stream: the relay refuses or passes it; no id from it
    }
    return false;
  }
}

function idOfEvent(data: string | null, idOf: (parsed: unknown) => string | null): string | null {
  if (data === null || data === '[DONE]') return null;
  try {
    return idOf(JSON.parse(data));
  } catch {
    return null;
  }
}
