import type { DetectCategory, DetectionClient, DetectStream, DetectStreamUpdate } from '../../shared/detection-client';
import type { DetectionPolicy } from '../../shared/policy';
import { StreamFieldLayout } from '../../shared/explain/field-layout';
import { CategoryMatches, type ExplainedCategory } from '../../shared/explain/verdict-matches';
import { chunkTexts, isArgumentsPath } from './openai-chat.spec';
import { JsonStringUnescaper } from './json-string-unescaper';
import type { SseEvent } from './sse';

/**
 * Output enforcement for a streamed completion. Every upstream event is held until ALL the text it
 * carries has been scanned with enough following context (the detection stream's `releasedUpTo`, one
 * detection stream per choice); events are released strictly in order. When the detection verdict
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

interface ChoiceStream {
  stream: DetectStream;
  written: number;
  released: number;
  /** Which streamed field each stretch of this choice's detection stream came from. */
  fields: StreamFieldLayout;
}

interface Held {
  raw: string;
  ends: Array<[choice: number, offset: number]>;
}

export class StreamGuard {
  private readonly choices = new Map<number, ChoiceStream>();
  private readonly held: Held[] = [];
  /** One decoder per streamed arguments field (its path names the choice and the tool call). */
  private readonly unescapers = new Map<string, { choice: number; decoder: JsonStringUnescaper }>();
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
    return [...this.choices.keys()].sort((a, b) => a - b);
  }

  /** Feeds one upstream event. Rejects if the detection stream failed (the caller applies the fail mode). */
  async push(event: SseEvent, parsed: unknown): Promise<void> {
    const ends: Held['ends'] = [];
    for (const { choice, text, path } of chunkTexts(parsed)) {
      const scanned = isArgumentsPath(path) ? this.unescaper(choice, path).write(text) : text;
      ends.push([choice, await this.write(choice, path, scanned)]);
    }
    this.held.push({ raw: event.raw, ends });
    this.releaseReady();
  }

  /** Ends every detection stream (settling the rest of the text) and releases what may be released. */
  async finish(): Promise<void> {
    for (const [path, u] of this.unescapers) await this.write(u.choice, path, u.decoder.end());
    for (const [choice, c] of this.choices) {
      const last = await c.stream.end();
      this.apply(choice, last);
    }
    this.releaseReady();
  }

  cancel(): void {
    for (const c of this.choices.values()) c.stream.cancel();
  }

  /** Appends text to a choice's detection stream; returns the stream's length after it. */
  private async write(choice: number, path: string, text: string): Promise<number> {
    const c = this.choice(choice);
    if (text.length > 0) {
      c.fields.push(path, text);
      c.written += text.length;
      await c.stream.write(text);
    }
    return c.written;
  }

  private unescaper(choice: number, path: string): JsonStringUnescaper {
    let u = this.unescapers.get(path);
    if (!u) {
      u = { choice, decoder: new JsonStringUnescaper() };
      this.unescapers.set(path, u);
    }
    return u.decoder;
  }

  private choice(index: number): ChoiceStream {
    let c = this.choices.get(index);
    if (!c) {
      const stream = this.o.detection.detectStream({
        direction: 'output',
        policy: this.o.policy,
        windowChars: this.o.windowChars,
        onUpdate: (u: DetectStreamUpdate) => this.apply(index, u),
      });
      c = { stream, written: 0, released: 0, fields: new StreamFieldLayout() };
      this.choices.set(index, c);
    }
    return c;
  }

  private apply(choice: number, u: DetectStreamUpdate): void {
    const c = this.choices.get(choice);
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
      if (!next.ends.every(([choice, end]) => (this.choices.get(choice)?.released ?? 0) >= end)) return;
      this.held.shift();
      this.o.release(next.raw);
    }
  }
}
