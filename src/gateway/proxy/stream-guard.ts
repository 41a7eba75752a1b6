import type { DetectCategory, DetectionClient, DetectStream, DetectStreamUpdate } from '../../shared/detection-client';
import { STREAM_HOLD_BACK_CHARS } from '../../shared/detection-stream';
import type { DetectionPolicy } from '../../shared/policy';
import { StreamFieldLayout } from '../../shared/explain/field-layout';
import { CategoryMatches, type ExplainedCategory } from '../../shared/explain/verdict-matches';
import { JsonStringUnescaper } from './json-string-unescaper';
import type { SseEvent } from './sse';

/**
 * Output enforcement for a streamed response, whatever its wire API. Every upstream event is held
 * until ALL the text it carries has been scanned (the detection stream's `releasedUpTo`: adaptive
 * release, everything scanned except the tail a detector may still need whole — the token still
 * arriving, a number in groups, a trailing run of capitalized words or labels, an unsettled match; see
 * detection/stream-release.ts); events are released strictly in order. When the detection verdict turns
 * to blocked, nothing more is released. Events without text are released as soon as everything
 * before them is.
 *
 * Which fields of an event carry text is the wire API's business (`texts`): each piece names the
 * detection stream it continues (`key`: pieces of one key are scanned as one contiguous text) and
 * the path of its field; where one detection stream moves from one field to another, FIELD_SEPARATOR
 * goes between them (as between the fields of a request), so text at the end of one never runs into
 * the next. A piece marked `json` is a fragment of a JSON document streamed in pieces
 * (tool-call arguments, a tool_use input): its string values are decoded (`\u0034` → `4`)
 * incrementally, one decoder per path, and only the decoded text is scanned, as the tool reads it.
 */
export interface StreamText {
  /** The detection stream this piece continues. */
  key: string;
  /** The streamed field (`choices[0].delta.content`, `content[1].input`). */
  path: string;
  text: string;
  /** A fragment of a JSON document: scanned with its string values decoded. */
  json?: boolean;
}

/** Text pieces of one parsed stream event (its JSON data), in the order they appear. */
export type StreamTexts = (parsed: unknown) => StreamText[];

export interface StreamGuardOptions {
  detection: DetectionClient;
  policy: DetectionPolicy;
  windowChars: number;
  /** H: how long numbers and found matches are held (default STREAM_HOLD_BACK_CHARS; with `fixed`, 0: the whole window). */
  holdBackChars?: number;
  /** Default `adaptive` (see detection/stream-release.ts); `fixed`: text is released once holdBackChars follow it. */
  releaseMode?: 'fixed' | 'adaptive';
  texts: StreamTexts;
  release: (raw: string) => void;
  /** Called once after each run of released events: sends them now (see guarded-stream.ts). */
  flush?: () => void;
  /** The HTTP request's id, passed to the detection service with each stream. */
  requestId?: string;
}

interface FieldStream {
  stream: DetectStream;
  written: number;
  released: number;
  /** Which streamed field each stretch of this detection stream came from. */
  fields: StreamFieldLayout;
}

/**
 * An event waiting for the scan of its text: released once each detection stream it wrote to has released
 * up to where its piece ended. Most events carry one piece (or none), kept inline; the rest in `more`
 * (thousands of events are held at 1,024 concurrent streams, so no array per event for the usual case).
 */
interface Held {
  raw: string;
  /** The detection stream of the event's first piece (undefined: the event carries no text). */
  key: string | undefined;
  end: number;
  more: Array<[stream: string, offset: number]> | undefined;
}

/** Detection streams one response may open (choices and tool calls); past it the stream fails closed. */
export const MAX_FIELD_STREAMS = 128;
/** Distinct keys and paths one guard keeps a single copy of (a stream names a few: its choices' fields, its tool calls). */
const MAX_INTERNED = 2 * MAX_FIELD_STREAMS;

export class StreamGuard {
  /** Detection streams by key (`choices[i]`, the path of a tool call's arguments, `message`). */
  private readonly streams = new Map<string, FieldStream>();
  private readonly held: Held[] = [];
  /** One decoder per streamed JSON field (by path), with the detection stream it writes to. */
  private readonly unescapers = new Map<string, { key: string; decoder: JsonStringUnescaper }>();
  private readonly categories = new Map<string, DetectCategory>();
  private readonly matches = new CategoryMatches();
  /** Updates whose findings were collected (finish() applies the last update again). */
  private readonly collected = new WeakSet<DetectStreamUpdate>();
  private readonly interned = new Map<string, string>();
  blocked = false;
  blockReason = '';

  constructor(private readonly o: StreamGuardOptions) {}

  /** Categories fired so far (for the audit record and the final chunk). */
  fired(): DetectCategory[] {
    return [...this.categories.values()];
  }

