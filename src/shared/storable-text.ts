import type { z } from 'zod';

/**
 * Strings that end up in Postgres (names, list entries, patterns, filters) must be text Postgres can
 * store: no NUL (text and jsonb refuse U+0000) and no lone UTF-16 surrogate (not Unicode: jsonb refuses
 * the escape, and it cannot be encoded as UTF-8). Checked at the boundary, so a client gets a 400 naming
 * the field instead of a 500 from the database.
 */
/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const hasLoneSurrogate = (text: string): boolean => LONE_SURROGATE.test(text);

export function storableText<S extends z.ZodString>(schema: S): S {
  return schema
    .refine((v) => !v.includes('\u0000'), 'must not contain the NUL character (\\u0000)')
    .refine((v) => !hasLoneSurrogate(v), 'must not contain a lone UTF-16 surrogate (\\ud800-\\udfff without its pair)') as S;
}
