import Redis from 'ioredis';
import type { Logger } from '../../shared/logger';

export interface RedisClientOptions {
  /** Longest wait for one command before the caller falls back (limits) or reports down (health). */
  commandTimeoutMs?: number;
  /** How long startup waits for the first connection; the client keeps trying in the background. */
  startupWaitMs?: number;
}

/**
 * The one Redis client of a process (shared counters for rate limits, and the /health probe). Commands
 * never queue while disconnected (they fail at once and the limits fall back to memory); the client
 * reconnects forever with a short backoff. A connection problem is logged once per outage, not per
 * reconnect attempt.
 */
export async function connectRedis(url: string, logger: Logger, options: RedisClientOptions = {}): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs ?? 1000,
    connectTimeout: 2000,
    // Off: auto-pipelining defers every command to the next tick (+~0.03 ms each at low load).
    enableAutoPipelining: false,
    retryStrategy: (times) => Math.min(100 * times, 1000),
  });
  let reported = false;
  redis.on('error', (err: Error) => {
    if (reported) return void logger.debug({ err: err.message }, 'redis connection problem (still)');
    reported = true;
    logger.warn({ err: err.message }, 'redis connection problem');
  });
  redis.on('ready', () => {
    if (reported) logger.info('redis connected again');
    reported = false;
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    redis.connect().catch((err: Error) => logger.warn({ err: err.message }, 'redis not reachable at start: limits use the in-memory fallback until it is')),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, options.startupWaitMs ?? 3000);
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
  return redis;
}

/** Closes the client: QUIT when connected, else drop the socket and stop reconnecting. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') {
    await redis.quit().catch(() => redis.disconnect());
  } else {
    redis.disconnect();
  }
}
