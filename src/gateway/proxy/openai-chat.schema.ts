import { AppError } from '../../shared/errors';
import { indexPath, type TextField } from '../../shared/explain/field-layout';
import { partAttachments } from './openai-attachments';
import type { StreamTexts } from './stream-guard';

/**
 * The OpenAI chat-completions wire API: which fields carry text the model reads (request) or writes
 * (response and stream deltas). Everything else passes through untouched.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
const isObj = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** Each text is collected with the JSON path of its field (field-layout.ts), to explain verdicts. */
type Out = TextField[];
const str = (v: unknown, path: string, out: Out) => {
  if (typeof v === 'string' && v.length > 0) out.push({ path, text: v });
};
/** A JSON value the model reads as a whole (a parameter schema): its JSON text, offsets into that text. */
const json = (v: Json | undefined, path: string, out: Out) => {
  if (v !== undefined) out.push({ path, text: JSON.stringify(v) });
};

/** Every string inside a JSON value (a custom tool's format: grammar definition, syntax, ...), each with its path. */
function allStrings(v: Json | undefined, path: string, out: Out): void {
  if (typeof v === 'string') str(v, path, out);
  else if (Array.isArray(v)) v.forEach((x, i) => allStrings(x, indexPath(path, i), out));
  else if (isObj(v)) for (const [k, x] of Object.entries(v)) allStrings(x, `${path}.${k}`, out);
}

/**
 * Text of a content value: a string, or an array of parts (text, refusal). In a request (`unscanned`
 * given) the other parts are read too: a file part's filename and inline data (decoded and scanned when
 * it is text, file-content.ts); what no detector can read (image_url, input_audio, file_id, a non-text
 * file, a part type this file does not know) is reported in `unscanned` by its JSON path.
 */
function contentTexts(content: Json | undefined, path: string, out: Out, unscanned?: string[]): void {
  if (typeof content === 'string') return str(content, path, out);
  if (!Array.isArray(content)) return;
  content.forEach((part, i) => {
    const at = indexPath(path, i);
    if (typeof part === 'string') str(part, at, out);
    else if (isObj(part)) {
      str(part.text, `${at}.text`, out);
      str(part.refusal, `${at}.refusal`, out);
      if (unscanned) partAttachments(part, at, out, unscanned);
      else if (isObj(part.file)) str(part.file.filename, `${at}.file.filename`, out);
    }
  });
}

/**
 * Tool-call arguments are a JSON document in a string: scanned as sent and, when they use JSON escapes
 * (`\u0041`, `\n`, ...), also decoded, because the tool (and the model) read the decoded text (its path
 * ends in DECODED_SUFFIX; offsets index JSON.stringify(JSON.parse(arguments))). Stream fragments are
 * partial documents, returned as sent (`decode` false): the stream guard decodes their string values
 * incrementally (json-string-unescaper.ts) and scans only the decoded text.
 */
export function argumentTexts(args: Json | undefined, path: string, out: Out, decode: boolean): void {
  if (typeof args !== 'string' || args.length === 0) return;
  out.push({ path, text: args });
  if (!decode || !args.includes('\\')) return;
  try {
    const decoded = JSON.stringify(JSON.parse(args));
    if (decoded !== args) out.push({ path: `${path}${DECODED_SUFFIX}`, text: decoded });
  } catch {
    // Not JSON: the text as sent is all there is.
  }
}

export const DECODED_SUFFIX = '#decoded';

/** A streamed tool-call (or legacy function-call) arguments field: its fragments form one JSON document. */
export const isArgumentsPath = (path: string): boolean => path.endsWith('.function.arguments') || path.endsWith('.function_call.arguments');

/**
 * A streamed field that is scanned on a detection stream of its own (one per tool call, so the fragments
 * of interleaved tool calls are each read contiguous): `json` for function arguments (their string
 * values are decoded before scanning), `text` for a custom tool call's free-form input; null otherwise.
 */
export function toolCallStreamKind(path: string): 'json' | 'text' | null {
  if (isArgumentsPath(path)) return 'json';
  return path.endsWith('.custom.input') ? 'text' : null;
}

/** Function tool calls (name, JSON arguments) and custom tool calls (name, free-form text input). */
function toolCallTexts(calls: Json | undefined, path: string, out: Out, decode = true): void {
  if (!Array.isArray(calls)) return;
  calls.forEach((c, i) => {
    if (!isObj(c)) return;
    // Stream deltas name their tool call by `index`; whole messages by position.
    const at = indexPath(path, !decode && typeof c.index === 'number' ? c.index : i);
    if (isObj(c.function)) {
      str(c.function.name, `${at}.function.name`, out);
      argumentTexts(c.function.arguments, `${at}.function.arguments`, out, decode);
    }
    if (isObj(c.custom)) {
      str(c.custom.name, `${at}.custom.name`, out);
      str(c.custom.input, `${at}.custom.input`, out);
    }
  });
}

