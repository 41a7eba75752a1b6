/**
 * The console's only transport: GraphQL at /graphql with `Authorization: Bearer <key>`. The key lives in
 * memory and in sessionStorage (gone when the tab closes); it is never put in a URL.
 */

const STORAGE_KEY = 'gateway-console-key';

export type Json = Record<string, any>;

/** A field of the input that the API refused, as the GraphQL error's extensions.fields carry it. */
export interface FieldError {
  path: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly status: number,
    readonly fields: FieldError[] = [],
  ) {
    super(message);
  }
}

let key: string | null = sessionStorage.getItem(STORAGE_KEY);

export const currentKey = () => key;

export function setKey(value: string | null): void {
  key = value;
  if (value) sessionStorage.setItem(STORAGE_KEY, value);
  else sessionStorage.removeItem(STORAGE_KEY);
}

/** Runs one operation; throws ApiError with the REST envelope's or the GraphQL error's message and code. */
export async function gql<T = Json>(query: string, variables: Json = {}, withKey: string | null = key): Promise<T> {
  let res: Response;
  try {
    res = await fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(withKey ? { authorization: `Bearer ${withKey}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
  } catch {
    throw new ApiError('The gateway cannot be reached.', 'network_error', 0);
  }
  const body = (await res.json().catch(() => ({}))) as Json;
  // Authentication and scope are checked before GraphQL runs: the REST envelope {error:{message,type,code}}.
  if (body.error) throw new ApiError(body.error.message, body.error.code ?? body.error.type, res.status);
  const first = body.errors?.[0];
  if (first) {
    const ext = first.extensions ?? {};
    throw new ApiError(first.message, ext.error_code ?? ext.code ?? 'error', res.status, Array.isArray(ext.fields) ? ext.fields : []);
  }
  if (!res.ok) throw new ApiError(`HTTP ${res.status}`, 'http_error', res.status);
  return body.data as T;
}

/** What to tell a person who tried to sign in with a key the console cannot use. */
export function loginMessage(err: unknown): string {
  if (!(err instanceof ApiError)) return String(err);
  if (err.code === 'insufficient_key_scope') {
    return `This key has the traffic scope: it may send traffic (proxy, detect, sensor) but not use the management API the console needs. Sign in with a full-scope key. (${err.message})`;
  }
  if (err.status === 401) return `The key was not accepted: ${err.message}`;
  if (err.status === 429) return `Too many attempts: ${err.message}`;
  return err.message;
}
