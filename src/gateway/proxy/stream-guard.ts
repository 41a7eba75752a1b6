import type { DetectCategory, DetectionClient, DetectStream, DetectStreamUpdate } from '../../shared/detection-client';
import type { DetectionPolicy } from '../../shared/policy';
import { StreamFieldLayout } from '../../shared/explain/field-layout';
import { CategoryMatches, type ExplainedCategory } from '../../shared/explain/verdict-matches';
import { chunkTexts, isArgumentsPath } from './openai-chat.spec';
import { JsonStringUnescaper } from './json-string-unescaper';
import type { SseEvent } from './sse';

/**
 * Output enforcement for a streamed completion. Every upstream event is held until ALL the text it
 * carries has been scanned with enough following context (the detection stream's `releasedUpTo`; one
 * detection stream per choice for its content, refusal, transcript, reasoning, citations and legacy
 * `text`, and one per tool call's
 * arguments, so fragments of two tool calls interleaved in the stream are each scanned contiguous);
 * events are released strictly in order. When the detection verdict
 * turns to blocked, nothing more is released. Events without text (role, finish, usage, [DONE]) are
 * released as soon as everything before them is.
 *
 * Streamed tool-call arguments are scanned as the tool will read them: their fragments are one JSON
 * document, whose string values are decoded (`\u0034` → `4`) incrementally before they are scanned.
 */
export interface StreamGuardOptions {
  detection: DetectionClient;
  policy: DetectionPolicy;
  windowChars: number;
  release: (raw: string) => void;
}

interface FieldStream {
  stream: DetectStream;
  written: number;
  released: number;
  /** Which streamed field each stretch of this detection stream came from. */
  fields: StreamFieldLayout;
}

interface Held {
  raw: string;
  ends: Array<[stream: string, offset: number]>;
}

/** Detection streams one response may open (choices and tool calls); past it the stream fails closed. */
export const MAX_FIELD_STREAMS = 128;

export class StreamGuard {
  /** Detection streams by key: `choices[i]`, or the path of a tool call's arguments. */
  private readonly streams = new Map<string, FieldStream>();
  private readonly choices = new Set<number>();
  private readonly held: Held[] = [];
  /** One decoder per streamed arguments field (its path names the choice and the tool call). */
  private readonly unescapers = new Map<string, JsonStringUnescaper>();
  private readonly categories = new Map<string, DetectCategory>();
  private readonly matches = new CategoryMatches();
  /** Updates whose findings were collected (finish() applies the last update again). */
  private readonly collected = new WeakSet<DetectStreamUpdate>();
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

  choiceIndexes(): number[] {
    return [...this.choices].sort((a, b) => a - b);
  }

  /** Feeds one upstream event. Rejects if the detection stream failed (the caller applies the fail mode). */
  async push(event: SseEvent, parsed: unknown): Promise<void> {
    const ends: Held['ends'] = [];
    for (const { choice, text, path } of chunkTexts(parsed)) {
      this.choices.add(choice);
      const args = isArgumentsPath(path);
      const key = args ? path : `choices[${choice}]`;
      ends.push([key, await this.write(key, path, args ? this.unescaper(path).write(text) : text)]);
    }
    this.held.push({ raw: event.raw, ends });
    this.releaseReady();
  }

  /** Ends every detection stream (settling the rest of the text) and releases what may be released. */
  async finish(): Promise<void> {
    for (const [path, decoder] of this.unescapers) await this.write(path, path, decoder.end());
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
    const c = this.stream(key);
    if (text.length > 0) {
      c.fields.push(path, text);
      c.written += text.length;
      await c.stream.write(text);
    }
    return c.written;
  }

  private unescaper(path: string): JsonStringUnescaper {
    let u = this.unescapers.get(path);
    if (!u) {
      u = new JsonStringUnescaper();
      this.unescapers.set(path, u);
    }
    return u;
  }

  private stream(key: string): FieldStream {
    let c = this.streams.get(key);
    if (!c) {
      if (this.streams.size >= MAX_FIELD_STREAMS) throw new Error(`the stream has more than ${MAX_FIELD_STREAMS} choices and tool calls`);
      const stream = this.o.detection.detectStream({
        direction: 'output',
        policy: this.o.policy,
        windowChars: this.o.windowChars,
        onUpdate: (u: DetectStreamUpdate) => this.apply(key, u),
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

  private releaseReady(): void {
    while (!this.blocked && this.held.length > 0) {
      const next = this.held[0]!;
      if (!next.ends.every(([key, end]) => (this.streams.get(key)?.released ?? 0) >= end)) return;
      this.held.shift();
      this.o.release(next.raw);
    }
  }
}
