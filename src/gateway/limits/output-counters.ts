import { chunkTexts, identityOf, responseTexts, type StreamIdentity } from '../proxy/openai-chat.schema';
import { endedResponse, responsesOutputFields, StreamedOutput } from '../proxy/openai-responses.schema';
import { countTextTokens, type EncodingName } from '../../shared/tokens';
import type { WireApi } from './input-checks';

/**
 * Output-token counting per wire API, for streams (event by event, so a stream can be cut the moment
 * it passes max_output_tokens) and for whole JSON answers. The upstream's own usage figure wins when
 * it sends one (OpenAI `usage.completion_tokens`, messages `usage.output_tokens`); otherwise the text
 * is counted with the model's tokenizer.
 */
export interface StreamCounter {
  /** Feeds one SSE event's data; 'cut' when it would take the answer past the limit (the event is not sent). */
  onEvent(data: string | null): 'pass' | 'cut';
  /** The events that end a cut stream cleanly in this wire format. */
  tail(): string;
  outputTokens(): number;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function parse(data: string | null): unknown {
  if (!data || data === '[DONE]') return undefined;
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/** OpenAI chat-completions chunks; a cut ends every choice with finish_reason "length", then [DONE]. */
class ChatStreamCounter implements StreamCounter {
  private counted = 0;
  private usage: number | null = null;
  private readonly perChoice = new Map<number, number>();
  private identity: StreamIdentity | null = null;

  constructor(private readonly encoding: EncodingName, private readonly max: number) {}

  onEvent(data: string | null): 'pass' | 'cut' {
    const chunk = parse(data);
    if (!isObj(chunk)) return 'pass';
    this.identity ??= identityOf(chunk, '');
    if (isObj(chunk.usage) && typeof chunk.usage.completion_tokens === 'number') this.usage = chunk.usage.completion_tokens;
    let over = false;
    for (const { choice, text } of chunkTexts(chunk)) {
      const n = countTextTokens(text, this.encoding);
      this.counted += n;
      const total = (this.perChoice.get(choice) ?? 0) + n;
      this.perChoice.set(choice, total);
      if (total > this.max) over = true;
    }
    return over ? 'cut' : 'pass';
  }

  tail(): string {
    const id = this.identity ?? { id: `chatcmpl-cut-${Date.now()}`, created: Math.floor(Date.now() / 1000), model: '' };
    const choices = this.perChoice.size > 0 ? [...this.perChoice.keys()].sort((a, b) => a - b) : [0];
    const chunk = {
      id: id.id,
      object: 'chat.completion.chunk',
      created: id.created,
      model: id.model,
      choices: choices.map((index) => ({ index, delta: {}, logprobs: null, finish_reason: 'length' })),
    };
    return `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`;
  }

  outputTokens(): number {
    return this.usage ?? this.counted;
  }
}

/** Messages-API events; a cut closes the open block, then message_delta (stop_reason max_tokens) and message_stop. */
class MessagesStreamCounter implements StreamCounter {
  private counted = 0;
  private usage: number | null = null;
  private openBlock: number | null = null;

  constructor(private readonly encoding: EncodingName, private readonly max: number) {}

  onEvent(data: string | null): 'pass' | 'cut' {
    const event = parse(data);
    if (!isObj(event)) return 'pass';
    if (event.type === 'content_block_start' && typeof event.index === 'number') this.openBlock = event.index;
    if (event.type === 'content_block_stop') this.openBlock = null;
    if (event.type === 'message_delta' && isObj(event.usage) && typeof event.usage.output_tokens === 'number') this.usage = event.usage.output_tokens;
    if (event.type !== 'content_block_delta' || !isObj(event.delta)) return 'pass';
    const d = event.delta;
    const text = typeof d.text === 'string' ? d.text : typeof d.partial_json === 'string' ? d.partial_json : typeof d.thinking === 'string' ? d.thinking : '';
    this.counted += countTextTokens(text, this.encoding);
    return this.counted > this.max ? 'cut' : 'pass';
  }

  tail(): string {
    const events: string[] = [];
    if (this.openBlock !== null) events.push(sse('content_block_stop', { type: 'content_block_stop', index: this.openBlock }));
    events.push(
      sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: this.counted } }),
      sse('message_stop', { type: 'message_stop' }),
    );
    return events.join('');
  }

  outputTokens(): number {
    return this.usage ?? this.counted;
  }
}

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** Events of a Responses stream whose `delta` is no text the model wrote (base64 audio). */
const NOT_TEXT_DELTAS = new Set(['response.audio.delta']);

