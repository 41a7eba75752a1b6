import { z } from 'zod';
import { indexPath, type TextField } from '../../shared/explain/field-layout';
import { parseBody } from '../../shared/http/validation';

/**
 * The OpenAI embeddings wire API (POST /v1/embeddings). `input` is text (a string or an array of
 * strings, each its own field `input` / `input[i]`) or token ids (an array of integers, or an array of
 * arrays of integers), which no detector can read. Every other field (encoding_format, dimensions,
 * user, ...) passes through untouched: the route forwards the raw body.
 */
const tokenId = z.number().int().min(0);
export const embeddingsRequestSchema = z.looseObject({
  model: z.string().min(1).meta({ description: 'The embedding model, e.g. text-embedding-3-small' }),
  input: z
    .union([z.string(), z.array(z.string()).min(1), z.array(tokenId).min(1), z.array(z.array(tokenId).min(1)).min(1)])
    .meta({ description: 'A string, an array of strings, or token ids (an array of integers, or of arrays of integers)' }),
  encoding_format: z.string().optional().meta({ description: 'float (default) or base64; passed through' }),
  dimensions: z.number().int().min(1).optional(),
  user: z.string().optional(),
});

export interface EmbeddingsRequestSummary {
  model: string;
  /** The strings of `input` (none for token-id input). */
  texts: string[];
  /** The same texts with their JSON path: `input`, or `input[i]`. */
  fields: TextField[];
  /** Token-id input: how many token ids it holds (its input tokens); null for text input. */
  tokenIds: number | null;
}

/** Validates an embeddings request (400 invalid_request naming the field) and collects its texts. */
export function readEmbeddingsRequest(body: unknown): EmbeddingsRequestSummary {
  const { model, input } = parseBody(embeddingsRequestSchema, body);
  if (typeof input === 'string') return { model, texts: [input], fields: input.length > 0 ? [{ path: 'input', text: input }] : [], tokenIds: null };
  const first = input[0];
  if (typeof first === 'string') {
    const texts = input as string[];
    const fields = texts.flatMap((text, i) => (text.length > 0 ? [{ path: indexPath('input', i), text }] : []));
    return { model, texts, fields, tokenIds: null };
  }
  const tokenIds = typeof first === 'number' ? input.length : (input as number[][]).reduce((n, ids) => n + ids.length, 0);
  return { model, texts: [], fields: [], tokenIds };
}
