import { hashApiKey, hashesEqual, isWellFormedApiKey } from '../../shared/api-key';
import { unauthenticated } from '../../shared/errors';
import type { CustomDetector, DetectionPolicy, DetectorEntry, MatchList, PolicyMode, RateLimits, Unscannable } from '../../shared/policy';
import { DEFAULT_RATE_LIMITS, effectiveUnscannable } from '../../shared/policy';
import type { Storage } from '../../storage/data-source';
import type { KeyScope } from '../../storage/entities/project.entity';

/** Who is calling, and the policy that applies to them right now. */
export interface AuthContext {
  organizationId: string;
  projectId: string;
  projectName: string;
  keyPrefix: string;
  /** What the key may do (`traffic`: no management routes). Cached with the rest, invalidated with it. */
  keyScope: KeyScope;
  policy: {
    id: string;
    name: string;
    /** The project had no policy assigned: this is the organization default. */
    inherited: boolean;
    detection: DetectionPolicy;
    rateLimits: RateLimits;
    /** What happens to request content no detector can read (effectiveUnscannable of the stored policy). */
    unscannable: Unscannable;
  };
}

interface Row {
  project_id: string;
  organization_id: string;
  project_name: string;
  key_hash: string;
  key_prefix: string;
  key_scope: KeyScope;
  is_active: boolean;
  assigned_policy_id: string | null;
  policy_id: string | null;
  policy_name: string | null;
  policy_mode: PolicyMode | null;
  input_detectors: DetectorEntry[] | null;
  output_detectors: DetectorEntry[] | null;
  allow_list: MatchList | null;
  deny_list: MatchList | null;
  custom_detectors: CustomDetector[] | null;
  pii_regions: string[] | null;
  unscannable: Unscannable | null;
  rate_limits: Partial<RateLimits> | null;
  policy_updated_at: Date | string | null;
}

// The assigned policy, or the organization default when none is assigned (spec, "What the service does" 4).
const LOOKUP_SQL = `
  SELECT p.id AS project_id, p.organization_id, p.name AS project_name, p.key_hash, p.key_prefix, p.key_scope, p.is_active,
         p.policy_id AS assigned_policy_id,
         pol.id AS policy_id, pol.name AS policy_name, pol.policy_mode, pol.input_detectors, pol.output_detectors,
         pol.allow_list, pol.deny_list, pol.custom_detectors, pol.pii_regions, pol.unscannable, pol.rate_limits, pol.updated_at AS policy_updated_at
    FROM projects p
    LEFT JOIN policies pol
      ON pol.organization_id = p.organization_id
     AND ((p.policy_id IS NOT NULL AND pol.id = p.policy_id) OR (p.policy_id IS NULL AND pol.is_default))
   WHERE p.key_hash = $1`;

export interface ProjectAuthOptions {
  /** How long a resolved key stays cached. Changes made through the management API invalidate at once. */
  ttlMs?: number;
  maxEntries?: number;
  /** How often coalesced last_used_at updates are written. */
  usageFlushMs?: number;
  now?: () => number;
}

type Cached = { ctx: AuthContext | null; expiresAt: number };

/**
 * Resolves an API key to its project and effective policy. Lookups are cached by key hash (bounded,
 * TTL, concurrent misses for one key share one query); inactive and unknown keys are never cached as
 * valid. `last_used_at` is recorded in memory and written in one UPDATE per flush interval.
 */
export class ProjectAuthService {
  private readonly cache = new Map<string, Cached>();
  private readonly inflight = new Map<string, Promise<AuthContext | null>>();
  private readonly used = new Set<string>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private flushTimer: NodeJS.Timeout | undefined;
  /** Bumped by every invalidation: a lookup that started before it must not cache what it read. */
  private generation = 0;

  constructor(private readonly storage: Storage, options: ProjectAuthOptions = {}) {
    this.ttlMs = options.ttlMs ?? 5_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.now = options.now ?? Date.now;
    const flushMs = options.usageFlushMs ?? 15_000;
    this.flushTimer = setInterval(() => void this.flushUsage().catch(() => undefined), flushMs);
    this.flushTimer.unref();
  }

  /** Authenticates a raw key; throws 401 authentication_error for missing, malformed, unknown or inactive keys. */
  async authenticate(rawKey: string | undefined): Promise<AuthContext> {
    if (!rawKey) throw unauthenticated('Missing API key', 'missing_api_key');
    if (!isWellFormedApiKey(rawKey)) throw unauthenticated('Malformed API key: expected svc_sk_ followed by 32+ letters or digits', 'malformed_api_key');
    const hash = hashApiKey(rawKey);
    const ctx = await this.lookup(hash);
    if (!ctx) throw unauthenticated('Invalid API key', 'invalid_api_key');
    this.used.add(ctx.projectId);
    return ctx;
  }

