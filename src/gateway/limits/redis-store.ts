import type Redis from 'ioredis';
import type { Logger } from '../../shared/logger';
import { windowKey, windowRemainingMs, type ApplyResult, type LimitRule, type LimitStore, type RuleOutcome, type StoreKind } from './limit-store';
import { MemoryLimitStore } from './memory-store';

/**
 * The whole rule evaluation of one call, atomic in Redis. Mirrors MemoryLimitStore exactly.
 * KEYS[i]: the counter of rule i. ARGV[1]: now (ms). Then six values per rule:
 *   kind ('b' token bucket | 'w' fixed window), capacity | limit,
 *   refill per ms (bucket) | ms to the end of the window (window), cost,
 *   mode ('t' take | 'p' peek | 'd' debit | 'r' read), pre (debited before the rule is evaluated).
 * Returns {all allowed, then per rule: allowed, remaining (floored), reset ms, retry-after ms}.
 * State is one string per key ("tokens:timestamp" for a bucket, the count for a window), read with
 * one MGET and written with one SET … PX per changed key: redis.call is the cost of a script.
 */
export const LIMITS_LUA = `
local now = tonumber(ARGV[1])
local n = #KEYS
local vals = redis.call('MGET', unpack(KEYS))
local avail, stamp, ok, all = {}, {}, {}, 1
for i = 1, n do
  local o = 1 + (i - 1) * 6
  local kind, cap, p, cost, mode, pre = ARGV[o + 1], tonumber(ARGV[o + 2]), tonumber(ARGV[o + 3]), tonumber(ARGV[o + 4]), ARGV[o + 5], tonumber(ARGV[o + 6])
  local v = vals[i]
  local a
  if kind == 'b' then
    local t, last = cap, now
    if v then
      local sep = string.find(v, ':', 1, true)
      t = tonumber(string.sub(v, 1, sep - 1))
      last = tonumber(string.sub(v, sep + 1))
    end
    if now > last then t = t + (now - last) * p; last = now end
    if t > cap then t = cap end
    a = t - pre
    stamp[i] = last
  else
    a = cap - (tonumber(v) or 0) - pre
  end
  local allowed = 1
  if mode == 't' and a < cost then allowed = 0 end
  if mode == 'p' and a < 1 then allowed = 0 end
  if allowed == 0 then all = 0 end
  avail[i] = a
  ok[i] = allowed
end
local out = { all }
for i = 1, n do
  local o = 1 + (i - 1) * 6
  local kind, cap, p, cost, mode, pre = ARGV[o + 1], tonumber(ARGV[o + 2]), tonumber(ARGV[o + 3]), tonumber(ARGV[o + 4]), ARGV[o + 5], tonumber(ARGV[o + 6])
  local a = avail[i]
  local applies = mode == 'd' or (mode == 't' and all == 1)
  local writes = applies or pre ~= 0
  local after = a
  if applies then after = a - cost end
  local reset, retry = 0, 0
  if kind == 'b' then
    if after < cap then reset = math.ceil((cap - after) / p) end
    if writes then redis.call('SET', KEYS[i], string.format('%.17g:%.17g', after, stamp[i]), 'PX', reset + 1000) end
    if ok[i] == 0 then
      local need = 1
      if mode == 't' then need = cost end
      retry = math.ceil((need - a) / p)
    end
  else
    reset = p
    if writes then redis.call('SET', KEYS[i], string.format('%.17g', cap - after), 'PX', p + 60000) end
    if ok[i] == 0 then retry = p end
  end
  out[#out + 1] = ok[i]
  out[#out + 1] = math.floor(after)
  out[#out + 1] = reset
  out[#out + 1] = retry
end
return out
`;

const COMMAND = 'svcApplyLimits';
type ApplyCommand = (...args: Array<string | number>) => Promise<number[]>;

/** The Redis store: one EVALSHA per call (ioredis defineCommand; EVAL on NOSCRIPT). Throws when Redis fails. */
export class RedisLimitStore implements LimitStore {
  private readonly run: ApplyCommand;

