import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Gives a thread's heap back once a burst is over. After a burst (1,024 concurrent streams, 1 MB texts)
 * V8 keeps every page its heap grew to: the garbage is not collected while the thread allocates
 * nothing, and V8's own memory reducer did not run within 15 s of idleness here. Measured after
 * `npm run bench:perf`, one full collection per thread took the process from ~600 MB to ~350 MB
 * (bench/RESULTS.md, issue 17).
 *
 * Each thread that serves bursts (the main thread, the detection thread, the classifier workers) checks
 * every RECLAIM_CHECK_MS (or `idleMs` when shorter): when its event loop has been (almost) idle for at
 * least `idleMs` without a break and its heap grew by at least `minGrowthBytes` since the last collection
 * this made (or since start), it runs one full collection. A busy thread is never interrupted; an idle one pays one collection (tens of ms) per
 * burst. MEMORY_RECLAIM_IDLE_MS sets `idleMs` (0 turns it off).
 *
 * Why the default is a long quiet period (30 s), not a short lull: after a forced full collection V8 sets
 * the next one close above what is live (~1.2–1.35× here) and keeps growing the heap slowly, so traffic
 * that resumes runs with frequent mark-compacts (every ~0.9 s at concurrency 1, 5–9 ms pauses, marking
 * threads busy) until the heap has grown back. With a 2 s idle time, a 5 s lull followed by sequential
 * chat completions cost +2.0–2.3 ms added p50 and +8.0–10.4 ms added p99, against +1.5–1.9 / +5.4–5.9 ms
 * without the collection (4 alternated runs each, 2026-11-28, bench/RESULTS.md).
 */

export interface IdleReclaimOptions {
  /** Length of the idle interval that triggers a collection (ms, > 0). */
  idleMs: number;
  /** Heap growth (committed bytes) since the last collection below which nothing is done. Default 32 MB. */
  minGrowthBytes?: number;
  /** Event-loop utilisation over the interval below which the thread counts as idle. Default 0.05. */
  maxUtilization?: number;
  /** Heap size and collection (tests); default this isolate's. */
  heapBytes?: () => number;
  collect?: () => void;
  /** Clock in ms, and the event loop's utilisation since the previous call (tests); default this thread's. */
  now?: () => number;
  utilization?: () => number;
}

/** How often the thread looks (ms): quiet time is counted in steps of at most this, so a collection comes idleMs to idleMs + this after a burst ends. */
export const RECLAIM_CHECK_MS = 5000;

export interface IdleReclaim {
  /** Collections made so far. */
  readonly collections: number;
  /** One check now (the timer calls it every idleMs). */
  check(): void;
  stop(): void;
}

let fullGc: (() => void) | undefined;

/**
 * This isolate's full collection: the `gc` function V8 gives a context created while `--expose-gc` is
 * set (the flag is set only for that moment, as the embedded database's thread does with its own).
 */
export function fullCollection(): () => void {
  if (fullGc) return fullGc;
  const global = globalThis as { gc?: () => void };
  if (typeof global.gc === 'function') return (fullGc = global.gc);
  v8.setFlagsFromString('--expose-gc');
  try {
    fullGc = runInNewContext('gc') as () => void;
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
  return fullGc;
}

const committedHeap = () => v8.getHeapStatistics().total_heap_size;

export function startIdleReclaim(options: IdleReclaimOptions): IdleReclaim {
  if (!(options.idleMs > 0)) throw new Error('idle reclaim needs idleMs > 0');
  const heapBytes = options.heapBytes ?? committedHeap;
  const collect = options.collect ?? fullCollection();
  const minGrowth = options.minGrowthBytes ?? 32 * 1024 * 1024;
  const maxUtilization = options.maxUtilization ?? 0.05;
  const clock = options.now ?? (() => performance.now());
  let last = performance.eventLoopUtilization();
  const utilization =
    options.utilization ??
    (() => {
      const now = performance.eventLoopUtilization();
      const busy = performance.eventLoopUtilization(now, last).utilization;
      last = now;
      return busy;
    });
  let baseline = heapBytes();
  let lastAt = clock();
  // Time the event loop has been idle without a break, over whole check intervals.
  let quietMs = 0;
  let collections = 0;
  const check = () => {
    const busy = utilization();
    const at = clock();
    quietMs = busy > maxUtilization ? 0 : quietMs + (at - lastAt);
    lastAt = at;
    const heap = heapBytes();
    // V8's own collections may have shrunk the heap meanwhile: growth counts from the lowest point.
    if (heap < baseline) baseline = heap;
    if (quietMs < options.idleMs || heap - baseline < minGrowth) return;
    // Two: the first frees the garbage (its pages are swept meanwhile), the second releases the pages
    // left empty — one alone left the committed heap where it was.
    collect();
    collect();
    collections++;
    baseline = heapBytes();
  };
  // Checked more often than idleMs (a 30 s idle time with a 30 s timer collected 30–60 s after a burst).
  const timer = setInterval(check, Math.min(options.idleMs, RECLAIM_CHECK_MS));
  timer.unref();
  return {
    get collections() {
      return collections;
    },
    check,
    stop: () => clearInterval(timer),
  };
}
