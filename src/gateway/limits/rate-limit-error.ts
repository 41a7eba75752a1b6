import type { FastifyReply } from 'fastify';
import { AppError } from '../../shared/errors';

/** Which limit answered: a policy field, the platform limit, or the failed-authentication limit. */
export type LimitScope = 'requests_per_minute' | 'tokens_per_minute' | 'cost_limit_per_day_cents' | 'platform' | 'auth_failures';

/** What the X-RateLimit-* / X-TokenLimit-* headers show for one limit. */
export interface LimitView {
  limit: number;
  /** Never negative (a bucket in debt shows 0). */
  remaining: number;
  /** Seconds until the limit is fully restored (a full bucket / a new window). */
  resetSeconds: number;
}

export const toSeconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000));

export function limitView(limit: number, remaining: number, resetMs: number): LimitView {
  return { limit: Math.floor(limit), remaining: Math.max(0, Math.min(Math.floor(limit), remaining)), resetSeconds: toSeconds(resetMs) };
}

/** The stricter of two request limits for the headers: the one with fewer requests left. */
export function stricter(a: LimitView | undefined, b: LimitView | undefined): LimitView | undefined {
  if (!a) return b;
  if (!b) return a;
  return b.remaining < a.remaining || (b.remaining === a.remaining && b.resetSeconds > a.resetSeconds) ? b : a;
}

export function setRequestLimitHeaders(reply: FastifyReply, view: LimitView): void {
  void reply.header('x-ratelimit-limit', String(view.limit));
  void reply.header('x-ratelimit-remaining', String(view.remaining));
  void reply.header('x-ratelimit-reset', String(view.resetSeconds));
}

export function setTokenLimitHeaders(reply: FastifyReply, view: LimitView): void {
  void reply.header('x-tokenlimit-limit', String(view.limit));
  void reply.header('x-tokenlimit-remaining', String(view.remaining));
  void reply.header('x-tokenlimit-reset', String(view.resetSeconds));
}

/**
 * The spec's 429: type rate_limit, code rate_limit_exceeded, details {limit, window, retry_after}
 * (+ scope: which limit). The error handler turns details.retry_after into the Retry-After header.
 */
export function rateLimited(o: { scope: LimitScope; limit: number; window: 'minute' | 'day'; retryAfterMs: number; message: string }): AppError {
  return new AppError('rate_limit', o.message, {
    code: 'rate_limit_exceeded',
    details: { limit: Math.floor(o.limit), window: o.window, retry_after: Math.max(1, toSeconds(o.retryAfterMs)), scope: o.scope },
  });
}
