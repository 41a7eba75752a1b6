import { provisionOrganization, type ProvisionResult } from '../../src/storage/provision';
import type { TestServices } from './services';

export type Json = Record<string, any>;

export interface GqlResponse {
  status: number;
  json: Json;
  headers: Headers;
}

/** Posts one GraphQL operation to the gateway with `Authorization: Bearer <key>` (no header when key is null). */
export async function gqlRequest(
  base: string,
  key: string | null,
  query: string,
  variables?: Record<string, unknown>,
  extraHeaders: Record<string, string> = {},
): Promise<GqlResponse> {
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === null ? {} : { authorization: `Bearer ${key}` }), ...extraHeaders },
    body: JSON.stringify({ query, variables }),
  });
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : {}) as Json, headers: res.headers };
}

/** A GraphQL client bound to one key; `data` throws when the response carries errors. */
export function gqlClient(base: string, key: string) {
  const raw = (query: string, variables?: Record<string, unknown>) => gqlRequest(base, key, query, variables);
  return {
    raw,
    async data(query: string, variables?: Record<string, unknown>): Promise<Json> {
      const res = await raw(query, variables);
      if (res.status !== 200 || res.json.errors) throw new Error(`GraphQL failed (${res.status}): ${JSON.stringify(res.json)}`);
      return res.json.data as Json;
    },
    /** The first error of a response that must fail. */
    async error(query: string, variables?: Record<string, unknown>): Promise<Json> {
      const res = await raw(query, variables);
      if (!res.json.errors?.[0]) throw new Error(`expected an error, got ${JSON.stringify(res.json)}`);
      return res.json.errors[0] as Json;
    },
  };
}

/** A REST client bound to one key. */
export function restClient(base: string, key: string) {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: (text ? JSON.parse(text) : undefined) as Json };
  };
  return {
    get: (p: string) => call('GET', p),
    post: (p: string, b?: unknown) => call('POST', p, b),
    patch: (p: string, b: unknown) => call('PATCH', p, b),
    del: (p: string) => call('DELETE', p),
  };
}

/** A brand-new organization (default policy + first project) in the services' database, with its raw key. */
export function newOrganization(svc: TestServices, name: string, projectName = 'first'): Promise<ProvisionResult> {
  return svc.running.storage!.dataSource.transaction((m) =>
    provisionOrganization(m, { organizationName: name, projectName, environment: 'production' }),
  );
}

/** Every field of a policy, as a GraphQL selection. */
export const POLICY_SELECTION = `
  id name policy_mode is_default
  input_detectors { detector_type threshold action }
  output_detectors { detector_type threshold action }
  allow_list { entries match_type }
  deny_list { entries match_type }
  custom_detectors { name pattern action }
  pii_regions unscannable effective_unscannable
  rate_limits {
    rate_limits_enabled requests_per_minute tokens_per_minute max_input_tokens max_input_characters
    max_output_tokens burst_multiplier cost_limit_per_day_cents
  }
  created_at updated_at`;

/** Every REST field of a project, as a GraphQL selection. */
export const PROJECT_SELECTION = `
  id name key_prefix environment policy_id policy_name uses_default_policy key_scope is_active created_at last_used_at`;
