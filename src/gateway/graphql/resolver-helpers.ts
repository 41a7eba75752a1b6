import type { ZodType, z } from 'zod';
import { parseBody } from '../../shared/http/validation';
import type { GraphqlContext } from './graphql-context';

/** A resolver: thin, typed on its arguments, always given our context. */
export type Resolver<TArgs = Record<string, never>, TResult = unknown, TParent = unknown> = (
  parent: TParent,
  args: TArgs,
  ctx: GraphqlContext,
) => TResult | Promise<TResult>;

export type IdArgs = { id: string };

/**
 * Validates a GraphQL input object with the REST body schema (same zod schema, same error paths, same
 * `invalid_request` with `details.fields`). GraphQL already dropped the fields the client omitted.
 */
export function parseInput<S extends ZodType>(schema: S, input: unknown): z.infer<S> {
  return parseBody(schema, input ?? {});
}

/**
 * Turns list arguments into the REST query-string object: omitted and null arguments are absent,
 * booleans become "true" / "false" as in a URL, so the same query schema validates both transports.
 */
export function toQueryParams(args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    if (value === null || value === undefined) continue;
    out[key] = typeof value === 'boolean' ? String(value) : value;
  }
  return out;
}

/** After a write, policies read earlier in the same operation may be stale: forget them. */
export function afterWrite<T>(ctx: GraphqlContext, value: T): T {
  ctx.loaders.policy.clearAll();
  return value;
}
