import { inspect } from 'node:util';
import { z } from 'zod';
import { ConfigError, readJsonSettingFile } from '../../shared/config';
import { REDACTED } from '../../shared/logger';

/**
 * PROVIDERS_FILE (docs/providers.md): the gateway's named OpenAI-compatible upstreams, the routes that
 * pick them by model name, and the retry settings. Validated once at start; an invalid file is a
 * ConfigError naming the file and the field, and the process refuses to start. Credentials are never in
 * the file: a provider names the environment variable that holds its key (`api_key_env`).
 */

/** A provider's key, read from its environment variable: never serialised, inspected or logged in clear. */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toJSON(): string {
    return REDACTED;
  }
  toString(): string {
    return REDACTED;
  }
  [inspect.custom](): string {
    return REDACTED;
  }
}

/** Retry settings as the file gives them (every field optional: merged over the defaults). */
export interface RetrySettings {
  /** Further attempts at one target after a retryable failure (429, 5xx, connect error), before the next target. */
  maxRetries: number;
  /** First backoff; doubled each retry, up to maxDelayMs, with jitter. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the target is left for the next one. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetrySettings = { maxRetries: 2, initialDelayMs: 500, maxDelayMs: 8000, maxRetryAfterMs: 30_000 };

const ms = (max: number) => z.number({ error: 'must be a number of milliseconds' }).int('must be an integer').min(0, 'must be 0 or more').max(max, `must be at most ${max}`);

const retrySchema = z.strictObject({
  max_retries: z.number({ error: 'must be a number' }).int('must be an integer').min(0, 'must be 0 or more').max(10, 'must be at most 10').optional(),
  initial_delay_ms: ms(60_000).optional(),
  max_delay_ms: ms(300_000).optional(),
  max_retry_after_ms: ms(600_000).optional(),
});

const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'must be the name of an environment variable (letters, digits and _), not the key itself');
const httpUrl = z
  .string()
  .url('must be an absolute http(s) URL')
  .refine((v) => /^https?:\/\//i.test(v), 'must start with http:// or https://')
  .transform((v) => v.replace(/\/+$/, ''));
const modelName = z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters');

const common = {
  api_key_env: envName.optional(),
  /** Overrides UPSTREAM_TIMEOUT_MS for this provider. */
  timeout_ms: z.number({ error: 'must be a number of milliseconds' }).int('must be an integer').min(1, 'must be at least 1').max(3_600_000, 'must be at most 3600000').optional(),
  retry: retrySchema.optional(),
};

const openaiProvider = z.strictObject({ type: z.literal('openai'), base_url: httpUrl.default('https://api.openai.com/v1'), ...common });
const compatibleProvider = z.strictObject({ type: z.literal('openai_compatible'), base_url: httpUrl, ...common });
const azureProvider = z.strictObject({
  type: z.literal('azure'),
  /** https://{resource}.openai.azure.com */
  endpoint: httpUrl,
  ...common,
  api_key_env: envName,
  api_version: z.string().regex(/^\d{4}-\d{2}-\d{2}(-preview)?$/, 'must be an Azure OpenAI API version such as 2024-10-21 or 2025-03-01-preview'),
  /** Model name → deployment name; a model not listed uses its own name as the deployment. */
  deployments: z.record(modelName, z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'a deployment name is 1 to 64 letters, digits, . _ or -')).default({}),
});

const providerSchema = z.discriminatedUnion('type', [openaiProvider, compatibleProvider, azureProvider], {
  error: 'type must be openai, openai_compatible or azure',
});

const targetSchema = z.strictObject({ provider: z.string().min(1, 'must name a provider'), model: modelName.optional() });
const targetsSchema = z.array(targetSchema).min(1, 'must list at least one {provider, model?} target').max(10, 'at most 10 targets');
const GLOB = /^[A-Za-z0-9._:/@+*?-]{1,200}$/;
const routeSchema = z.strictObject({
  match: z.string().regex(GLOB, 'must be a model name or a glob (* any characters, ? one character) of letters, digits and . _ : / @ + -'),
  targets: targetsSchema,
  retry: retrySchema.optional(),
});

export const providersFileSchema = z
  .strictObject({
    providers: z.record(z.string(), providerSchema).refine((p) => Object.keys(p).length > 0, 'must declare at least one provider'),
    routes: z.array(routeSchema).max(1000, 'at most 1000 routes').default([]),
    /** Models no route matches, and requests without a model (GET /v1/models/{id} aside). */
    default: z.strictObject({ targets: targetsSchema, retry: retrySchema.optional() }).optional(),
    retry: retrySchema.optional(),
  })
  .superRefine((file, ctx) => {
    const known = Object.keys(file.providers);
    for (const name of known) {
      if (!NAME.test(name)) ctx.addIssue({ code: 'custom', path: ['providers', name], message: 'a provider name is 1 to 64 lower-case letters, digits, _ or - (it labels metrics and audit events)' });
    }
    const check = (targets: Array<{ provider: string }>, path: Array<string | number>) =>
      targets.forEach((t, i) => {
        if (!known.includes(t.provider)) {
          ctx.addIssue({ code: 'custom', path: [...path, 'targets', i, 'provider'], message: `unknown provider "${t.provider}" (declared: ${known.join(', ')})` });
        }
      });
    file.routes.forEach((r, i) => check(r.targets, ['routes', i]));
    if (file.default) check(file.default.targets, ['default']);
    if (file.routes.length === 0 && !file.default) ctx.addIssue({ code: 'custom', path: ['routes'], message: 'give at least one route or a default' });
  });

