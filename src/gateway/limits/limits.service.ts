import { createHash } from 'node:crypto';
import type { AppError } from '../../shared/errors';
import type { RateLimits } from '../../shared/policy';
import type { BucketRule, LimitRule, LimitStore, RuleOutcome, StoreKind, WindowRule } from './limit-store';
import { costMicroCents, MICRO_CENTS_PER_CENT, SHIPPED_PRICES, type PriceTable } from './prices';
import { limitView, rateLimited, type LimitView } from './rate-limit-error';

export type RouteClass = 'traffic' | 'management';

export interface LimitsSettings {
  /** Requests per minute per key on the traffic routes: /v1/chat/completions, /v1/detect, /v1/models and the sensor's /v1/messages(/count_tokens) and /v1/models. */
  platformTrafficRpm: number;
  /** Requests per minute per key on the management REST routes and /graphql. */
  platformManagementRpm: number;
  /** Failed authentications per minute per client address before every request from it gets 429. */
  authFailuresPerMinute: number;
}

export interface PlatformAdmission {
  view: LimitView;
  error?: AppError;
}

export interface RequestAdmission {
  platform: PlatformAdmission;
  requests: LimitView;
  tokens: LimitView;
  /** The first limit refused (platform, requests, tokens, cost), retry_after covering every refused one. */
  error?: AppError;
}

export interface PolicyUsage {
  projectId: string;
  limits: RateLimits;
  /** The model whose price applies; null when nothing is charged (/v1/detect). */
  model: string | null;
}

const MINUTE = 60_000;
const DAY = 86_400_000;
/** How long a key that authenticated stays exempt from its address's failed-authentication block. */
const KNOWN_KEY_MS = 60_000;
const KNOWN_KEYS_MAX = 10_000;
/** Output charges wait at most this long for the project's next request to carry them (then one batched call). */
const SETTLE_FLUSH_MS = 50;
const FLUSH_BATCH = 64;

/** Output tokens and cost of answers not yet written to the store, per project. */
interface PendingCharge {
  limits: RateLimits;
  tokens: number;
  microCents: number;
}

const bucket = (key: string, perMinute: number, capacity: number, cost: number, mode: BucketRule['mode']): BucketRule => ({
  type: 'bucket', key, capacity, perMinute, cost, mode,
});

/**
 * Every limit of the gateway and the sensor, on one LimitStore (memory or Redis): failed
 * authentications per address, platform requests per key, and a policy's own `rate_limits` per project.
 * Framework-free; the fastify hooks are in limit-hooks.ts. `now` is injectable (tests cross minutes
 * and UTC days without waiting).
 */
export class LimitsService {
  readonly now: () => number;
  /** Ids of keys that authenticated in the last minute (they are not guesses), with their expiry. */
  private readonly knownKeys = new Map<string, number>();
  private readonly pending = new Map<string, PendingCharge>();
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(private readonly o: { store: LimitStore; settings: LimitsSettings; now?: () => number; /** Default: the shipped table. */ prices?: PriceTable }) {
    this.now = o.now ?? Date.now;
  }

  get settings(): LimitsSettings {
    return this.o.settings;
  }

  status(): { store: StoreKind } {
    return { store: this.o.store.kind() };
  }

  /**
   * Before the key is checked: a 429 when the address reached its failed-authentication limit. A key
   * that authenticated within the last minute is not a guess and skips the check (no store call).
   */
  async checkAddress(address: string, key: string | undefined): Promise<AppError | undefined> {
    if (key && this.isKnown(key)) return undefined;
    const failures = this.o.settings.authFailuresPerMinute;
    const { outcomes } = await this.o.store.apply([bucket(`af:${address}`, failures, failures, 1, 'peek')], this.now());
    const outcome = outcomes[0]!;
    if (outcome.allowed) return undefined;
    return rateLimited({
      scope: 'auth_failures', limit: failures, window: 'minute', retryAfterMs: outcome.retryAfterMs,
      message: `Too many failed authentication attempts from this address (limit ${failures} per minute); try again later`,
    });
  }

  /** Counts one failed authentication of an address (and forgets the key if it was known). */
  async recordAuthFailure(address: string, key: string | undefined): Promise<void> {
    if (key) this.knownKeys.delete(key);
    const failures = this.o.settings.authFailuresPerMinute;
    await this.o.store.apply([bucket(`af:${address}`, failures, failures, 1, 'debit')], this.now());
  }