/**
 * Responses-API events (`response.*`): every text delta counts (output text, refusal, arguments,
 * reasoning, code); usage from response.completed / response.incomplete. A cut ends the stream as the
 * API ends one at max_output_tokens: a `response.incomplete` event (incomplete_details.reason
 * max_output_tokens), its response carrying the output sent so far.
 */
class ResponsesStreamCounter implements StreamCounter {
  private counted = 0;
  private usage: number | null = null;
  private snapshot: Record<string, unknown> | null = null;
  private sequence = 0;
  private readonly sent = new StreamedOutput();

  constructor(private readonly encoding: EncodingName, private readonly max: number) {}

  onEvent(data: string | null): 'pass' | 'cut' {
    const event = parse(data);
    if (!isObj(event)) return 'pass';
    if (typeof event.sequence_number === 'number') this.sequence = Math.max(this.sequence, event.sequence_number);
    if (isObj(event.response)) {
      this.snapshot = event.response;
      if (isObj(event.response.usage) && typeof event.response.usage.output_tokens === 'number') this.usage = event.response.usage.output_tokens;
    }
    if (typeof event.type === 'string' && event.type.endsWith('.delta') && !NOT_TEXT_DELTAS.has(event.type) && typeof event.delta === 'string') {
      this.counted += countTextTokens(event.delta, this.encoding);
      if (this.counted > this.max) return 'cut'; // not sent: not in the output
    }
    this.sent.add(event as Parameters<StreamedOutput['add']>[0]);
    return 'pass';
  }

  tail(): string {
    const model = typeof this.snapshot?.model === 'string' ? this.snapshot.model : '';
    const response = endedResponse(this.snapshot as Parameters<typeof endedResponse>[0], model, {
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: this.sent.output() as Parameters<typeof endedResponse>[2][string],
    });
    return sse('response.incomplete', { type: 'response.incomplete', sequence_number: this.sequence + 1, response });
  }

  outputTokens(): number {
    return this.usage ?? this.counted;
  }
}

export function streamCounter(wire: WireApi, encoding: EncodingName, maxOutputTokens: number): StreamCounter | null {
  if (wire === 'openai-chat') return new ChatStreamCounter(encoding, maxOutputTokens);
  if (wire === 'messages') return new MessagesStreamCounter(encoding, maxOutputTokens);
  if (wire === 'openai-responses') return new ResponsesStreamCounter(encoding, maxOutputTokens);
  return null;
}

function messagesTexts(response: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const block of Array.isArray(response.content) ? response.content : []) {
    if (!isObj(block)) continue;
    if (typeof block.text === 'string') out.push(block.text);
    if (typeof block.thinking === 'string') out.push(block.thinking);
    if (block.type === 'tool_use' && block.input !== undefined) out.push(JSON.stringify(block.input));
  }
  return out;
}

/** Output tokens of a whole JSON answer (0 when it is not one). */
export function jsonOutputTokens(wire: WireApi, text: string, encoding: EncodingName): number {
  const response = parse(text);
  if (!isObj(response)) return 0;
  const usage = isObj(response.usage) ? response.usage : {};
  if (wire === 'openai-chat') {
    if (typeof usage.completion_tokens === 'number') return usage.completion_tokens;
    return responseTexts(response).reduce((n, t) => n + countTextTokens(t, encoding), 0);
  }
  if (wire === 'openai-responses') {
    if (typeof usage.output_tokens === 'number') return usage.output_tokens;
    return responsesOutputFields(response).reduce((n, f) => n + countTextTokens(f.text, encoding), 0);
  }
  if (wire === 'messages') {
    if (typeof usage.output_tokens === 'number') return usage.output_tokens;
    return messagesTexts(response).reduce((n, t) => n + countTextTokens(t, encoding), 0);
  }
  return 0;
}
