import type { z } from 'zod';
import { AppError } from '../errors';

/** Formats zod issues as "path: reason; path: reason" so a client sees which field is wrong and why. */
export function describeIssues(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): string {
  return issues
    .slice(0, 10)
    .map((i) => `${i.path.length > 0 ? i.path.map(String).join('.') : 'body'}: ${i.message}`)
    .join('; ');
}

/** Parses a request body with a zod schema; failure → 400 invalid_request naming the field(s). */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  if (body === undefined || body === null) {
    throw new AppError('invalid_request', 'A JSON body is required', { code: 'invalid_request' });
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    throw new AppError('invalid_request', describeIssues(parsed.error.issues), {
      code: 'invalid_request',
      details: { fields: parsed.error.issues.slice(0, 10).map((i) => ({ path: i.path.map(String).join('.'), message: i.message })) },
    });
  }
  return parsed.data;
}

/** Parses query parameters; failure → 400 invalid_request naming the parameter. */
export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.infer<S> {
  const parsed = schema.safeParse(query ?? {});
  if (!parsed.success) {
    throw new AppError('invalid_request', `query ${describeIssues(parsed.error.issues)}`, { code: 'invalid_request' });
  }
  return parsed.data;
}