  /** Drops every cached resolution (e.g. after the change listener reconnects). */
  invalidateAll(): void {
    this.generation += 1;
    this.cache.clear();
    this.inflight.clear();
  }

  /** Drops the cached resolutions of one organization (after any change to its projects or policies). */
  invalidateOrganization(organizationId: string): void {
    this.generation += 1;
    for (const [hash, entry] of this.cache) {
      if (entry.ctx?.organizationId === organizationId) this.cache.delete(hash);
    }
    this.inflight.clear();
  }

  async flushUsage(): Promise<void> {
    if (this.used.size === 0) return;
    const ids = [...this.used];
    this.used.clear();
    await this.storage.query('UPDATE projects SET last_used_at = now() WHERE id = ANY($1::uuid[])', [ids]);
  }

  async close(): Promise<void> {
    if (this.flushTimer) clearInterval(this.flushTimer);
    this.flushTimer = undefined;
    await this.flushUsage();
  }

  private async lookup(hash: string): Promise<AuthContext | null> {
    const hit = this.cache.get(hash);
    if (hit && hit.expiresAt > this.now()) return hit.ctx;
    const pending = this.inflight.get(hash);
    if (pending) return pending;
    const query = this.load(hash).finally(() => {
      if (this.inflight.get(hash) === query) this.inflight.delete(hash);
    });
    this.inflight.set(hash, query);
    return query;
  }

  private async load(hash: string): Promise<AuthContext | null> {
    const generation = this.generation;
    const [row] = await this.storage.query<Row>(LOOKUP_SQL, [hash]);
    // Defence in depth: the index lookup found the row; confirm the hash in constant time.
    const valid = row !== undefined && row.is_active && row.policy_id !== null && hashesEqual(hash, row.key_hash);
    const ctx = valid ? toContext(row) : null;
    if (ctx && generation === this.generation) this.remember(hash, ctx);
    return ctx;
  }

  private remember(hash: string, ctx: AuthContext): void {
    if (this.cache.size >= this.maxEntries) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    this.cache.set(hash, { ctx, expiresAt: this.now() + this.ttlMs });
  }
}

/** A stored policy's fields (as a row or as the API's PolicyView) → what detection evaluates a text with. */
export function detectionPolicyOf(p: {
  id: string;
  /** ISO 8601: with the id, the cache key of the compiled policy. */
  updated_at: string;
  policy_mode: PolicyMode;
  input_detectors: DetectorEntry[] | null;
  output_detectors: DetectorEntry[] | null;
  allow_list: MatchList | null;
  deny_list: MatchList | null;
  custom_detectors: CustomDetector[] | null;
  pii_regions: string[] | null;
}): DetectionPolicy {
  return {
    cacheKey: `${p.id}:${p.updated_at}`,
    policyMode: p.policy_mode,
    inputDetectors: p.input_detectors ?? [],
    outputDetectors: p.output_detectors ?? [],
    allowList: p.allow_list ?? { entries: [], match_type: 'contains' },
    denyList: p.deny_list ?? { entries: [], match_type: 'contains' },
    customDetectors: p.custom_detectors ?? [],
    ...(p.pii_regions && p.pii_regions.length > 0 ? { piiRegions: p.pii_regions } : {}),
  };
}

function toContext(row: Row): AuthContext {
  // Not `instanceof Date`: rows of the embedded database's worker thread carry Dates of the main realm,
  // which under jest's vm contexts are another realm's (new Date(date) reads the time value of either).
  const at = row.policy_updated_at;
  const updated = at !== null && typeof at === 'object' ? new Date(at).toISOString() : String(at);
  return {
    organizationId: row.organization_id,
    projectId: row.project_id,
    projectName: row.project_name,
    keyPrefix: row.key_prefix,
    keyScope: row.key_scope === 'traffic' ? 'traffic' : 'full',
    policy: {
      id: row.policy_id!,
      name: row.policy_name!,
      inherited: row.assigned_policy_id === null,
      detection: detectionPolicyOf({
        id: row.policy_id!,
        updated_at: updated,
        policy_mode: row.policy_mode!,
        input_detectors: row.input_detectors,
        output_detectors: row.output_detectors,
        allow_list: row.allow_list,
        deny_list: row.deny_list,
        custom_detectors: row.custom_detectors,
        pii_regions: row.pii_regions,
      }),
      rateLimits: { ...DEFAULT_RATE_LIMITS, ...(row.rate_limits ?? {}) },
      unscannable: effectiveUnscannable({
        unscannable: row.unscannable,
        inputDetectors: row.input_detectors ?? [],
        outputDetectors: row.output_detectors ?? [],
        customDetectors: row.custom_detectors ?? [],
      }),
    },
  };
}
