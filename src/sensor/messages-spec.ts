import { AppError } from '../shared/errors';
import { childPath, indexPath, type TextField } from '../shared/explain/field-layout';

/**
 * The messages wire API (what coding assistants send): which parts of a request carry text that must
 * be scanned. Everything a model reads is covered: the system prompt (string or blocks), every
 * message's string content, text blocks, tool_use / server_tool_use / mcp_tool_use inputs, tool_result
 * and mcp_tool_result contents (file contents and command output travel there), document blocks with a
 * text or content source, search_result blocks, thinking blocks, the tool definitions (name,
 * description, input_schema) and a structured-output schema. Block types this file does not know are
 * scanned field by field (every string they hold, at any depth) rather than skipped; only binary or
 * encrypted payloads (image sources, redacted thinking, signatures, encrypted contents) are left out.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export const isObject = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Nesting followed block by block; anything deeper is scanned as its JSON text (never skipped). */
const MAX_DEPTH = 8;
/** Keys of unknown blocks that carry identifiers, binary or encrypted data rather than text a model reads. */
const OPAQUE_KEYS = new Set(['type', 'id', 'tool_use_id', 'signature', 'encrypted_content', 'encrypted_index', 'cache_control', 'media_type']);

type Out = TextField[];
export const str = (v: Json | undefined, path: string, out: Out) => {
  if (typeof v === 'string' && v.length > 0) out.push({ path, text: v });
};
/** A JSON value read as a whole (a tool input, a schema): its JSON text, offsets into that text. */
const json = (v: Json | undefined, path: string, out: Out) => {
  if (v !== undefined && v !== null) out.push({ path, text: JSON.stringify(v) });
};

export function blockTexts(block: Json, path: string, out: Out, depth = 0): void {
  if (depth > MAX_DEPTH) return json(block, path, out);
  if (typeof block === 'string') return str(block, path, out);
  if (Array.isArray(block)) {
    block.forEach((b, i) => blockTexts(b, indexPath(path, i), out, depth + 1));
    return;
  }
  if (!isObject(block)) return;
  const at = (key: string) => childPath(path, key);
  switch (block.type) {
    case 'text':
      return str(block.text, at('text'), out);
    case 'tool_use':
    case 'server_tool_use':
    case 'mcp_tool_use':
      str(block.name, at('name'), out);
      return json(block.input, at('input'), out);
    case 'tool_result':
    case 'mcp_tool_result':
    case 'web_search_tool_result':
      if (block.content !== undefined) blockTexts(block.content, at('content'), out, depth + 1);
      return;
    case 'document':
      return documentTexts(block, path, out, depth);
    case 'search_result':
      str(block.title, at('title'), out);
      str(block.source, at('source'), out);
      if (block.content !== undefined) blockTexts(block.content, at('content'), out, depth + 1);
      return;
    case 'thinking':
      return str(block.thinking, at('thinking'), out);
    case 'image':
    case 'redacted_thinking':
      return; // binary (base64 or a URL) or encrypted: nothing a text detector can read
    default:
      // Unknown block types (and untyped objects inside them): every string they hold, at any depth.
      for (const [k, v] of Object.entries(block)) {
        if (OPAQUE_KEYS.has(k)) continue;
        if (typeof v === 'string') str(v, at(k), out);
        else blockTexts(v, at(k), out, depth + 1);
      }
  }
}

function documentTexts(block: Record<string, Json>, path: string, out: Out, depth: number): void {
  const source = block.source;
  if (isObject(source) && source.type === 'text') str(source.data, `${path}.source.data`, out);
  if (isObject(source) && source.type === 'content') blockTexts(source.content ?? null, `${path}.source.content`, out, depth + 1);
  str(block.context, `${path}.context`, out);
  str(block.title, `${path}.title`, out);
}

/** Tool definitions are read by the model: name, description and input schema (descriptions live inside it). */
function toolTexts(tools: Json | undefined, out: Out): void {
  if (!Array.isArray(tools)) return;
  tools.forEach((t, i) => {
    if (!isObject(t)) return;
    str(t.name, `tools[${i}].name`, out);
    str(t.description, `tools[${i}].description`, out);
    json(t.input_schema, `tools[${i}].input_schema`, out);
    json(t.input_examples, `tools[${i}].input_examples`, out);
  });
}

export interface MessagesRequestSummary {
  model: string | null;
  stream: boolean;
  texts: string[];
  /** The same texts with the JSON path of their field (`system`, `messages[0].content[1].text`). */
  fields: TextField[];
}

/** Validates the minimal shape and returns every text the upstream model would read. */
export function readMessagesRequest(body: unknown): MessagesRequestSummary {
  if (!isObject(body)) throw new AppError('invalid_request', 'Request body must be a JSON object', { code: 'invalid_request' });
  if (!Array.isArray(body.messages)) {
    throw new AppError('invalid_request', 'messages: must be an array of {role, content}', { code: 'invalid_request' });
  }
  const fields: Out = [];
  if (body.system !== undefined) blockTexts(body.system, 'system', fields);
  body.messages.forEach((message, i) => {
    if (!isObject(message) || message.content === undefined) {
      throw new AppError('invalid_request', `messages.${i}: must be an object with role and content`, { code: 'invalid_request' });
    }
    blockTexts(message.content, `messages[${i}].content`, fields);
  });
  toolTexts(body.tools, fields);
  // Structured output: the JSON schema (with its descriptions) the model is asked to follow.
  if (isObject(body.output_config) && isObject(body.output_config.format)) {
    json(body.output_config.format.schema, 'output_config.format.schema', fields);
  }
  if (isObject(body.output_format)) json(body.output_format.schema, 'output_format.schema', fields);
  const texts = fields.map((f) => f.text);
  return { model: typeof body.model === 'string' ? body.model : null, stream: body.stream === true, texts, fields };
}