export type ProvidersFile = z.infer<typeof providersFileSchema>;

export interface ProviderConfig {
  name: string;
  kind: 'openai' | 'azure';
  /** openai / openai_compatible: the base URL with its /v1; azure: the resource endpoint. */
  baseUrl: string;
  apiKey?: Secret;
  /** The environment variable the key came from (shown in errors, never the value). */
  apiKeyEnv?: string;
  apiVersion?: string;
  deployments: Readonly<Record<string, string>>;
  timeoutMs?: number;
  retry: Partial<RetrySettings>;
}

export interface RouteTarget {
  provider: string;
  /** The model the provider is asked for, when it differs from the caller's (the body's `model` is rewritten). */
  model?: string;
}

export interface RouteConfig {
  /** The glob (or exact name) as written; `*` for the default route. */
  match: string;
  targets: RouteTarget[];
  retry: Partial<RetrySettings>;
}

export interface ProvidersConfig {
  providers: ReadonlyMap<string, ProviderConfig>;
  routes: RouteConfig[];
  default?: RouteConfig;
  retry: Partial<RetrySettings>;
}

const retryOf = (r: z.infer<typeof retrySchema> | undefined): Partial<RetrySettings> => {
  const out: Partial<RetrySettings> = {};
  if (r?.max_retries !== undefined) out.maxRetries = r.max_retries;
  if (r?.initial_delay_ms !== undefined) out.initialDelayMs = r.initial_delay_ms;
  if (r?.max_delay_ms !== undefined) out.maxDelayMs = r.max_delay_ms;
  if (r?.max_retry_after_ms !== undefined) out.maxRetryAfterMs = r.max_retry_after_ms;
  return out;
};

/** Keys a file might carry a secret under: refused with a message that says where the key belongs. */
const SECRET_FIELDS = ['api_key', 'apiKey', 'key', 'token', 'secret', 'password', 'authorization'];

function secretFieldIssues(raw: unknown): string[] {
  const providers = (raw as { providers?: unknown } | null)?.providers;
  if (!providers || typeof providers !== 'object') return [];
  const out: string[] = [];
  for (const [name, p] of Object.entries(providers)) {
    for (const field of SECRET_FIELDS) {
      if (p && typeof p === 'object' && field in p) {
        out.push(`providers.${name}.${field}: credentials never go in the file; put the key in an environment variable and name it in api_key_env`);
      }
    }
  }
  return out;
}

/**
 * Parses a providers file's JSON and resolves each provider's key from `env`. Throws ConfigError with
 * one line per problem, each prefixed by `where` and the field's path (never a key's value).
 */
export function parseProvidersFile(raw: unknown, env: Readonly<Record<string, string | undefined>>, where: string): ProvidersConfig {
  const secrets = secretFieldIssues(raw);
  if (secrets.length > 0) throw new ConfigError(secrets.map((s) => `${where}: ${s}`));
  const parsed = providersFileSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${where}: ${i.path.length > 0 ? `${i.path.join('.')}: ` : ''}${i.message}`));
  }
  const file = parsed.data;
  const problems: string[] = [];
  const providers = new Map<string, ProviderConfig>();
  for (const [name, p] of Object.entries(file.providers)) {
    let apiKey: Secret | undefined;
    if (p.api_key_env !== undefined) {
      const value = env[p.api_key_env];
      if (value === undefined || value.trim() === '') problems.push(`${where}: providers.${name}.api_key_env: the environment variable ${p.api_key_env} is not set`);
      else apiKey = new Secret(value.trim());
    }
    providers.set(name, {
      name,
      kind: p.type === 'azure' ? 'azure' : 'openai',
      baseUrl: p.type === 'azure' ? p.endpoint : p.base_url,
      apiKey,
      apiKeyEnv: p.api_key_env,
      apiVersion: p.type === 'azure' ? p.api_version : undefined,
      deployments: p.type === 'azure' ? p.deployments : {},
      timeoutMs: p.timeout_ms,
      retry: retryOf(p.retry),
    });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    providers,
    routes: file.routes.map((r) => ({ match: r.match, targets: r.targets, retry: retryOf(r.retry) })),
    default: file.default && { match: '*', targets: file.default.targets, retry: retryOf(file.default.retry) },
    retry: retryOf(file.retry),
  };
}

/**
 * The providers in force: none without PROVIDERS_FILE (the single OPENAI_BASE_URL upstream), else the
 * file's. A missing, unreadable or invalid file, or a key variable that is not set, is a ConfigError.
 */
export function loadProvidersFile(file: string | undefined, env: Readonly<Record<string, string | undefined>>): ProvidersConfig | undefined {
  if (!file) return undefined;
  return parseProvidersFile(readJsonSettingFile('PROVIDERS_FILE', file), env, `PROVIDERS_FILE ${file}`);
}