  recordAuthSuccess(key: string): void {
    const id = key;
    this.knownKeys.delete(id);
    if (this.knownKeys.size >= KNOWN_KEYS_MAX) {
      const oldest = this.knownKeys.keys().next().value;
      if (oldest !== undefined) this.knownKeys.delete(oldest);
    }
    this.knownKeys.set(id, this.now() + KNOWN_KEY_MS);
  }

  /** The platform limit of a key alone (management routes; traffic when the policy's limits are off). */
  async admitPlatform(routeClass: RouteClass, key: string): Promise<PlatformAdmission> {
    const rule = this.platformRule(routeClass, key);
    const { outcomes } = await this.o.store.apply([rule], this.now());
    return this.platformResult(routeClass, outcomes[0]!, outcomes[0]!.retryAfterMs);
  }

  /**
   * A traffic request under a policy's limits, in ONE atomic store call: the key's platform limit,
   * one request from the project's bucket, its input tokens from the token budget and its input cost
   * from today's spend, all or none. `inputTokens` null: the input was invalid (the request still
   * counts; the budgets are only read).
   */
  async admitRequest(usage: PolicyUsage & { key: string; inputTokens: number | null }): Promise<RequestAdmission> {
    const rl = usage.limits;
    const tokens = usage.inputTokens;
    const tooLarge = tokens !== null && tokens > rl.tokens_per_minute;
    // Output charged since this project's last call on this instance rides along (applied first).
    const owed = this.pending.get(usage.projectId);
    this.pending.delete(usage.projectId);
    const charged = tokens !== null && !tooLarge;
    const tokenRule = bucket(`tpm:${usage.projectId}`, rl.tokens_per_minute, rl.tokens_per_minute, tokens ?? 0, charged ? 'take' : 'read');
    tokenRule.pre = owed?.tokens ?? 0;
    const rules: LimitRule[] = [this.platformRule('traffic', usage.key), this.requestRule(usage.projectId, rl), tokenRule];
    const cost = this.costRule(usage, tokens ?? 0, 'input');
    // (With the cost cap switched off since, an owed cost is dropped: nothing counts it any more.)
    if (cost && (charged || owed?.microCents)) rules.push({ ...cost, mode: charged ? 'take' : 'read', pre: owed?.microCents ?? 0 });
    const { outcomes } = await this.o.store.apply(rules, this.now());
    const [platform, req, tpm, spend] = outcomes as [RuleOutcome, RuleOutcome, RuleOutcome, RuleOutcome | undefined];
    const capacity = Math.max(1, Math.floor(rl.requests_per_minute * rl.burst_multiplier));
    const retryAfterMs = Math.max(0, ...outcomes.filter((x) => !x.allowed).map((x) => x.retryAfterMs));
    const result: RequestAdmission = {
      platform: this.platformResult('traffic', platform, retryAfterMs),
      requests: limitView(capacity, req.remaining, req.resetMs),
      tokens: limitView(rl.tokens_per_minute, tpm.remaining, tpm.resetMs),
    };
    if (result.platform.error) {
      result.error = result.platform.error;
    } else if (!req.allowed) {
      result.error = rateLimited({
        scope: 'requests_per_minute', limit: rl.requests_per_minute, window: 'minute', retryAfterMs,
        message: `Rate limit exceeded: ${rl.requests_per_minute} requests per minute (burst ${capacity}) for this project`,
      });
    } else if (tooLarge) {
      result.error = rateLimited({
        scope: 'tokens_per_minute', limit: rl.tokens_per_minute, window: 'minute', retryAfterMs: MINUTE,
        message: `Request too large: ${tokens} input tokens, more than this project's tokens_per_minute (${rl.tokens_per_minute}) allows in any minute`,
      });
    } else if (tokens !== null && !tpm.allowed) {
      result.error = rateLimited({
        scope: 'tokens_per_minute', limit: rl.tokens_per_minute, window: 'minute', retryAfterMs,
        message: `Token rate limit exceeded: ${rl.tokens_per_minute} tokens per minute for this project (this request needs ${tokens})`,
      });
    } else if (spend && !spend.allowed) {
      result.error = rateLimited({
        scope: 'cost_limit_per_day_cents', limit: rl.cost_limit_per_day_cents, window: 'day', retryAfterMs: spend.retryAfterMs,
        message: `Daily spending cap reached: ${rl.cost_limit_per_day_cents} cents per UTC day for this project`,
      });
    }
    return result;
  }

