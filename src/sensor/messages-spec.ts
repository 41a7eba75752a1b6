import { AppError } from '../shared/errors';

/**
 * The messages wire API (what coding assistants send): which parts of a request carry text that must
 * be scanned. Everything a model reads is covered: the system prompt (string or blocks), every
 * message's string content, text blocks, tool_use inputs, tool_result contents (file contents and
 * command output travel there), and document blocks with a text source.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isObject = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);

function blockTexts(block: Json, out: string[], depth = 0): void {
  if (depth > 8) return;
  if (typeof block === 'string') {
    out.push(block);
    return;
  }
  if (Array.isArray(block)) {
    for (const b of block) blockTexts(b, out, depth + 1);
    return;
  }
  if (!isObject(block)) return;
  switch (block.type) {
    case 'text':
      if (typeof block.text === 'string') out.push(block.text);
      return;
    case 'tool_use':
    case 'server_tool_use':
      if (typeof block.name === 'string') out.push(block.name);
      if (block.input !== undefined) out.push(JSON.stringify(block.input));
      return;
    case 'tool_result':
    case 'web_search_tool_result':
      if (block.content !== undefined) blockTexts(block.content, out, depth + 1);
      return;
    case 'document':
      if (isObject(block.source) && block.source.type === 'text' && typeof block.source.data === 'string') out.push(block.source.data);
      if (isObject(block.source) && block.source.type === 'content') blockTexts(block.source.content ?? null, out, depth + 1);
      if (typeof block.context === 'string') out.push(block.context);
      if (typeof block.title === 'string') out.push(block.title);
      return;
    case 'thinking':
      if (typeof block.thinking === 'string') out.push(block.thinking);
      return;
    default:
      // Unknown block types: scan any string fields they carry rather than skipping them.
      for (const [k, v] of Object.entries(block)) if (k !== 'type' && typeof v === 'string' && k !== 'id') out.push(v);
  }
}

export interface MessagesRequestSummary {
  model: string | null;
  stream: boolean;
  texts: string[];
}

/** Validates the minimal shape and returns every text the upstream model would read. */
export function readMessagesRequest(body: unknown): MessagesRequestSummary {
  if (!isObject(body)) throw new AppError('invalid_request', 'Request body must be a JSON object', { code: 'invalid_request' });
  if (!Array.isArray(body.messages)) {
    throw new AppError('invalid_request', 'messages: must be an array of {role, content}', { code: 'invalid_request' });
  }
  const texts: string[] = [];
  if (body.system !== undefined) blockTexts(body.system, texts);
  body.messages.forEach((message, i) => {
    if (!isObject(message) || message.content === undefined) {
      throw new AppError('invalid_request', `messages.${i}: must be an object with role and content`, { code: 'invalid_request' });
    }
    blockTexts(message.content, texts);
  });
  return { model: typeof body.model === 'string' ? body.model : null, stream: body.stream === true, texts };
}
