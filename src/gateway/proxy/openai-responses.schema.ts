import { AppError } from '../../shared/errors';
import { childPath, indexPath, type TextField } from '../../shared/explain/field-layout';
import { fileTexts } from './openai-attachments';
import { argumentTexts } from './openai-chat.schema';
import type { StreamText, StreamTexts } from './stream-guard';

/**
 * The OpenAI Responses wire API (POST /v1/responses): which fields carry text the model reads (the
 * request: `input` items, `instructions`, tool definitions, prompt variables, the output schema) or
 * writes (the response's `output` items, whole or as `response.*` stream events). Everything else
 * passes through untouched. Items are read the same way on both sides (itemTexts): known item and
 * part types field by field, any other item every string it holds but identifiers, states and
 * opaque provider data (OPAQUE).
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Out = TextField[];
const isObj = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown, path: string, out: Out) => {
  if (typeof v === 'string' && v.length > 0) out.push({ path, text: v });
};

/** Keys that carry no text a model reads or writes: identifiers, states, indexes, opaque provider data. */
const OPAQUE = new Set([
  'type', 'id', 'item_id', 'call_id', 'status', 'role', 'object', 'encrypted_content', 'sequence_number', 'output_index',
  'content_index', 'summary_index', 'annotation_index', 'container_id', 'vector_store_id', 'obfuscation', 'detail',
]);
/** Keys that reference content no detector reads (an image, a stored file): listed as unscanned in a request. */
const REFERENCES = new Set(['image_url', 'file_id', 'file_url']);

interface ReadOptions {
  /** Request side: content no detector can read is listed here by its JSON path. */
  unscanned?: string[];
  /** Arguments (a JSON document in a string) also scanned decoded (false for the stream's restatement check: as sent only). */
  decode: boolean;
}

/**
 * Every string of a value of a type this file does not know, with its path; OPAQUE keys skipped,
 * REFERENCES listed as unscanned (request side), `arguments` read as a JSON document.
 */
function anyTexts(v: Json | undefined, path: string, out: Out, o: ReadOptions): void {
  if (typeof v === 'string') return str(v, path, out);
  if (Array.isArray(v)) return v.forEach((x, i) => anyTexts(x, indexPath(path, i), out, o));
  if (!isObj(v)) return;
  for (const [k, x] of Object.entries(v)) {
    const at = childPath(path, k);
    if (OPAQUE.has(k) || x === null) continue;
    // A file id beside the text it stands for (a file_search result) only names that text's source.
    if (k === 'file_id' && typeof v.text === 'string') continue;
    if (REFERENCES.has(k)) o.unscanned?.push(at);
    else if (k === 'arguments' && typeof x === 'string') argumentTexts(x, at, out, o.decode);
    else anyTexts(x, at, out, o);
  }
}

/** One content part (input_text, output_text, refusal, input_image, input_file, summary_text, reasoning_text, ...). */
function partTexts(part: Json, at: string, out: Out, o: ReadOptions): void {
  if (typeof part === 'string') return str(part, at, out);
  if (!isObj(part)) return;
  switch (part.type) {
    case 'input_text':
    case 'output_text':
    case 'text':
    case 'summary_text':
    case 'reasoning_text':
      str(part.text, `${at}.text`, out);
      // Citations (url, title, filename) are text the client reads; a cited file id is no content.
      if (Array.isArray(part.annotations)) anyTexts(part.annotations, `${at}.annotations`, out, { decode: o.decode });
      return;
    case 'refusal':
      return str(part.refusal, `${at}.refusal`, out);
    case 'input_file':
      // file_data (decoded and scanned when it is text), filename; file_id / file_url are references.
      fileTexts(part, at, out, o.unscanned ?? []);
      if (typeof part.file_url === 'string') o.unscanned?.push(`${at}.file_url`);
      return;
    default:
      // input_image (image_url / file_id: unscanned), input_audio, a part type this file does not know.
      if (part.type === 'input_audio') o.unscanned?.push(`${at}.input_audio`);
      else anyTexts(part, at, out, o);
  }
}