  constructor(redis: Redis, private readonly prefix: string) {
    const commands = redis as unknown as Record<string, ApplyCommand | undefined>;
    if (!commands[COMMAND]) redis.defineCommand(COMMAND, { lua: LIMITS_LUA });
    this.run = (...args) => (redis as unknown as Record<string, ApplyCommand>)[COMMAND]!(...args);
  }

  kind(): StoreKind {
    return 'redis';
  }

  async apply(rules: readonly LimitRule[], now: number): Promise<ApplyResult> {
    if (rules.length === 0) return { allowed: true, outcomes: [] };
    const keys = rules.map((r) => this.prefix + (r.type === 'window' ? windowKey(r, now) : r.key));
    const args: Array<string | number> = [now];
    for (const r of rules) {
      if (r.type === 'bucket') args.push('b', r.capacity, r.perMinute / 60_000, r.cost, r.mode[0]!, r.pre ?? 0);
      else args.push('w', r.limit, windowRemainingMs(r, now), Math.ceil(r.cost), r.mode[0]!, Math.ceil(r.pre ?? 0));
    }
    const raw = await this.run(keys.length, ...keys, ...args);
    const outcomes: RuleOutcome[] = rules.map((_, i) => ({
      allowed: raw[1 + i * 4] === 1,
      remaining: Number(raw[2 + i * 4]),
      resetMs: Number(raw[3 + i * 4]),
      retryAfterMs: Number(raw[4 + i * 4]),
    }));
    return { allowed: raw[0] === 1, outcomes };
  }

  async close(): Promise<void> {
    /* the client is shared and closed by its owner */
  }
}

export interface ResilientStoreOptions {
  redis: Redis;
  prefix: string;
  logger: Logger;
  /** After a failure, how long calls go straight to the local fallback before Redis is tried again. */
  retryMs?: number;
}

/**
 * Redis when it answers, the local in-memory store when it does not: requests keep flowing while
 * Redis is down (each instance then enforces the limits on its own). The switch is logged once each
 * way, visible in /health (`limits.store`), and reverts by itself when the client reconnects or a
 * later call succeeds. The fallback starts empty on every outage.
 */
export class ResilientLimitStore implements LimitStore {
  private readonly remote: RedisLimitStore;
  private readonly local = new MemoryLimitStore({}, 'memory-fallback');
  private degraded = false;
  private retryAt = 0;
  private readonly retryMs: number;

  constructor(private readonly o: ResilientStoreOptions) {
    this.remote = new RedisLimitStore(o.redis, o.prefix);
    this.retryMs = o.retryMs ?? 1000;
    o.redis.on('ready', () => this.recover());
  }

  kind(): StoreKind {
    return this.degraded ? 'memory-fallback' : 'redis';
  }

  async apply(rules: readonly LimitRule[], now: number): Promise<ApplyResult> {
    const ready = this.o.redis.status === 'ready';
    if (!ready) {
      this.degrade('not connected');
      return this.local.apply(rules, now);
    }
    if (this.degraded && Date.now() < this.retryAt) return this.local.apply(rules, now);
    try {
      const result = await this.remote.apply(rules, now);
      if (this.degraded) this.recover();
      return result;
    } catch (err) {
      this.degrade(err instanceof Error ? err.message : String(err));
      return this.local.apply(rules, now);
    }
  }

  async close(): Promise<void> {
    await this.local.close();
  }

  private degrade(reason: string): void {
    this.retryAt = Date.now() + this.retryMs;
    if (this.degraded) return;
    this.degraded = true;
    this.o.logger.warn({ reason: reason.slice(0, 200) }, 'redis unavailable: rate limits now use the local in-memory fallback (per instance) until it is back');
  }

  private recover(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.local.clear();
    this.o.logger.info('redis reachable again: rate limits are shared through redis again');
  }
}