/** A custom tool (tools[].custom): its name, description and input format (every string of it: a grammar's definition and syntax). */
function customToolTexts(t: Json | undefined, path: string, out: Out): void {
  if (!isObj(t)) return;
  str(t.name, `${path}.name`, out);
  str(t.description, `${path}.description`, out);
  allStrings(t.format, `${path}.format`, out);
}

/** A function definition (tools[].function or legacy functions[]): the model reads its name, description and parameter schema. */
function functionDefinitionTexts(f: Json | undefined, path: string, out: Out): void {
  if (!isObj(f)) return;
  str(f.name, `${path}.name`, out);
  str(f.description, `${path}.description`, out);
  json(f.parameters, `${path}.parameters`, out);
}

export interface ChatRequestSummary {
  model: string | null;
  stream: boolean;
  /** Every text the upstream model would read: all messages of the conversation, tool calls, tool definitions. */
  texts: string[];
  /** The same texts with the JSON path of their field. */
  fields: TextField[];
  /** JSON paths of content no detector can read (images, audio, file references, non-text files). */
  unscanned: string[];
}

function invalid(message: string): AppError {
  return new AppError('invalid_request', message, { code: 'invalid_request' });
}

/** Texts of one request message, under `path`. */
function messageTexts(m: Record<string, Json>, path: string, out: Out, unscanned: string[]): void {
  str(m.name, `${path}.name`, out);
  contentTexts(m.content, `${path}.content`, out, unscanned);
  str(m.refusal, `${path}.refusal`, out);
  toolCallTexts(m.tool_calls, `${path}.tool_calls`, out);
  if (isObj(m.function_call)) argumentTexts(m.function_call.arguments, `${path}.function_call.arguments`, out, true);
}

/** Validates the minimal shape of a chat-completions request and collects its texts. */
export function readChatRequest(body: unknown): ChatRequestSummary {
  if (!isObj(body)) throw invalid('Request body must be a JSON object');
  if (typeof body.model !== 'string' || body.model.length === 0) throw invalid('model: required, a non-empty string');
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw invalid('messages: required, a non-empty array of {role, content}');
  }
  const fields: Out = [];
  const unscanned: string[] = [];
  body.messages.forEach((m, i) => {
    if (!isObj(m) || typeof m.role !== 'string') throw invalid(`messages.${i}: must be an object with a string role`);
    messageTexts(m, `messages[${i}]`, fields, unscanned);
  });
  // tool_choice names a tool declared in tools[] (scanned there; the upstream refuses any other name): not scanned.
  if (Array.isArray(body.tools)) {
    body.tools.forEach((t, i) => {
      if (!isObj(t)) return;
      functionDefinitionTexts(t.function, `tools[${i}].function`, fields);
      customToolTexts(t.custom, `tools[${i}].custom`, fields);
    });
  }
  if (Array.isArray(body.functions)) body.functions.forEach((f, i) => functionDefinitionTexts(f, `functions[${i}]`, fields));
  if (isObj(body.prediction)) contentTexts(body.prediction.content, 'prediction.content', fields);
  if (isObj(body.response_format) && isObj(body.response_format.json_schema)) {
    const schema = body.response_format.json_schema;
    str(schema.name, 'response_format.json_schema.name', fields);
    str(schema.description, 'response_format.json_schema.description', fields);
    json(schema.schema, 'response_format.json_schema.schema', fields);
  }
  return { model: body.model, stream: body.stream === true, texts: fields.map((f) => f.text), fields, unscanned };
}

/**
 * What a model writes beside its answer, in a response message or a stream delta: reasoning
 * (`reasoning_content`, `reasoning`, `reasoning_details[].text` / `.summary`, the summary a string or a
 * list of text parts) and citations (`annotations[].url_citation.title` / `.url` / `.content`). Stream
 * deltas name a reasoning detail by its `index` when they carry one (`stream`), as tool calls do;
 * otherwise items are named by position.
 */
function sideTexts(m: Record<string, Json>, path: string, out: Out, stream: boolean): void {
  str(m.reasoning_content, `${path}.reasoning_content`, out);
  str(m.reasoning, `${path}.reasoning`, out);
  if (Array.isArray(m.reasoning_details)) {
    m.reasoning_details.forEach((d, i) => {
      if (!isObj(d)) return;
      const at = indexPath(`${path}.reasoning_details`, stream && typeof d.index === 'number' ? d.index : i);
      str(d.text, `${at}.text`, out);
      contentTexts(d.summary, `${at}.summary`, out);
    });
  }
  if (Array.isArray(m.annotations)) {
    m.annotations.forEach((a, i) => {
      if (!isObj(a) || !isObj(a.url_citation)) return;
      const at = `${indexPath(`${path}.annotations`, i)}.url_citation`;
      str(a.url_citation.title, `${at}.title`, out);
      str(a.url_citation.url, `${at}.url`, out);
      str(a.url_citation.content, `${at}.content`, out);
    });
  }
}