/** A content value: a string, or an array of parts. */
function contentTexts(content: Json | undefined, path: string, out: Out, o: ReadOptions): void {
  if (typeof content === 'string') return str(content, path, out);
  if (Array.isArray(content)) content.forEach((part, i) => partTexts(part, indexPath(path, i), out, o));
}

/** The type of an item (an input message may leave `type` out and give only its role). */
const itemType = (item: Record<string, Json>): string | undefined =>
  typeof item.type === 'string' ? item.type : typeof item.role === 'string' ? 'message' : undefined;

/** One item of `input` or `output` (or of an input-items list) at `path`. */
function itemTexts(item: Json, path: string, out: Out, o: ReadOptions): void {
  if (typeof item === 'string') return str(item, path, out);
  if (!isObj(item)) return;
  switch (itemType(item)) {
    case 'message':
      return contentTexts(item.content, `${path}.content`, out, o);
    case 'function_call':
      str(item.name, `${path}.name`, out);
      return argumentTexts(item.arguments, `${path}.arguments`, out, o.decode);
    case 'function_call_output':
    case 'custom_tool_call_output':
      return contentTexts(item.output, `${path}.output`, out, o);
    case 'custom_tool_call':
      str(item.name, `${path}.name`, out);
      return str(item.input, `${path}.input`, out);
    case 'reasoning':
      contentTexts(item.summary, `${path}.summary`, out, o);
      return contentTexts(item.content, `${path}.content`, out, o);
    case 'item_reference':
      return; // an item stored at the provider (scanned when it passed through)
    case 'image_generation_call':
      // `result` is the image (base64): no text.
      if (typeof item.result === 'string') o.unscanned?.push(`${path}.result`);
      return anyTexts({ ...item, result: null }, path, out, o);
    default:
      // web_search_call, file_search_call (queries, results), code_interpreter_call (code, logs), mcp_call
      // (arguments, output), mcp_list_tools, computer_call(_output), shell calls, and any newer item type.
      anyTexts(item, path, out, o);
  }
}

/** A function definition's parameters, a JSON schema the model reads as a whole: its JSON text. */
const jsonText = (v: Json | undefined, path: string, out: Out) => {
  if (v !== undefined && v !== null) out.push({ path, text: JSON.stringify(v) });
};

/**
 * Tool definitions the model reads: a function's name, description and parameter schema; a custom
 * tool's name, description and format (every string: a grammar's definition); an MCP server's label
 * and description. The other built-in tools (web_search, file_search, code_interpreter, computer,
 * image_generation, ...) are configuration, not text for the model; an MCP tool's headers and
 * authorization are credentials, never sent to detection.
 */
function toolTexts(tool: Json, at: string, out: Out): void {
  if (!isObj(tool)) return;
  switch (tool.type) {
    case 'function':
      str(tool.name, `${at}.name`, out);
      str(tool.description, `${at}.description`, out);
      return jsonText(tool.parameters, `${at}.parameters`, out);
    case 'custom':
      str(tool.name, `${at}.name`, out);
      str(tool.description, `${at}.description`, out);
      return anyTexts(tool.format, `${at}.format`, out, { decode: true });
    case 'mcp':
      str(tool.server_label, `${at}.server_label`, out);
      return str(tool.server_description, `${at}.server_description`, out);
  }
}

export interface ResponsesRequestSummary {
  model: string | null;
  stream: boolean;
  /** Every text the upstream model would read (from this request: see the field list above). */
  texts: string[];
  fields: TextField[];
  /** JSON paths of content no detector can read (images, audio, file references, non-text files). */
  unscanned: string[];
}

const invalid = (message: string, code = 'invalid_request') => new AppError('invalid_request', message, { code });

/**
 * Validates the minimal shape of a Responses request and collects its texts. `background: true` is
 * refused: a background response is produced after this request ends, so its output could not be
 * scanned before the client reads it (GET /v1/responses/{id}?stream=true is refused for the same reason).
 * Not re-scanned: what `previous_response_id`, `conversation`, `prompt.id` and item references name,
 * stored at the provider (it was scanned when it passed through the gateway).
 */
