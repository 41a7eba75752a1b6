import { jsonStringFields } from '../gateway/proxy/output-scan';
import type { StreamText } from '../gateway/proxy/stream-guard';
import { indexPath, type TextField } from '../shared/explain/field-layout';
import { blockTexts, isObject, str, type Json } from './messages.schema';

/**
 * The messages wire API, response side: every text the model wrote, in a whole message and in the
 * events of a stream, read the way the request side reads content blocks (messages.schema.ts): text,
 * thinking, tool_use / server_tool_use / mcp_tool_use (name; the input as JSON text and each of its
 * string values decoded), web search and other tool results, every string of a block type this file
 * does not know. Beyond the request side: a text block's `citations` (`cited_text`, titles, URLs).
 */

/** Fields of one content block of a response (or of a content_block_start event) at `path`. */
function responseBlockFields(block: Json | undefined, path: string, out: TextField[]): void {
  if (block === undefined) return;
  blockTexts(block, path, out);
  if (!isObject(block)) return;
  if (block.type === 'text' && block.citations !== undefined && block.citations !== null) blockTexts(block.citations, `${path}.citations`, out);
  if (block.type === 'tool_use' || block.type === 'server_tool_use' || block.type === 'mcp_tool_use') {
    // The JSON text escapes quotes, backslashes and line breaks; the tool reads the values decoded.
    jsonStringFields(block.input, `${path}.input`, out);
  }
}

/**
 * Fields of a whole response: the content blocks of a message. A body of another shape (not a
 * message) is read whole: every string it holds.
 */
export function messagesResponseFields(body: unknown): TextField[] {
  const out: TextField[] = [];
  if (!isObject(body) || !Array.isArray(body.content)) return jsonStringFields(body, '', out);
  body.content.forEach((block, i) => responseBlockFields(block, indexPath('content', i), out));
  return out;
}

/**
 * The detection stream of a messages stream: one for the whole message. Content blocks arrive one
 * after another (content_block_start, deltas, content_block_stop), so their texts are scanned as one
 * contiguous text, as read: an answer split into several text blocks by citations is scanned across
 * the splits. Streamed tool input (`input_json_delta.partial_json`) is a JSON document decoded by
 * the guard (one decoder per block).
 */
const MESSAGE_KEY = 'message';

/** Text pieces of one stream event (its JSON data), for the stream guard. */
export function messagesStreamTexts(event: unknown): StreamText[] {
  if (!isObject(event)) return [];
  const out: TextField[] = [];
  const block = indexPath('content', typeof event.index === 'number' ? event.index : 0);
  switch (event.type) {
    case 'ping':
    case 'content_block_stop':
    case 'message_delta': // stop reason, the caller's own stop sequence, usage
    case 'message_stop':
      break;
    case 'message_start':
      if (isObject(event.message) && Array.isArray(event.message.content)) {
        event.message.content.forEach((b, i) => responseBlockFields(b, indexPath('content', i), out));
      }
      break;
    case 'content_block_start':
      responseBlockFields(event.content_block, block, out);
      break;
    case 'content_block_delta':
      return deltaTexts(event.delta, block);
    case 'error':
      jsonStringFields(event.error, 'error', out);
      break;
    default:
      // An event type this file does not know: every string it holds.
      blockTexts(event, 'event', out);
  }
  return out.map((f) => ({ key: MESSAGE_KEY, path: f.path, text: f.text }));
}

function deltaTexts(delta: Json | undefined, block: string): StreamText[] {
  if (!isObject(delta)) return [];
  const out: TextField[] = [];
  switch (delta.type) {
    case 'text_delta':
      str(delta.text, `${block}.text`, out);
      break;
    case 'thinking_delta':
      str(delta.thinking, `${block}.thinking`, out);
      break;
    case 'input_json_delta':
      return typeof delta.partial_json === 'string' && delta.partial_json.length > 0
        ? [{ key: MESSAGE_KEY, path: `${block}.input`, text: delta.partial_json, json: true }]
        : [];
    case 'citations_delta':
      if (delta.citation !== undefined) blockTexts(delta.citation, `${block}.citations`, out);
      break;
    case 'signature_delta':
      break; // opaque
    default:
      blockTexts(delta, `${block}.delta`, out);
  }
  return out.map((f) => ({ key: MESSAGE_KEY, path: f.path, text: f.text }));
}
