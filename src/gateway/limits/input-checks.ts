import { invalidRequest } from '../../shared/errors';
import type { RateLimits } from '../../shared/policy';
import { readChatRequest } from '../proxy/openai-chat.schema';
import { readEmbeddingsRequest } from '../proxy/openai-embeddings.schema';
import { readResponsesRequest } from '../proxy/openai-responses.schema';
import { readMessagesRequest } from '../../sensor/messages.schema';
import { findTokenFlooding } from './flooding';
import { countCharacters, countTokens, encodingForModel, type EncodingName } from '../../shared/tokens';

/** The wire APIs whose requests the policy limits measure. */
export type WireApi = 'openai-chat' | 'openai-responses' | 'openai-embeddings' | 'messages' | 'detect';

export interface WireRequest {
  model: string | null;
  /** Every text the model (or the detectors) would read: the same texts detection scans. */
  texts: string[];
  /** Output-size fields the client set, e.g. {field: "max_tokens", value: 8192}. */
  requestedOutput: Array<{ field: string; value: number }>;
  /** Input given as token ids (embeddings): how many, counted as input tokens as they are. */
  tokenIds?: number;
}

export interface MeasuredInput extends WireRequest {
  encoding: EncodingName;
  inputTokens: number;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function outputFields(body: unknown, fields: readonly string[]): WireRequest['requestedOutput'] {
  const out: WireRequest['requestedOutput'] = [];
  if (!isObj(body)) return out;
  for (const field of fields) {
    const value = body[field];
    if (typeof value === 'number') out.push({ field, value });
  }
  return out;
}

/** Reads what the limits need from a request body. Throws the same 400 the route itself would for a malformed body. */
export function readWireRequest(wire: WireApi, body: unknown): WireRequest {
  switch (wire) {
    case 'openai-chat': {
      const chat = readChatRequest(body);
      return { model: chat.model, texts: chat.texts, requestedOutput: outputFields(body, ['max_tokens', 'max_completion_tokens']) };
    }
    case 'openai-responses': {
      const responses = readResponsesRequest(body);
      return { model: responses.model, texts: responses.texts, requestedOutput: outputFields(body, ['max_output_tokens']) };
    }
    case 'openai-embeddings': {
      const embeddings = readEmbeddingsRequest(body);
      return { model: embeddings.model, texts: embeddings.texts, requestedOutput: [], tokenIds: embeddings.tokenIds ?? 0 };
    }
    case 'messages': {
      const messages = readMessagesRequest(body);
      return { model: messages.model, texts: messages.texts, requestedOutput: outputFields(body, ['max_tokens']) };
    }
    case 'detect': {
      // The route validates the body itself; here only the text matters.
      const content = isObj(body) && typeof body.content === 'string' ? body.content : '';
      return { model: null, texts: content ? [content] : [], requestedOutput: [] };
    }
  }
}

/**
 * A policy's per-request input limits, cheapest first: max_input_characters, the requested output
 * size against max_output_tokens, token flooding, then max_input_tokens with the model's tokenizer.
 * Each violation is a 400 invalid_request naming the limit; returns the input token count.
 */
export function checkInput(request: WireRequest, limits: RateLimits): MeasuredInput {
  const maxChars = limits.max_input_characters;
  const utf16 = request.texts.reduce((n, t) => n + t.length, 0);
  if (utf16 > maxChars) {
    const characters = countCharacters(request.texts);
    if (characters > maxChars) {
      throw invalidRequest(
        `The input is ${characters} characters long; this policy allows at most ${maxChars} (max_input_characters)`,
        'max_input_characters_exceeded',
        { limit: maxChars, actual: characters },
      );
    }
  }
  for (const { field, value } of request.requestedOutput) {
    if (value > limits.max_output_tokens) {
      throw invalidRequest(
        `${field} is ${value}; this policy allows at most ${limits.max_output_tokens} output tokens (max_output_tokens)`,
        'max_output_tokens_exceeded',
        { limit: limits.max_output_tokens, field, requested: value },
      );
    }
  }
  const flood = findTokenFlooding(request.texts.join('\n'));
  if (flood) {
    throw invalidRequest(
      `The input looks like token flooding: a span starting at character ${flood.offset} is almost entirely repetition (compresses ${flood.ratio}:1)`,
      'token_flooding',
      { compression_ratio: flood.ratio, offset: flood.offset },
    );
  }
  const encoding = encodingForModel(request.model);
  const maxTokens = limits.max_input_tokens;
  const tokenIds = request.tokenIds ?? 0;
  const inputTokens = tokenIds + countTokens(request.texts, encoding, Math.max(0, maxTokens - tokenIds));
  if (inputTokens > maxTokens) {
    throw invalidRequest(
      `The input is more than ${maxTokens} tokens (${encoding}); this policy allows at most ${maxTokens} (max_input_tokens)`,
      'max_input_tokens_exceeded',
      { limit: maxTokens },
    );
  }
  return { ...request, encoding, inputTokens };
}
