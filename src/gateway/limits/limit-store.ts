/**
 * Where limit counters live. One interface, two stores with identical semantics: in memory (one
 * instance) and Redis (shared by every instance, one atomic Lua script per call).
 *
 * A call applies a list of rules atomically: every `take` and `peek` rule is checked first, and the
 * `take` rules are applied only when ALL of them pass (all-or-nothing, so a request refused by its
 * token budget does not also spend a request). `debit` rules are always applied (after-the-fact
 * accounting, e.g. output tokens), and may drive a bucket below zero (debt that must refill first).
 * `read` rules only report (for headers) and never refuse.
 */

export type RuleMode = 'take' | 'peek' | 'debit' | 'read';

/** A token bucket: `capacity` tokens, refilled continuously at `perMinute` tokens per minute. */
export interface BucketRule {
  type: 'bucket';
  key: string;
  capacity: number;
  perMinute: number;
  /** Tokens taken (take) or debited (debit); ignored by peek, which needs at least 1 available. */
  cost: number;
  mode: RuleMode;
  /** Debited unconditionally BEFORE the rule is evaluated (deferred after-the-fact charges). */
  pre?: number;
}

/** A fixed-window counter aligned on multiples of `windowMs` since the epoch (86 400 000 ms = a UTC day). */
export interface WindowRule {
  type: 'window';
  key: string;
  limit: number;
  windowMs: number;
  cost: number;
  mode: RuleMode;
  pre?: number;
}

export type LimitRule = BucketRule | WindowRule;

export interface RuleOutcome {
  /** take: the cost fits; peek: at least 1 is available; debit and read: always true. */
  allowed: boolean;
  /** What is left after this call (floored; negative while a bucket is in debt). */
  remaining: number;
  /** Milliseconds until the limit is fully restored (bucket full again / window over). */
  resetMs: number;
  /** Milliseconds until this rule would allow the call (0 when allowed). */
  retryAfterMs: number;
}

export interface ApplyResult {
  /** Every take and peek rule allowed (and so the takes were applied). */
  allowed: boolean;
  outcomes: RuleOutcome[];
}

export type StoreKind = 'memory' | 'redis' | 'memory-fallback';

export interface LimitStore {
  apply(rules: readonly LimitRule[], now: number): Promise<ApplyResult>;
  /** Which store answers right now (health). */
  kind(): StoreKind;
  close(): Promise<void>;
}

/** The key a window rule uses for the window containing `now`. */
export function windowKey(rule: WindowRule, now: number): string {
  return `${rule.key}:${Math.floor(now / rule.windowMs)}`;
}

/** Milliseconds from `now` to the end of the rule's current window. */
export function windowRemainingMs(rule: WindowRule, now: number): number {
  return (Math.floor(now / rule.windowMs) + 1) * rule.windowMs - now;
}
