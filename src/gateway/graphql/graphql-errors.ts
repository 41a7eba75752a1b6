import type { ApolloServerPlugin } from '@apollo/server';
import { ApolloServerErrorCode, ApolloServerValidationErrorCode, unwrapResolverError } from '@apollo/server/errors';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { type AppError, isAppError, storageUnavailable } from '../../shared/errors';
import { isStorageUnavailable } from '../../storage/storage-errors';
import type { GraphqlContext } from './graphql-context';

/**
 * The GraphQL edge of the one error model: every error a client sees carries `extensions.code` from
 * the same closed set as the REST envelope's `type` (invalid_request, not_found, permission_denied,
 * ...), `extensions.error_code` (the REST `code`), and for validation errors `extensions.fields`
 * ([{path, message}], paths relative to the input object exactly as in a REST body). Anything
 * unexpected is masked as internal_error and logged with the request id.
 */

/** Codes Apollo / graphql-js / graphql-armor give a bad request (syntax, validation, variables, limits). */
const CLIENT_ERROR_CODES = new Set<string>([
  ApolloServerErrorCode.GRAPHQL_PARSE_FAILED,
  ApolloServerErrorCode.GRAPHQL_VALIDATION_FAILED,
  ApolloServerErrorCode.BAD_USER_INPUT,
  ApolloServerErrorCode.PERSISTED_QUERY_NOT_FOUND,
  ApolloServerErrorCode.PERSISTED_QUERY_NOT_SUPPORTED,
  ApolloServerErrorCode.OPERATION_RESOLUTION_FAILURE,
  ApolloServerErrorCode.BAD_REQUEST,
  ApolloServerValidationErrorCode.INTROSPECTION_DISABLED,
]);

export const MASKED_MESSAGE = 'Internal server error';

type Kind = { kind: 'app'; error: AppError } | { kind: 'client'; code: string } | { kind: 'unexpected' };

/**
 * What an error is: one of ours (AppError), a GraphQL-level rejection of the request, or anything else
 * (a bug or an infrastructure failure), which must not reach the client.
 */
function classify(error: unknown, code: unknown): Kind {
  const original = unwrapResolverError(error);
  if (isAppError(original)) {
    return original.status < 500 || original.type === 'service_unavailable' ? { kind: 'app', error: original } : { kind: 'unexpected' };
  }
  // The database is unreachable or stalled: the same 503 storage_unavailable as on REST.
  if (!(original instanceof GraphQLError) && isStorageUnavailable(original)) {
    return { kind: 'app', error: storageUnavailable(original) };
  }
  // A resolver threw something that is not a GraphQLError (graphql-js wraps it, keeping originalError).
  if (original instanceof Error && !(original instanceof GraphQLError)) return { kind: 'unexpected' };
  if (typeof code === 'string' && CLIENT_ERROR_CODES.has(code)) return { kind: 'client', code };
  return { kind: 'unexpected' };
}

/** Apollo's `formatError`: maps to the closed code set and masks everything unexpected. */
export function formatGraphqlError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const where = { locations: formatted.locations, path: formatted.path };
  const k = classify(error, formatted.extensions?.code);
  switch (k.kind) {
    case 'app': {
      const { fields, ...rest } = k.error.details ?? {};
      const extensions: Record<string, unknown> = { code: k.error.type, error_code: k.error.code };
      if (Array.isArray(fields)) extensions.fields = fields;
      if (Object.keys(rest).length > 0) extensions.details = rest;
      return { message: k.error.message, ...where, extensions };
    }
    case 'client':
      return { message: formatted.message, ...where, extensions: { code: 'invalid_request', error_code: k.code.toLowerCase() } };
    default:
      return { message: MASKED_MESSAGE, ...where, extensions: { code: 'internal_error', error_code: 'internal_error' } };
  }
}

/** Logs the errors that are masked for the client, with the request's logger (so with its request id). */
export function errorLoggingPlugin(): ApolloServerPlugin<GraphqlContext> {
  return {
    async requestDidStart() {
      return {
        async didEncounterErrors({ errors, contextValue, operationName }) {
          for (const error of errors) {
            const k = classify(error, error.extensions?.code);
            if (k.kind === 'app' && k.error.type === 'service_unavailable') {
              contextValue.log.warn({ errorCode: k.error.code, path: error.path, operationName }, 'graphql operation failed: dependency unavailable');
            }
            if (k.kind !== 'unexpected') continue;
            const original = unwrapResolverError(error);
            contextValue.log.error(
              { err: original instanceof Error ? original : error, path: error.path, operationName },
              'graphql operation failed',
            );
          }
        },
        // A storage outage answers 503 with Retry-After, as REST does (the body keeps GraphQL's shape).
        async willSendResponse({ response }) {
          if (response.body.kind !== 'single') return;
          const unavailable = response.body.singleResult.errors?.find((e) => e.extensions?.code === 'service_unavailable');
          if (!unavailable) return;
          response.http.status = 503;
          const retryAfter = (unavailable.extensions?.details as { retry_after?: unknown } | undefined)?.retry_after;
          if (typeof retryAfter === 'number') response.http.headers.set('retry-after', String(retryAfter));
        },
      };
    },
  };
}