export function readResponsesRequest(body: unknown): ResponsesRequestSummary {
  if (!isObj(body)) throw invalid('Request body must be a JSON object');
  if (body.model !== undefined && (typeof body.model !== 'string' || body.model.length === 0)) throw invalid('model: must be a non-empty string');
  if (body.background === true) {
    throw invalid(
      'background: true is not supported through the gateway: a background response is produced after this request ends, so its output could not be scanned before it reaches you; send the request without background',
      'background_not_supported',
    );
  }
  const instructions = body.instructions;
  if (instructions !== undefined && instructions !== null && typeof instructions !== 'string' && !Array.isArray(instructions)) {
    throw invalid('instructions: must be a string or an array of input items');
  }
  const input = body.input;
  if (input !== undefined && typeof input !== 'string' && !Array.isArray(input)) throw invalid('input: must be a string or an array of input items');
  const fields: Out = [];
  const unscanned: string[] = [];
  const o: ReadOptions = { unscanned, decode: true };
  if (typeof body.instructions === 'string') str(body.instructions, 'instructions', fields);
  else if (Array.isArray(body.instructions)) body.instructions.forEach((item, i) => itemTexts(item, indexPath('instructions', i), fields, o));
  if (typeof input === 'string') str(input, 'input', fields);
  else if (Array.isArray(input)) {
    input.forEach((item, i) => {
      if (!isObj(item) && typeof item !== 'string') throw invalid(`input[${i}]: must be an input item object`);
      itemTexts(item, indexPath('input', i), fields, o);
    });
  }
  // Variables filled into a stored prompt template: strings, or input parts.
  if (isObj(body.prompt) && isObj(body.prompt.variables)) {
    for (const [name, v] of Object.entries(body.prompt.variables)) partTexts(v, childPath('prompt.variables', name), fields, o);
  }
  // tool_choice names a tool declared in tools[] (scanned there): not scanned, as in chat completions.
  if (Array.isArray(body.tools)) body.tools.forEach((t, i) => toolTexts(t, indexPath('tools', i), fields));
  if (isObj(body.text) && isObj(body.text.format) && body.text.format.type === 'json_schema') {
    const format = body.text.format;
    str(format.name, 'text.format.name', fields);
    str(format.description, 'text.format.description', fields);
    jsonText(format.schema, 'text.format.schema', fields);
  }
  const model = typeof body.model === 'string' ? body.model : null;
  return { model, stream: body.stream === true, texts: fields.map((f) => f.text), fields, unscanned };
}

/**
 * Fields of a response object (a non-stream answer, GET /v1/responses/{id}): every output item, the
 * `output_text` convenience field some providers add, the error message. Echoes of the request
 * (instructions, tools, metadata) are the caller's own input, scanned as input: not scanned again.
 */
export function responsesOutputFields(body: unknown): TextField[] {
  const out: Out = [];
  if (!isObj(body)) return out;
  if (Array.isArray(body.output)) body.output.forEach((item, i) => itemTexts(item, indexPath('output', i), out, { decode: true }));
  str(body.output_text, 'output_text', out);
  if (isObj(body.error)) str(body.error.message, 'error.message', out);
  return out;
}

/** Fields of an input-items list (GET /v1/responses/{id}/input_items): every item of `data`, read as a request reads it. */
export function inputItemsFields(body: unknown): TextField[] {
  const out: Out = [];
  if (isObj(body) && Array.isArray(body.data)) body.data.forEach((item, i) => itemTexts(item, indexPath('data', i), out, { decode: true }));
  return out;
}

/** Detection streams: all text of message items, all reasoning, everything else; one per function-call arguments and per custom tool input. */
const MESSAGE_KEY = 'message';
const REASONING_KEY = 'reasoning';
const ITEMS_KEY = 'items';
/** Text an event states that differs from what the stream's deltas built at its path: scanned whole, on its own. */
const RESTATED_KEY = 'restated';

const isArguments = (path: string) => path.endsWith('.arguments');

/** The detection stream of a text of output item `type` at `path`, and whether it is a JSON document. */
function streamKey(type: string | undefined, path: string): { key: string; json?: true } {
  if (isArguments(path)) return { key: path, json: true };
  if (type === 'custom_tool_call' && path.endsWith('.input')) return { key: path };
  if (type === 'message') return { key: MESSAGE_KEY };
  return { key: type === 'reasoning' ? REASONING_KEY : ITEMS_KEY };
}