  /** Categories fired so far with their matches (paths of the streamed fields, offsets into their streamed text). */
  explained(): ExplainedCategory[] {
    return this.matches.explain(this.fired());
  }

  /** Feeds one upstream event. Rejects if the detection stream failed (the caller applies the fail mode). */
  async push(event: SseEvent, parsed: unknown): Promise<void> {
    const held: Held = { raw: event.raw, key: undefined, end: 0, more: undefined };
    for (const t of this.o.texts(parsed)) {
      // Every event of a stream names the same few keys and paths, each built anew from the chunk: one
      // copy of each is kept, not one per held event (about 1 MB at 1,024 concurrent streams).
      const key = this.intern(t.key);
      const path = this.intern(t.path);
      const end = await this.write(key, path, t.json ? this.unescaper(key, path).write(t.text) : t.text);
      if (held.key === undefined) {
        held.key = key;
        held.end = end;
      } else (held.more ??= []).push([key, end]);
    }
    this.held.push(held);
    this.releaseReady();
  }

  /** Ends every detection stream (settling the rest of the text) and releases what may be released. */
  async finish(): Promise<void> {
    for (const [path, { key, decoder }] of this.unescapers) await this.write(key, path, decoder.end());
    for (const [key, c] of this.streams) {
      const last = await c.stream.end();
      this.apply(key, last);
    }
    this.releaseReady();
  }

  cancel(): void {
    for (const c of this.streams.values()) c.stream.cancel();
  }

  /** Appends text of the field `path` to a detection stream; returns the stream's length after it. */
  private async write(key: string, path: string, text: string): Promise<number> {
    // A detection stream is opened with its first text, not with an event that carries none (a role
    // chunk, an empty delta): opening one is a gRPC call set up on this thread, which would delay the
    // release of the stream's first bytes.
    if (text.length === 0) return this.streams.get(key)?.written ?? 0;
    const c = this.stream(key);
    const separator = c.fields.separatorBefore(path);
    c.fields.skip(separator.length);
    c.fields.push(path, text);
    c.written += separator.length + text.length;
    await c.stream.write(separator + text);
    return c.written;
  }

  /** The first copy of an equal key or path string (at most MAX_INTERNED of them; past that, the string itself). */
  private intern(s: string): string {
    const seen = this.interned.get(s);
    if (seen !== undefined) return seen;
    if (this.interned.size < MAX_INTERNED) this.interned.set(s, s);
    return s;
  }

  private unescaper(key: string, path: string): JsonStringUnescaper {
    let u = this.unescapers.get(path);
    if (!u) {
      u = { key, decoder: new JsonStringUnescaper() };
      this.unescapers.set(path, u);
    }
    return u.decoder;
  }

  private stream(key: string): FieldStream {
    let c = this.streams.get(key);
    if (!c) {
      if (this.streams.size >= MAX_FIELD_STREAMS) throw new Error(`the stream has more than ${MAX_FIELD_STREAMS} separately scanned fields (choices, tool calls)`);
      const stream = this.o.detection.detectStream({
        direction: 'output',
        policy: this.o.policy,
        windowChars: this.o.windowChars,
        holdBackChars: this.o.holdBackChars ?? STREAM_HOLD_BACK_CHARS,
        release: this.o.releaseMode ?? 'adaptive',
        onUpdate: (u: DetectStreamUpdate) => this.apply(key, u),
        requestId: this.o.requestId,
      });
      c = { stream, written: 0, released: 0, fields: new StreamFieldLayout() };
      this.streams.set(key, c);
    }
    return c;
  }

  private apply(key: string, u: DetectStreamUpdate): void {
    const c = this.streams.get(key);
    if (c) {
      c.released = Math.max(c.released, u.releasedUpTo);
      // Settled findings carry stream offsets; only fired ones are located (binary search per finding).
      if (!this.collected.has(u) && u.findings.some((f) => f.fired)) {
        this.matches.addFindings(u.findings, (start, end) => c.fields.locate(start, end));
      }
      this.collected.add(u);
    }
    for (const cat of u.categories) {
      const prev = this.categories.get(cat.type);
      if (!prev || cat.confidence > prev.confidence) this.categories.set(cat.type, cat);
    }
    if (u.blocked && !this.blocked) {
      this.blocked = true;
      this.blockReason = u.blockReason;
    }
    this.releaseReady();
  }

  /** Whether the detection stream `key` has released its text up to `end`. */
  private scanned(key: string, end: number): boolean {
    return (this.streams.get(key)?.released ?? 0) >= end;
  }

  private releaseReady(): void {
    let released = false;
    while (!this.blocked && this.held.length > 0) {
      const next = this.held[0]!;
      if (next.key !== undefined && !this.scanned(next.key, next.end)) break;
      if (next.more && !next.more.every(([key, end]) => this.scanned(key, end))) break;
      this.held.shift();
      this.o.release(next.raw);
      released = true;
    }
    if (released) this.o.flush?.();
  }
}
