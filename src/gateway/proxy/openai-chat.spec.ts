import { AppError } from '../../shared/errors';

/**
 * The OpenAI chat-completions wire API: which fields carry text the model reads (request) or writes
 * (response and stream deltas). Everything else passes through untouched.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
const isObj = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown, out: string[]) => {
  if (typeof v === 'string' && v.length > 0) out.push(v);
};

/** Text of a content value: a string, or an array of parts (text, refusal; other part kinds carry no text). */
function contentTexts(content: Json | undefined, out: string[]): void {
  if (typeof content === 'string') return str(content, out);
  if (!Array.isArray(content)) return;
  for (const part of content) {
    if (typeof part === 'string') str(part, out);
    else if (isObj(part)) {
      str(part.text, out);
      str(part.refusal, out);
      if (isObj(part.file)) str(part.file.filename, out);
    }
  }
}

/**
 * Tool-call arguments are a JSON document in a string: scanned as sent and, when they use JSON escapes
 * (`\u0041`, `\n`, ...), also decoded, because the tool (and the model) read the decoded text. Stream
 * fragments are partial documents and are scanned as sent (`decode` false).
 */
function argumentTexts(args: Json | undefined, out: string[], decode: boolean): void {
  if (typeof args !== 'string' || args.length === 0) return;
  out.push(args);
  if (!decode || !args.includes('\\')) return;
  try {
    const decoded = JSON.stringify(JSON.parse(args));
    if (decoded !== args) out.push(decoded);
  } catch {
    // Not JSON: the text as sent is all there is.
  }
}

function toolCallTexts(calls: Json | undefined, out: string[], decode = true): void {
  if (!Array.isArray(calls)) return;
  for (const c of calls) {
    if (!isObj(c) || !isObj(c.function)) continue;
    str(c.function.name, out);
    argumentTexts(c.function.arguments, out, decode);
  }
}

/** A function definition (tools[].function or legacy functions[]): the model reads its name, description and parameter schema. */
function functionDefinitionTexts(f: Json | undefined, out: string[]): void {
  if (!isObj(f)) return;
  str(f.name, out);
  str(f.description, out);
  if (f.parameters !== undefined) out.push(JSON.stringify(f.parameters));
}

export interface ChatRequestSummary {
  model: string | null;
  stream: boolean;
  /** Every text the upstream model would read: all messages of the conversation, tool calls, tool definitions. */
  texts: string[];
}

/** Validates the minimal shape of a chat-completions request and collects its texts. */
export function readChatRequest(body: unknown): ChatRequestSummary {
  if (!isObj(body)) throw new AppError('invalid_request', 'Request body must be a JSON object', { code: 'invalid_request' });
  if (typeof body.model !== 'string' || body.model.length === 0) {
    throw new AppError('invalid_request', 'model: required, a non-empty string', { code: 'invalid_request' });
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw new AppError('invalid_request', 'messages: required, a non-empty array of {role, content}', { code: 'invalid_request' });
  }
  const texts: string[] = [];
  body.messages.forEach((m, i) => {
    if (!isObj(m) || typeof m.role !== 'string') {
      throw new AppError('invalid_request', `messages.${i}: must be an object with a string role`, { code: 'invalid_request' });
    }
    str(m.name, texts);
    contentTexts(m.content, texts);
    str(m.refusal, texts);
    toolCallTexts(m.tool_calls, texts);
    if (isObj(m.function_call)) argumentTexts(m.function_call.arguments, texts, true);
  });
  for (const t of Array.isArray(body.tools) ? body.tools : []) if (isObj(t)) functionDefinitionTexts(t.function, texts);
  for (const f of Array.isArray(body.functions) ? body.functions : []) functionDefinitionTexts(f, texts);
  if (isObj(body.prediction)) contentTexts(body.prediction.content, texts);
  if (isObj(body.response_format) && isObj(body.response_format.json_schema)) {
    str(body.response_format.json_schema.name, texts);
    str(body.response_format.json_schema.description, texts);
    if (body.response_format.json_schema.schema !== undefined) texts.push(JSON.stringify(body.response_format.json_schema.schema));
  }
  return { model: body.model, stream: body.stream === true, texts };
}

/** Texts of a non-streaming response: every choice's content, refusal, tool calls and audio transcript. */
export function responseTexts(response: unknown): string[] {
  const texts: string[] = [];
  if (!isObj(response) || !Array.isArray(response.choices)) return texts;
  for (const c of response.choices) {
    if (!isObj(c) || !isObj(c.message)) continue;
    const m = c.message;
    contentTexts(m.content, texts);
    str(m.refusal, texts);
    toolCallTexts(m.tool_calls, texts);
    if (isObj(m.function_call)) argumentTexts(m.function_call.arguments, texts, true);
    if (isObj(m.audio)) str(m.audio.transcript, texts);
  }
  return texts;
}

/** Text pieces of one stream chunk, per choice index. */
export function chunkTexts(chunk: unknown): Array<{ choice: number; text: string }> {
  const out: Array<{ choice: number; text: string }> = [];
  if (!isObj(chunk) || !Array.isArray(chunk.choices)) return out;
  for (const c of chunk.choices) {
    if (!isObj(c) || !isObj(c.delta)) continue;
    const choice = typeof c.index === 'number' ? c.index : 0;
    const pieces: string[] = [];
    contentTexts(c.delta.content, pieces);
    str(c.delta.refusal, pieces);
    toolCallTexts(c.delta.tool_calls, pieces, false);
    if (isObj(c.delta.function_call)) str(c.delta.function_call.arguments, pieces);
    if (isObj(c.delta.audio)) str(c.delta.audio.transcript, pieces);
    for (const text of pieces) out.push({ choice, text });
  }
  return out;
}

/** Identity of a stream (copied from its first chunk) for the final content_filter chunk. */
export interface StreamIdentity {
  id: string;
  created: number;
  model: string;
}

export function identityOf(chunk: unknown, fallbackModel: string): StreamIdentity | null {
  if (!isObj(chunk)) return null;
  return {
    id: typeof chunk.id === 'string' ? chunk.id : `chatcmpl-blocked-${Date.now()}`,
    created: typeof chunk.created === 'number' ? chunk.created : Math.floor(Date.now() / 1000),
    model: typeof chunk.model === 'string' ? chunk.model : fallbackModel,
  };
}

/**
 * The events that end a stream blocked mid-way: a chunk with finish_reason "content_filter" for every
 * choice seen (what the OpenAI SDK and clients understand as a filtered completion), then [DONE].
 */
export function blockedStreamTail(identity: StreamIdentity, choices: number[], categories: string[]): string {
  const chunk = {
    id: identity.id,
    object: 'chat.completion.chunk',
    created: identity.created,
    model: identity.model,
    choices: (choices.length > 0 ? choices : [0]).map((index) => ({ index, delta: {}, logprobs: null, finish_reason: 'content_filter' })),
    security: { blocked: true, categories },
  };
  return `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`;
}