export interface ResponsesStreamState {
  /** The last response object an event carried (response.created, ...): the blocked tail's identity. */
  snapshot: Record<string, Json> | null;
  /** The highest sequence_number seen. */
  sequence: number;
}

/**
 * The stream guard's view of a Responses stream. Deltas (output_text, refusal, function and MCP call
 * arguments, custom tool input, code, reasoning summary and text) are scanned as they come, each
 * appended to the text built so far at its path (`output[1].content[0].text`). Many events state a
 * whole text again: the `.done` events, content_part / summary_part / output_item events, and the
 * response object of response.completed (and created, in_progress, incomplete, failed). Such a text is
 * covered when it equals what the deltas built (nothing new to scan), continues it (the rest scanned,
 * contiguous) or else is scanned whole on a detection stream of its own: no text of any event reaches
 * the client unscanned, and a text restated differently from its deltas is no way around the scan.
 * Events of a type this file does not know: every string but OPAQUE keys.
 */
export function responsesStreamTexts(state: ResponsesStreamState): StreamTexts {
  const built = new Map<string, string>();
  /** Output item types by output_index (from output_item.added), for the detection stream of a text. */
  const types = new Map<number, string>();

  /** Paths moved to a detection stream of their own, and the last path written to each detection stream. */
  const own = new Set<string>();
  const lastOn = new Map<string, string>();
  /**
   * Appends `text` to the text built at `path`, on its detection stream. A field resumed after another
   * field's text went to the same detection stream (interleaved items) continues on a stream of its
   * own, from its start: the text a client assembles for that field is always scanned contiguous.
   */
  const emit = (path: string, text: string, at: { key: string; json?: true }): StreamText[] => {
    const before = built.get(path) ?? '';
    built.set(path, before + text);
    let key = own.has(path) ? path : at.key;
    let piece = text;
    if (!at.json && !own.has(path) && before !== '' && lastOn.get(key) !== path) {
      own.add(path);
      key = path;
      piece = before + text;
    }
    lastOn.set(key, path);
    return [{ key, path, text: piece, ...(at.json ? { json: true } : {}) }];
  };
  const delta = (path: string, text: unknown, at: { key: string; json?: true }): StreamText[] =>
    typeof text === 'string' && text.length > 0 ? emit(path, text, at) : [];
  const restate = (path: string, text: string, at: { key: string; json?: true }): StreamText[] => {
    const seen = built.get(path) ?? '';
    if (text === seen) return [];
    if (text.startsWith(seen)) return emit(path, text.slice(seen.length), at);
    built.set(path, text);
    const out: Out = [];
    if (at.json) argumentTexts(text, path, out, true);
    else out.push({ path, text });
    return out.map((f) => ({ key: RESTATED_KEY, path: f.path, text: f.text }));
  };
  const restateAll = (fields: Out, type: string | undefined): StreamText[] => fields.flatMap((f) => restate(f.path, f.text, streamKey(type, f.path)));
  const item = (value: Json | undefined, index: number): StreamText[] => {
    if (!isObj(value)) return [];
    const type = itemType(value);
    if (type) types.set(index, type);
    const out: Out = [];
    itemTexts(value, indexPath('output', index), out, { decode: false });
    return restateAll(out, type);
  };

  return (parsed) => {
    if (!isObj(parsed)) return [];
    const e = parsed;
    if (typeof e.sequence_number === 'number') state.sequence = Math.max(state.sequence, e.sequence_number);
    const oi = typeof e.output_index === 'number' ? e.output_index : 0;
    const item_ = `output[${oi}]`;
    const ci = typeof e.content_index === 'number' ? e.content_index : 0;
    const si = typeof e.summary_index === 'number' ? e.summary_index : 0;
    switch (e.type) {
      case 'response.output_text.delta':
        return delta(`${item_}.content[${ci}].text`, e.delta, { key: MESSAGE_KEY });
      case 'response.refusal.delta':
        return delta(`${item_}.content[${ci}].refusal`, e.delta, { key: MESSAGE_KEY });
      case 'response.function_call_arguments.delta':
      case 'response.mcp_call_arguments.delta':
        return delta(`${item_}.arguments`, e.delta, { key: `${item_}.arguments`, json: true });
      case 'response.custom_tool_call_input.delta':
        return delta(`${item_}.input`, e.delta, { key: `${item_}.input` });
      case 'response.code_interpreter_call_code.delta':
        return delta(`${item_}.code`, e.delta, { key: ITEMS_KEY });
      case 'response.reasoning_summary_text.delta':
        return delta(`${item_}.summary[${si}].text`, e.delta, { key: REASONING_KEY });
      case 'response.reasoning_text.delta':
        return delta(`${item_}.content[${ci}].text`, e.delta, { key: REASONING_KEY });
      case 'response.audio.transcript.delta':
        return delta('audio.transcript', e.delta, { key: ITEMS_KEY });
      case 'response.output_text.done':
        return typeof e.text === 'string' ? restate(`${item_}.content[${ci}].text`, e.text, { key: MESSAGE_KEY }) : [];
      case 'response.refusal.done':
        return typeof e.refusal === 'string' ? restate(`${item_}.content[${ci}].refusal`, e.refusal, { key: MESSAGE_KEY }) : [];
      case 'response.function_call_arguments.done':
      case 'response.mcp_call_arguments.done': {
        const out = typeof e.arguments === 'string' ? restate(`${item_}.arguments`, e.arguments, { key: `${item_}.arguments`, json: true }) : [];
        return typeof e.name === 'string' ? [...out, ...restate(`${item_}.name`, e.name, { key: ITEMS_KEY })] : out;
      }
      case 'response.custom_tool_call_input.done':
        return typeof e.input === 'string' ? restate(`${item_}.input`, e.input, { key: `${item_}.input` }) : [];
      case 'response.code_interpreter_call_code.done':
        return typeof e.code === 'string' ? restate(`${item_}.code`, e.code, { key: ITEMS_KEY }) : [];
      case 'response.reasoning_summary_text.done':
        return typeof e.text === 'string' ? restate(`${item_}.summary[${si}].text`, e.text, { key: REASONING_KEY }) : [];
      case 'response.reasoning_text.done':
        return typeof e.text === 'string' ? restate(`${item_}.content[${ci}].text`, e.text, { key: REASONING_KEY }) : [];
      case 'response.content_part.added':
      case 'response.content_part.done': {
        const out: Out = [];
        if (e.part !== undefined) partTexts(e.part, `${item_}.content[${ci}]`, out, { decode: false });
        return restateAll(out, types.get(oi) ?? 'message');
      }
      case 'response.reasoning_summary_part.added':
      case 'response.reasoning_summary_part.done': {
        const out: Out = [];
        if (e.part !== undefined) partTexts(e.part, `${item_}.summary[${si}]`, out, { decode: false });
        return restateAll(out, 'reasoning');
      }
      case 'response.output_text.annotation.added': {
        const out: Out = [];
        const ai = typeof e.annotation_index === 'number' ? e.annotation_index : 0;
        anyTexts(e.annotation, `${item_}.content[${ci}].annotations[${ai}]`, out, { decode: false });
        return restateAll(out, 'message');
      }
      case 'response.output_item.added':
      case 'response.output_item.done':
        return item(e.item, oi);
      case 'response.audio.delta': // base64 audio
      case 'response.image_generation_call.partial_image': // base64 image
        return [];
      default: {
        if (isObj(e.response) && typeof e.type === 'string' && e.type.startsWith('response.')) {
          // response.created / in_progress / queued / completed / incomplete / failed: the response object.
          const r = e.response;
          state.snapshot = r;
          const out = Array.isArray(r.output) ? r.output.flatMap((x, i) => item(x, i)) : [];
          const extra: Out = [];
          str(r.output_text, 'output_text', extra);
          if (isObj(r.error)) str(r.error.message, 'error.message', extra);
          return [...out, ...restateAll(extra, undefined)];
        }
        // `error` events, and event types this file does not know: every string of the event.
        const out: Out = [];
        anyTexts(e, 'event', out, { decode: false });
        return restateAll(out, undefined);
      }
    }
  };
}