  /**
   * After the response: its output tokens are owed to the token budget and their cost to today's
   * spend. The charge rides on the project's next request on this instance, or is written with every
   * other pending charge within SETTLE_FLUSH_MS (one store call), so an answer costs no extra round trip.
   */
  async settle(usage: PolicyUsage & { outputTokens: number }): Promise<void> {
    if (usage.outputTokens <= 0) return;
    const cost = this.costRule(usage, usage.outputTokens, 'output');
    this.owe(usage.projectId, { limits: usage.limits, tokens: usage.outputTokens, microCents: cost?.cost ?? 0 });
    if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => void this.flush().catch(() => undefined), SETTLE_FLUSH_MS);
      this.flushTimer.unref();
    }
  }

  /** Writes every pending output charge now (also on shutdown). */
  async flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const charges = [...this.pending];
    this.pending.clear();
    for (let i = 0; i < charges.length; i += FLUSH_BATCH) {
      const rules: LimitRule[] = [];
      for (const [projectId, c] of charges.slice(i, i + FLUSH_BATCH)) {
        const rl = c.limits;
        if (c.tokens > 0) rules.push(bucket(`tpm:${projectId}`, rl.tokens_per_minute, rl.tokens_per_minute, c.tokens, 'debit'));
        if (c.microCents > 0) {
          const cap = rl.cost_limit_per_day_cents * MICRO_CENTS_PER_CENT;
          rules.push({ type: 'window', key: `cost:${projectId}`, limit: cap, windowMs: DAY, cost: c.microCents, mode: 'debit' });
        }
      }
      if (rules.length > 0) await this.o.store.apply(rules, this.now());
    }
  }

  async close(): Promise<void> {
    await this.flush();
  }

  private owe(projectId: string, charge: PendingCharge): void {
    const prev = this.pending.get(projectId);
    this.pending.set(projectId, {
      limits: charge.limits,
      tokens: (prev?.tokens ?? 0) + charge.tokens,
      microCents: (prev?.microCents ?? 0) + charge.microCents,
    });
  }

  private isKnown(id: string): boolean {
    const until = this.knownKeys.get(id);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.knownKeys.delete(id);
    return false;
  }

  private platformRpm(routeClass: RouteClass): number {
    return routeClass === 'traffic' ? this.o.settings.platformTrafficRpm : this.o.settings.platformManagementRpm;
  }

  private platformRule(routeClass: RouteClass, key: string): BucketRule {
    const rpm = this.platformRpm(routeClass);
    return bucket(`pl:${routeClass}:${key}`, rpm, rpm, 1, 'take');
  }

  private platformResult(routeClass: RouteClass, outcome: RuleOutcome, retryAfterMs: number): PlatformAdmission {
    const rpm = this.platformRpm(routeClass);
    const result: PlatformAdmission = { view: limitView(rpm, outcome.remaining, outcome.resetMs) };
    if (!outcome.allowed) {
      result.error = rateLimited({
        scope: 'platform', limit: rpm, window: 'minute', retryAfterMs,
        message: `Rate limit exceeded: ${rpm} requests per minute per key on ${routeClass} routes`,
      });
    }
    return result;
  }

  private requestRule(projectId: string, rl: RateLimits): BucketRule {
    const capacity = Math.max(1, rl.requests_per_minute * rl.burst_multiplier);
    return bucket(`rpm:${projectId}`, rl.requests_per_minute, capacity, 1, 'take');
  }

  private costRule(usage: PolicyUsage, tokens: number, side: 'input' | 'output'): WindowRule | null {
    const cap = usage.limits.cost_limit_per_day_cents;
    if (cap <= 0 || usage.model === null) return null;
    const price = (this.o.prices ?? SHIPPED_PRICES).priceOf(usage.model);
    const cost = costMicroCents(tokens, side === 'input' ? price.inputPerMillion : price.outputPerMillion);
    return { type: 'window', key: `cost:${usage.projectId}`, limit: cap * MICRO_CENTS_PER_CENT, windowMs: DAY, cost, mode: 'take' };
  }
}

/**
 * The id a presented key is limited under (platform limits are per key; the key itself is never
 * stored or logged): a truncated SHA-256, computed once per request by the hooks.
 */
export function keyIdOf(credential: string): string {
  return createHash('sha256').update(credential, 'utf8').digest('base64url').slice(0, 22);
}
