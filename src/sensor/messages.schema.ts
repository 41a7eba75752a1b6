import { AppError } from '../shared/errors';
import { childPath, indexPath, type TextField } from '../shared/explain/field-layout';
import { inlineFileContent } from '../shared/content/file-content';

/**
 * The messages wire API (what coding assistants send): which parts of a request carry text that must
 * be scanned. Everything a model reads is covered: the system prompt (string or blocks), every
 * message's string content, text blocks, tool_use / server_tool_use / mcp_tool_use inputs, tool_result
 * and mcp_tool_result contents (file contents and command output travel there), document blocks with a
 * text or content source, search_result blocks, thinking blocks, the tool definitions (name,
 * description, input_schema) and a structured-output schema. Block types this file does not know are
 * scanned field by field (every string they hold, at any depth) rather than skipped. Documents with a
 * base64 source are decoded and scanned when they are text (file-content.ts); what no detector can read
 * (images, non-text documents, documents by URL or file id) is reported as unscanned content by its
 * JSON path. Encrypted payloads (redacted thinking, signatures, encrypted contents) are left out.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export const isObject = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Nesting followed block by block; anything deeper is scanned as its JSON text (never skipped). */
const MAX_DEPTH = 8;
/** Keys of unknown blocks that carry identifiers, binary or encrypted data rather than text a model reads. */
const OPAQUE_KEYS = new Set(['type', 'id', 'tool_use_id', 'signature', 'encrypted_content', 'encrypted_index', 'cache_control', 'media_type']);

/** Where the walk collects: scanned fields, and the paths of content no detector can read. */
interface Out {
  fields: TextField[];
  unscanned: string[];
}
export const str = (v: Json | undefined, path: string, out: TextField[]) => {
  if (typeof v === 'string' && v.length > 0) out.push({ path, text: v });
};
const text = (v: Json | undefined, path: string, out: Out) => str(v, path, out.fields);
/** A JSON value read as a whole (a tool input, a schema): its JSON text, offsets into that text. */
const json = (v: Json | undefined, path: string, out: Out) => {
  if (v !== undefined && v !== null) out.fields.push({ path, text: JSON.stringify(v) });
};

/** Texts of blocks of a response (a message's content, a stream event); content no detector reads is not collected there. */
export function blockTexts(block: Json, path: string, out: TextField[]): void {
  walk(block, path, { fields: out, unscanned: [] });
}

function walk(block: Json, path: string, out: Out, depth = 0): void {
  if (depth > MAX_DEPTH) {
    json(block, path, out);
    return deepAttachments(block, path, out);
  }
  if (typeof block === 'string') return text(block, path, out);
  if (Array.isArray(block)) {
    block.forEach((b, i) => walk(b, indexPath(path, i), out, depth + 1));
    return;
  }
  if (!isObject(block)) return;
  const at = (key: string) => childPath(path, key);
  switch (block.type) {
    case 'text':
      return text(block.text, at('text'), out);
    case 'tool_use':
    case 'server_tool_use':
    case 'mcp_tool_use':
      text(block.name, at('name'), out);
      return json(block.input, at('input'), out);
    case 'tool_result':
    case 'mcp_tool_result':
    case 'web_search_tool_result':
      if (block.content !== undefined) walk(block.content, at('content'), out, depth + 1);
      return;
    case 'document':
      return documentTexts(block, path, out, depth);
    case 'search_result':
      text(block.title, at('title'), out);
      text(block.source, at('source'), out);
      if (block.content !== undefined) walk(block.content, at('content'), out, depth + 1);
      return;
    case 'thinking':
      return text(block.thinking, at('thinking'), out);
    case 'image':
      return void out.unscanned.push(at('source'));
    case 'container_upload':
      return void out.unscanned.push(at('file_id')); // a file handed to the code-execution container
    case 'redacted_thinking':
      return; // encrypted: nothing a text detector can read
    default:
      // Unknown block types (and untyped objects inside them): every string they hold, at any depth.
      for (const [k, v] of Object.entries(block)) {
        if (OPAQUE_KEYS.has(k)) continue;
        if (typeof v === 'string') text(v, at(k), out);
        else walk(v, at(k), out, depth + 1);
      }
  }
}

/** Images and documents inside a subtree scanned as JSON text: still reported, or decoded (documentTexts). */
function deepAttachments(v: Json, path: string, out: Out): void {
  if (Array.isArray(v)) return v.forEach((x, i) => deepAttachments(x, indexPath(path, i), out));
  if (!isObject(v)) return;
  if (v.type === 'image') return void out.unscanned.push(childPath(path, 'source'));
  const source = v.source;
  if (v.type === 'document' && isObject(source) && source.type !== 'text' && source.type !== 'content') return documentTexts(v, path, out, MAX_DEPTH);
  for (const [k, x] of Object.entries(v)) deepAttachments(x, childPath(path, k), out);
}

function documentTexts(block: Record<string, Json>, path: string, out: Out, depth: number): void {
  const source = block.source;
  if (isObject(source) && source.type === 'text') text(source.data, `${path}.source.data`, out);
  else if (isObject(source) && source.type === 'content') walk(source.content ?? null, `${path}.source.content`, out, depth + 1);
  else if (isObject(source) && source.type === 'base64' && typeof source.data === 'string') {
    const mediaType = typeof source.media_type === 'string' ? source.media_type : '';
    const filename = typeof block.title === 'string' ? block.title : undefined;
    inlineFileContent({ path: `${path}.source.data`, data: source.data, base64: true, mediaType, filename }, out.fields, out.unscanned);
  } else if (source !== undefined) out.unscanned.push(`${path}.source`); // a URL, a file id, a source kind not known here
  text(block.context, `${path}.context`, out);
  text(block.title, `${path}.title`, out);
}

/** Tool definitions are read by the model: name, description and input schema (descriptions live inside it). */
function toolTexts(tools: Json | undefined, out: Out): void {
  if (!Array.isArray(tools)) return;
  tools.forEach((t, i) => {
    if (!isObject(t)) return;
    text(t.name, `tools[${i}].name`, out);
    text(t.description, `tools[${i}].description`, out);
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
  /** JSON paths of content no detector can read (images, non-text documents, documents by URL or file id). */
  unscanned: string[];
}

/** Validates the minimal shape and returns every text the upstream model would read. */
export function readMessagesRequest(body: unknown): MessagesRequestSummary {
  if (!isObject(body)) throw new AppError('invalid_request', 'Request body must be a JSON object', { code: 'invalid_request' });
  if (!Array.isArray(body.messages)) {
    throw new AppError('invalid_request', 'messages: must be an array of {role, content}', { code: 'invalid_request' });
  }
  const out: Out = { fields: [], unscanned: [] };
  if (body.system !== undefined) walk(body.system, 'system', out);
  body.messages.forEach((message, i) => {
    if (!isObject(message) || message.content === undefined) {
      throw new AppError('invalid_request', `messages.${i}: must be an object with role and content`, { code: 'invalid_request' });
    }
    walk(message.content, `messages[${i}].content`, out);
  });
  toolTexts(body.tools, out);
  // Structured output: the JSON schema (with its descriptions) the model is asked to follow.
  if (isObject(body.output_config) && isObject(body.output_config.format)) {
    json(body.output_config.format.schema, 'output_config.format.schema', out);
  }
  if (isObject(body.output_format)) json(body.output_format.schema, 'output_format.schema', out);
  const texts = out.fields.map((f) => f.text);
  return { model: typeof body.model === 'string' ? body.model : null, stream: body.stream === true, texts, fields: out.fields, unscanned: out.unscanned };
}