/**
 * The output a stream has sent so far, rebuilt from its events (items, content and summary parts, text,
 * refusal, summary, arguments and custom-input deltas): the output of the response that ends a stream
 * cut at max_output_tokens, as the API's own response.incomplete carries it. Items not done are marked
 * incomplete.
 */
export class StreamedOutput {
  private readonly items = new Map<number, Record<string, Json>>();

  add(e: Record<string, Json>): void {
    if (typeof e.output_index !== 'number') return;
    const oi = e.output_index;
    const ci = typeof e.content_index === 'number' ? e.content_index : 0;
    const si = typeof e.summary_index === 'number' ? e.summary_index : 0;
    const item = this.items.get(oi);
    const delta = typeof e.delta === 'string' ? e.delta : '';
    switch (e.type) {
      case 'response.output_item.added':
      case 'response.output_item.done':
        if (isObj(e.item)) this.items.set(oi, structuredClone(e.item));
        return;
      case 'response.content_part.added':
      case 'response.content_part.done':
        if (item && isObj(e.part)) partsOf(item, 'content')[ci] = structuredClone(e.part);
        return;
      case 'response.reasoning_summary_part.added':
        if (item && isObj(e.part)) partsOf(item, 'summary')[si] = structuredClone(e.part);
        return;
      case 'response.output_text.delta':
        return appendTo(item, 'content', ci, 'text', delta, { type: 'output_text', text: '', annotations: [] });
      case 'response.refusal.delta':
        return appendTo(item, 'content', ci, 'refusal', delta, { type: 'refusal', refusal: '' });
      case 'response.reasoning_summary_text.delta':
        return appendTo(item, 'summary', si, 'text', delta, { type: 'summary_text', text: '' });
      case 'response.function_call_arguments.delta':
      case 'response.mcp_call_arguments.delta':
        if (item) item.arguments = (typeof item.arguments === 'string' ? item.arguments : '') + delta;
        return;
      case 'response.custom_tool_call_input.delta':
        if (item) item.input = (typeof item.input === 'string' ? item.input : '') + delta;
    }
  }

