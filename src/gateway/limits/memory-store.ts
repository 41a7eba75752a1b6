import { windowKey, windowRemainingMs, type ApplyResult, type LimitRule, type LimitStore, type RuleOutcome, type StoreKind } from './limit-store';

interface BucketState {
  tokens: number;
  ts: number;
  expiresAt: number;
}
interface WindowState {
  count: number;
  expiresAt: number;
}

interface Pending {
  rule: LimitRule;
  key: string;
  available: number;
  allowed: boolean;
  /** Timestamp the refilled bucket state is valid at (never moves backwards). */
  ts: number;
}

export interface MemoryStoreOptions {
  /** Entries kept at most (oldest dropped first); a dropped bucket reads as full, a dropped window as empty. */
  maxEntries?: number;
  sweepIntervalMs?: number;
}

/**
 * The in-memory store: exact for one instance, and the local fallback while Redis is unreachable.
 * Same algorithm, step for step, as the Lua script of the Redis store (see redis-store.ts).
 */
export class MemoryLimitStore implements LimitStore {
  private readonly buckets = new Map<string, BucketState>();
  private readonly windows = new Map<string, WindowState>();
  private readonly maxEntries: number;
  private readonly sweeper: NodeJS.Timeout;
  /** The latest time a call was made at (the callers' clock, which tests move): what sweeping compares to. */
  private latest = 0;

  constructor(options: MemoryStoreOptions = {}, private readonly label: StoreKind = 'memory') {
    this.maxEntries = options.maxEntries ?? 200_000;
    this.sweeper = setInterval(() => this.sweep(this.latest), options.sweepIntervalMs ?? 60_000);
    this.sweeper.unref();
  }

  kind(): StoreKind {
    return this.label;
  }

  async apply(rules: readonly LimitRule[], now: number): Promise<ApplyResult> {
    return this.applySync(rules, now);
  }

  applySync(rules: readonly LimitRule[], now: number): ApplyResult {
    this.latest = Math.max(this.latest, now);
    const pending = rules.map((rule) => this.read(rule, now));
    const allowed = pending.every((p) => p.allowed);
    const outcomes = pending.map((p) => this.write(p, now, allowed));
    return { allowed, outcomes };
  }

  /** Drops every counter (used when Redis comes back: the next outage starts from a clean fallback). */
  clear(): void {
    this.buckets.clear();
    this.windows.clear();
  }

  get size(): number {
    return this.buckets.size + this.windows.size;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }

  sweep(now: number): void {
    for (const [k, v] of this.buckets) if (v.expiresAt <= now) this.buckets.delete(k);
    for (const [k, v] of this.windows) if (v.expiresAt <= now) this.windows.delete(k);
  }

  private read(rule: LimitRule, now: number): Pending {
    if (rule.type === 'bucket') {
      const perMs = rule.perMinute / 60_000;
      const state = this.buckets.get(rule.key);
      let tokens = state && state.expiresAt > now ? state.tokens : rule.capacity;
      let ts = state && state.expiresAt > now ? state.ts : now;
      if (now > ts) {
        tokens += (now - ts) * perMs;
        ts = now;
      }
      const available = Math.min(rule.capacity, tokens) - (rule.pre ?? 0);
      return { rule, key: rule.key, available, ts, allowed: admits(rule.mode, available, rule.cost) };
    }
    const key = windowKey(rule, now);
    const state = this.windows.get(key);
    const count = state && state.expiresAt > now ? state.count : 0;
    const available = rule.limit - count - (rule.pre ?? 0);
    return { rule, key, available, ts: now, allowed: admits(rule.mode, available, rule.cost) };
  }

  private write(p: Pending, now: number, allAllowed: boolean): RuleOutcome {
    const { rule } = p;
    const applies = rule.mode === 'debit' || (rule.mode === 'take' && allAllowed);
    const after = applies ? p.available - rule.cost : p.available;
    const writes = applies || (rule.pre ?? 0) !== 0;
    if (rule.type === 'bucket') {
      const perMs = rule.perMinute / 60_000;
      const toFull = after >= rule.capacity ? 0 : Math.ceil((rule.capacity - after) / perMs);
      if (writes) this.remember(this.buckets, p.key, { tokens: after, ts: p.ts, expiresAt: now + toFull + 1000 });
      const need = rule.mode === 'take' ? rule.cost : 1;
      return {
        allowed: p.allowed,
        remaining: Math.floor(after),
        resetMs: toFull,
        retryAfterMs: p.allowed ? 0 : Math.ceil((need - p.available) / perMs),
      };
    }
    const left = windowRemainingMs(rule, now);
    if (writes) this.remember(this.windows, p.key, { count: rule.limit - after, expiresAt: now + left });
    return { allowed: p.allowed, remaining: Math.floor(after), resetMs: left, retryAfterMs: p.allowed ? 0 : left };
  }

  private remember<T>(map: Map<string, T>, key: string, value: T): void {
    if (!map.has(key) && this.size >= this.maxEntries) {
      const oldest = map.keys().next().value;
      if (oldest !== undefined) map.delete(oldest);
    }
    map.set(key, value);
  }
}

function admits(mode: LimitRule['mode'], available: number, cost: number): boolean {
  if (mode === 'take') return available >= cost;
  if (mode === 'peek') return available >= 1;
  return true;
}