/**
 * Fields of a non-streaming response: every choice's content, refusal, tool calls, audio transcript,
 * reasoning and citations (sideTexts), and the `text` of a legacy completions-shaped choice.
 */
export function responseFields(response: unknown): TextField[] {
  const out: Out = [];
  if (!isObj(response) || !Array.isArray(response.choices)) return out;
  response.choices.forEach((c, i) => {
    if (!isObj(c)) return;
    str(c.text, `choices[${i}].text`, out);
    if (!isObj(c.message)) return;
    const path = `choices[${i}].message`;
    const m = c.message;
    contentTexts(m.content, `${path}.content`, out);
    str(m.refusal, `${path}.refusal`, out);
    toolCallTexts(m.tool_calls, `${path}.tool_calls`, out);
    if (isObj(m.function_call)) argumentTexts(m.function_call.arguments, `${path}.function_call.arguments`, out, true);
    if (isObj(m.audio)) str(m.audio.transcript, `${path}.audio.transcript`, out);
    sideTexts(m, path, out, false);
  });
  return out;
}

/** Texts of a non-streaming response (responseFields without the paths). */
export function responseTexts(response: unknown): string[] {
  return responseFields(response).map((f) => f.text);
}

/** Texts of one stream delta, under `path` (`choices[0].delta`). */
function deltaTexts(d: Record<string, Json>, path: string, pieces: Out): void {
  // A streamed content field is one string however the parts are split: its pieces share one path.
  if (typeof d.content === 'string') str(d.content, `${path}.content`, pieces);
  else contentTexts(d.content, `${path}.content`, pieces);
  str(d.refusal, `${path}.refusal`, pieces);
  toolCallTexts(d.tool_calls, `${path}.tool_calls`, pieces, false);
  if (isObj(d.function_call)) str(d.function_call.arguments, `${path}.function_call.arguments`, pieces);
  if (isObj(d.audio)) str(d.audio.transcript, `${path}.audio.transcript`, pieces);
  sideTexts(d, path, pieces, true);
}

/**
 * Text pieces of one stream chunk, per choice index, with the path of the streamed field they continue
 * (`choices[0].delta.content`, `choices[0].delta.tool_calls[1].function.arguments`).
 */
export function chunkTexts(chunk: unknown): Array<{ choice: number; text: string; path: string }> {
  const out: Array<{ choice: number; text: string; path: string }> = [];
  if (!isObj(chunk) || !Array.isArray(chunk.choices)) return out;
  for (const c of chunk.choices) {
    if (!isObj(c)) continue;
    const choice = typeof c.index === 'number' ? c.index : 0;
    const pieces: Out = [];
    // A legacy completions-shaped chunk streams its text in `choices[i].text`, without a delta.
    str(c.text, `choices[${choice}].text`, pieces);
    if (isObj(c.delta)) deltaTexts(c.delta, `choices[${choice}].delta`, pieces);
    for (const p of pieces) out.push({ choice, text: p.text, path: p.path });
  }
  return out;
}

/**
 * The stream guard's view of a chat-completions stream: one detection stream per choice and kind of
 * field (content, refusal, transcript, reasoning, citations, legacy `text`) and one per tool call's arguments (a
 * JSON document, decoded), so fragments of two tool calls interleaved in the stream are each scanned
 * contiguous. `choices` collects the choice indexes seen (for the blocked tail).
 */
export function chatStreamTexts(choices: Set<number> = new Set()): StreamTexts {
  return (chunk) =>
    chunkTexts(chunk).map(({ choice, text, path }) => {
      choices.add(choice);
      // Each tool call's arguments (JSON) or custom input (free text) on a detection stream of its own.
      const kind = toolCallStreamKind(path);
      if (kind) return kind === 'json' ? { key: path, path, text, json: true } : { key: path, path, text };
      return { key: fieldKindKey(path), path, text };
    });
}

/**
 * A choice's streamed field kind (`choices[0].delta.content`, `choices[0].delta.reasoning_content`,
 * `choices[0].delta.reasoning_details[].text`): pieces of one kind form one contiguous text, so content
 * interleaved with reasoning deltas ("ign", <reasoning>, "ore all ...") is scanned as the client reads
 * each field, never with the other field spliced into it. Items of one kind (indices) stay one text.
 */
function fieldKindKey(path: string): string {
  const afterChoice = path.indexOf('].') + 1; // the choice keeps its index
  return path.slice(0, afterChoice) + path.slice(afterChoice).replace(/\[\d+\]/g, '[]');
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
