import { countTextTokens } from './tokens';
import { compiledModulePath, serveWorkerTasks, WorkerPool } from './worker-pool';

/**
 * Input token counts for the audit event (o200k_base, exact: countTextTokens), off the request thread.
 * Counting costs about 0.3 ms per KB and 125–350 ms per MB of text on the thread that serves requests,
 * after the response but before the next request's turn; here texts of at least `minChars` UTF-16 units
 * are counted by a worker thread, smaller ones inline (posting costs more than counting them). A count
 * the worker cannot give (queue full, crash, closed pool) is made inline: the number is always the same.
 */

export interface AuditTokenCounterOptions {
  /** Worker threads; 0 counts every text inline. */
  workers: number;
  /** Texts (all of a request together) shorter than this are counted inline. */
  minChars: number;
  /** Counts waiting for a worker before further ones are made inline. Default 1024. */
  maxQueue?: number;
  /**
   * Characters of the texts held for the workers (waiting or being counted) before further texts are
   * counted inline instead. Default DEFAULT_MAX_PENDING_CHARS (services.ts passes
   * AUDIT_TOKEN_WORKER_MAX_PENDING_CHARS). Without it, requests that finish faster than their texts are
   * counted (large `/v1/detect` texts under a policy of signature detectors only) kept up to `maxQueue`
   * texts alive after their responses: 1,024 texts of 1 MB.
   */
  maxPendingChars?: number;
  /**
   * The worker holds its own tokenizer ranks (~5 MB) and V8 isolate (~20 MB of heap after a 1 MB text): it
   * is stopped after this long idle. Default: kept (services.ts passes AUDIT_TOKEN_WORKER_IDLE_MS).
   */
  idleMs?: number;
  /** The workers' nice value (Linux; WorkerPoolOptions.nice). Default 0 (services.ts passes AUDIT_TOKEN_WORKER_NICE). */
  nice?: number;
}

/** 16 texts of the largest `/v1/detect` content (1,000,000 characters): ~16–32 MB of strings. */
export const DEFAULT_MAX_PENDING_CHARS = 16_000_000;

export const TOKEN_WORKER_SOURCE = `require(${JSON.stringify(compiledModulePath(__filename))}).runTokenCountWorker();`;

function countInline(texts: readonly string[]): number {
  let n = 0;
  for (const t of texts) n += t.length === 0 ? 0 : countTextTokens(t);
  return n;
}

export class AuditTokenCounter {
  readonly pool: WorkerPool<string[], number> | undefined;
  private readonly pending = new Set<Promise<number>>();
  /** Characters of the texts in `pending`. */
  private pendingChars = 0;

  constructor(private readonly options: AuditTokenCounterOptions) {
    this.pool =
      options.workers > 0
        ? new WorkerPool<string[], number>({ name: 'token count', source: TOKEN_WORKER_SOURCE, size: options.workers, maxQueue: options.maxQueue ?? 1024, idleMs: options.idleMs, nice: options.nice })
        : undefined;
  }

  /**
   * The o200k_base token count of the texts: a number when counted inline, else a promise of it. Inline
   * (on the calling thread, after the response) when the texts are short, and when the texts already held
   * for the workers would pass maxPendingChars with these: under such a backlog the serving thread counts
   * itself, which slows its next requests instead of holding ever more texts in memory.
   */
  count(texts: readonly string[]): number | Promise<number> {
    let chars = 0;
    for (const t of texts) chars += t.length;
    if (!this.pool || chars < this.options.minChars) return countInline(texts);
    if (this.pendingChars + chars > (this.options.maxPendingChars ?? DEFAULT_MAX_PENDING_CHARS)) return countInline(texts);
    this.pendingChars += chars;
    const counted = this.pool.run([...texts]).catch(() => countInline(texts));
    this.pending.add(counted);
    void counted.finally(() => {
      this.pending.delete(counted);
      this.pendingChars -= chars;
    });
    return counted;
  }

  /** Characters of the texts held for the workers now (tests and metrics). */
  get heldChars(): number {
    return this.pendingChars;
  }

  /** Waits for the counts in progress (their events are still to be recorded), then stops the workers. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.pending]);
    await this.pool?.close();
  }
}

/** Counts every text inline (tests and tools that build apps without the service's counter). */
export const inlineTokenCounter: Pick<AuditTokenCounter, 'count'> = { count: countInline };

/** The worker thread's side (run through TOKEN_WORKER_SOURCE; not for direct use). */
export function runTokenCountWorker(): void {
  serveWorkerTasks<string[], number>(countInline);
}