  output(): Json[] {
    return [...this.items.entries()].sort(([a], [b]) => a - b).map(([, item]) => ({ ...item, status: item.status === 'completed' ? 'completed' : 'incomplete' }));
  }
}

function partsOf(item: Record<string, Json>, field: 'content' | 'summary'): Json[] {
  if (!Array.isArray(item[field])) item[field] = [];
  return item[field] as Json[];
}

function appendTo(item: Record<string, Json> | undefined, field: 'content' | 'summary', index: number, key: string, delta: string, empty: Record<string, Json>): void {
  if (!item || index > 1024) return;
  const parts = partsOf(item, field);
  const part = isObj(parts[index]) ? (parts[index] as Record<string, Json>) : (parts[index] = { ...empty }) as Record<string, Json>;
  part[key] = (typeof part[key] === 'string' ? part[key] : '') + delta;
}

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * The response object of a stream's last event, from the last snapshot the stream carried (its id,
 * model, created_at, the request's echoes) with no output: `status` and the fields given.
 */
export function endedResponse(snapshot: Record<string, Json> | null, model: string, fields: Record<string, Json>): Record<string, Json> {
  const base = snapshot ?? { id: 'resp_blocked_' + String(Date.now()), object: 'response', created_at: Math.floor(Date.now() / 1000), model };
  return { ...base, output: [], output_text: null, usage: null, error: null, incomplete_details: null, ...fields };
}

/**
 * The event that ends a stream blocked mid-way: `response.failed`, its response's error code
 * `security_block` (what the openai SDK reads as a failed response), never response.completed.
 */
export function responsesBlockedTail(state: ResponsesStreamState, model: string, message: string, categories: string[]): string {
  const response = endedResponse(state.snapshot, model, { status: 'failed', error: { code: 'security_block', message } });
  return sse('response.failed', { type: 'response.failed', sequence_number: state.sequence + 1, response, security: { blocked: true, categories } });
}
