import { attachScoreSignals, scoreSignalOf, CLASSIFIER_TYPES, type ClassifierBackend, type ClassifierScores, type ClassifierType } from '../backend';
import { compiledModulePath, serveWorkerTasks, WorkerPool } from '../../../shared/worker-pool';
import { createBuiltinBackend, loadBuiltinModel } from './builtin-backend';
import { availableParallelism, loadavg } from 'node:os';

/**
 * The builtin backend with a worker pool for large texts. A 1 MB text is ~580 windows of ~1 ms of CPU
 * each: scored on the detection thread they hold its event loop for half a second (every other request
 * waits) and leave the machine's spare cores idle. With the pool, a batch of at least `minWindows` new
 * windows (router → shared calls → classifyMany) is cut into chunks scored by worker threads, while the
 * detection thread runs the signature detectors and serves other requests; smaller batches stay inline
 * (posting to a worker costs more than scoring a few windows).
 *
 * Scores are identical: the workers run the same committed model (`scoreWindow`), and the heuristic
 * signal that decided a score crosses the thread boundary with it.
 *
 * Failure semantics are the backend's as before: a chunk whose worker crashes rejects the windows it
 * held, the classifier detectors waiting on them report `error` and the request's fail mode applies; the
 * pool replaces the worker for the next chunk. A window no longer awaited (the detectors hit their
 * deadline) is dropped before it is posted. A full queue (`maxQueue` chunks' worth of windows waiting)
 * scores further windows inline, as without a pool.
 *
 * With `inlineSlice` > 0 the detection thread scores windows of the queue too, a few per turn of its
 * event loop, so a 1 MB text uses every core (on 2 cores: one worker and the detection thread) instead of
 * leaving the detection thread idle once its signature detectors are done; only while the machine has a
 * core to spare (`spareCore`: the other processes' load leaves a core besides the workers).
 */

/** The pool always scores with the committed model (what the workers load). */
export interface BuiltinPoolOptions {
  /** Worker threads (≥ 1). */
  size: number;
  /** Batches with fewer new windows are scored inline. Default DEFAULT_POOL_MIN_WINDOWS. */
  minWindows?: number;
  /** Chunks waiting for a worker before further chunks are scored inline. Default 256. */
  maxQueue?: number;
  /**
   * Windows the calling (detection) thread scores itself per turn of its event loop while windows wait
   * for a worker: it takes them from the end of the queue, the workers from the front, so a large text is
   * scored on every core. 0 = the calling thread never helps. Default 0 (install.ts passes the
   * deployment's CLASSIFIER_INLINE_SLICE).
   */
  inlineSlice?: number;
  /**
   * Whether the machine has a core to spare for the calling thread's help, asked before each turn.
   * Default: othersLeaveACore for this pool's workers (with another process holding a core, a third
   * compute-bound thread made a 1 MB scan slower, not faster: bench/RESULTS.md).
   */
  spareCore?: () => boolean;
  /** Worker source (tests wrap the default one); default WORKER_SOURCE. */
  workerSource?: string;
  /**
   * A worker idle this long is stopped (its V8 isolate, ~20 MB of heap and ~15–20 MB more of resident
   * memory, released); the next large text starts one again (~140 ms of CPU on this machine, while the
   * detection thread helps). Default: kept (install.ts passes CLASSIFIER_WORKER_IDLE_MS).
   */
  idleMs?: number;
  /** The workers' nice value (Linux; WorkerPoolOptions.nice). Default 0 (install.ts passes CLASSIFIER_WORKER_NICE). */
  nice?: number;
}

export const DEFAULT_POOL_MIN_WINDOWS = 8;

/** The kernel's 1-minute load average: sampled every 5 s, each sample weighted 1 − e^(−5/60). */
const LOAD_SAMPLE_MS = 5_000;
const LOAD_DECAY = Math.exp(-LOAD_SAMPLE_MS / 60_000);

/**
 * This process's own share of the 1-minute load average, estimated from its CPU time (every thread): the
 * cores it kept busy on average over each 5-second period, averaged over periods as the kernel averages
 * the load. The load average counts this process's running threads too, so "load below the core count"
 * alone stopped the detection thread helping on an otherwise idle machine once a minute or so of
 * back-to-back 1 MB scans (or the service's own earlier traffic) had brought it there: the worker and
 * the helping thread themselves make 2 on 2 cores.
 */
export class OwnLoad {
  private at: number;
  private cpu: number;
  private value = 0;

  constructor(
    private readonly nowMs: () => number = () => performance.now(),
    private readonly cpuMs: () => number = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    },
  ) {
    this.at = nowMs();
    this.cpu = cpuMs();
  }

  /** The estimate now (updated once per elapsed 5-second period). */
  get(): number {
    const now = this.nowMs();
    const periods = Math.floor((now - this.at) / LOAD_SAMPLE_MS);
    if (periods <= 0) return this.value;
    const cpu = this.cpuMs();
    const busy = Math.max(0, cpu - this.cpu) / (now - this.at);
    // After a long pause the periods in between count with the average busy share (decayed to it).
    for (let i = 0; i < Math.min(periods, 64); i++) this.value = this.value * LOAD_DECAY + busy * (1 - LOAD_DECAY);
    this.at = now;
    this.cpu = cpu;
    return this.value;
  }
}

const ownLoad = new OwnLoad();

/**
 * A core to spare for the calling thread besides `workers` busy workers: the load of the other processes
 * (the 1-minute load average minus this process's own share, OwnLoad) plus the workers stays below the
 * core count. On 2 cores with one worker: other processes below one core.
 */
export function othersLeaveACore(workers: number, load = loadavg()[0] as number, own = ownLoad.get(), cores = availableParallelism()): boolean {
  return Math.max(0, load - own) + workers < cores;
}
/** Windows per chunk posted to a worker: small enough to share out and cancel, large enough to amortise a post. */
export const CHUNK_WINDOWS = 16;

/**
 * What a worker answers for a chunk: every window's score per type, packed (window w, type t at
 * w · CLASSIFIER_TYPES.length + t; NaN = no score for the type), and the heuristic signals that decided a
 * type as [window, type index, signal]. One typed array crosses the thread boundary instead of an object
 * per window (the structured clone of 16 score objects cost about as much as a window's n-gram hashing).
 */
export interface ChunkAnswer {
  scores: Float64Array;
  signals: Array<[number, number, string]>;
}

/** The worker's side of ChunkAnswer: the same numbers and signals scoreWindow returned. */
export function packScores(list: readonly ClassifierScores[]): ChunkAnswer {
  const k = CLASSIFIER_TYPES.length;
  const scores = new Float64Array(list.length * k);
  const signals: ChunkAnswer['signals'] = [];
  list.forEach((s, w) => {
    for (let t = 0; t < k; t++) {
      const type = CLASSIFIER_TYPES[t] as ClassifierType;
      scores[w * k + t] = s[type] ?? NaN;
      const signal = scoreSignalOf(s, type);
      if (signal !== undefined) signals.push([w, t, signal]);
    }
  });
  return { scores, signals };
}

/** The detection thread's side: one ClassifierScores per window, signals attached as scoreWindow attaches them. */
export function unpackScores(answer: ChunkAnswer, windows: number): ClassifierScores[] {
  const k = CLASSIFIER_TYPES.length;
  const out: ClassifierScores[] = [];
  for (let w = 0; w < windows; w++) {
    const s: ClassifierScores = {};
    for (let t = 0; t < k; t++) {
      const v = answer.scores[w * k + t] as number;
      if (!Number.isNaN(v)) s[CLASSIFIER_TYPES[t] as ClassifierType] = v;
    }
    out.push(s);
  }
  const signals = new Map<number, Partial<Record<ClassifierType, string>>>();
  for (const [w, t, signal] of answer.signals) {
    const forWindow = signals.get(w) ?? {};
    forWindow[CLASSIFIER_TYPES[t] as ClassifierType] = signal;
    signals.set(w, forWindow);
  }
  for (const [w, forWindow] of signals) attachScoreSignals(out[w] as ClassifierScores, forWindow);
  return out;
}

/** One window waiting to be scored (by a worker or by the calling thread). */
interface PendingWindow {
  text: string;
  signal: AbortSignal;
  resolve: (scores: ClassifierScores) => void;
  reject: (err: Error) => void;
}

export const BUILTIN_WORKER_SOURCE = `require(${JSON.stringify(compiledModulePath(__filename))}).runBuiltinClassifierWorker();`;

export interface PooledClassifierBackend extends ClassifierBackend {
  classifyMany(texts: readonly string[], signals: readonly AbortSignal[]): Array<Promise<ClassifierScores>>;
  readonly pool: WorkerPool<string[], ChunkAnswer>;
  /** Windows scored by the calling thread while they waited for a worker (tests and benchmarks count them). */
  readonly helped: number;
  /** The queue and the pool now (for the detection metrics). */
  stats(): ClassifierPoolStats;
  close(): Promise<void>;
}

export interface ClassifierPoolStats {
  /** Windows waiting in the queue for a worker (or the calling thread). */
  queuedWindows: number;
  /** Chunks posted to workers and not answered yet. */
  busyWorkers: number;
  workers: number;
  /** Windows scored by the calling thread while they waited for a worker, since start. */
  helped: number;
}

const abortReason = (signal: AbortSignal): Error => (signal.reason instanceof Error ? signal.reason : new Error('classification aborted'));

/**
 * A large batch's windows wait in one queue (FIFO over requests). At most `size` chunks are posted at a
 * time, each CHUNK_WINDOWS windows from the front of the queue, and the next one when a worker answers,
 * so the pool's own queue stays short and the queue can also be drained from its end by the calling
 * thread (inlineSlice windows per setImmediate turn: other requests' I/O and small texts run between
 * turns). Every window is scored exactly once, by `model.scoreWindow` on one thread or the other, so the
 * scores are the same whoever scores it.
 */
export function createPooledBuiltinBackend(options: BuiltinPoolOptions): PooledClassifierBackend {
  const model = loadBuiltinModel();
  const inline = createBuiltinBackend({ model });
  const minWindows = options.minWindows ?? DEFAULT_POOL_MIN_WINDOWS;
  const maxWaiting = (options.maxQueue ?? 256) * CHUNK_WINDOWS;
  const inlineSlice = options.inlineSlice ?? 0;
  const spareCore = options.spareCore ?? (() => othersLeaveACore(options.size));
  const pool = new WorkerPool<string[], ChunkAnswer>({
    name: 'classifier',
    source: options.workerSource ?? BUILTIN_WORKER_SOURCE,
    size: options.size,
    maxQueue: options.size,
    idleMs: options.idleMs,
    nice: options.nice,
  });
  const waiting: PendingWindow[] = [];
  let posted = 0;
  let helping = false;
  let helped = 0;
  let closed = false;

  /** Windows from the front of the queue, those no detector waits for any more dropped (rejected). */
  const take = (n: number, fromEnd: boolean): PendingWindow[] => {
    const out: PendingWindow[] = [];
    while (out.length < n && waiting.length > 0) {
      const w = (fromEnd ? waiting.pop() : waiting.shift()) as PendingWindow;
      if (w.signal.aborted) w.reject(abortReason(w.signal));
      else out.push(w);
    }
    return fromEnd ? out.reverse() : out;
  };

  const post = (): void => {
    while (posted < pool.size && waiting.length > 0) {
      const chunk = take(CHUNK_WINDOWS, false);
      if (chunk.length === 0) continue;
      posted++;
      pool
        .run(chunk.map((w) => w.text))
        .then(
          (answer) => {
            const list = unpackScores(answer, chunk.length);
            chunk.forEach((w, i) => w.resolve(list[i] as ClassifierScores));
          },
          (err: unknown) => {
            const e = err instanceof Error ? err : new Error(String(err));
            for (const w of chunk) w.reject(e);
          },
        )
        .finally(() => {
          posted--;
          post();
        });
    }
    if (inlineSlice > 0 && waiting.length > 0 && !helping) {
      helping = true;
      setImmediate(help);
    }
  };

  /** The calling thread's turn: up to inlineSlice windows from the end of the queue. */
  const help = (): void => {
    helping = false;
    // No core to spare: asked again when a worker answers (post), never in a loop of its own.
    if (closed || !spareCore()) return;
    for (const w of take(inlineSlice, true)) {
      try {
        w.resolve(model.scoreWindow(w.text));
        helped++;
      } catch (err) {
        w.reject(err instanceof Error ? err : new Error(String(err)));
      }
    }
    post();
  };

  return {
    name: inline.name,
    types: inline.types,
    local: true,
    pool,
    get helped() {
      return helped;
    },
    stats: () => ({ queuedWindows: waiting.length, busyWorkers: posted, workers: pool.size, helped }),
    classify: (text, signal) => inline.classify(text, signal),
    // As classifyMany: fewer than minWindows new windows are scored on the calling thread.
    classifyNow: (texts) => (texts.length < minWindows ? inline.classifyNow?.(texts) : undefined),
    classifyMany(texts, signals) {
      if (texts.length < minWindows) return texts.map((t, i) => inline.classify(t, signals[i] as AbortSignal));
      if (closed) return texts.map(() => Promise.reject(new Error('classifier worker pool is closed')));
      const out = texts.map((text, i) => {
        const signal = signals[i] as AbortSignal;
        // A full queue (maxQueue chunks waiting beyond the ones the idle workers take next): scored inline,
        // as without a pool.
        if (waiting.length >= maxWaiting + (pool.size - posted) * CHUNK_WINDOWS) return Promise.resolve().then(() => inline.classify(text, signal));
        const p = new Promise<ClassifierScores>((resolve, reject) => waiting.push({ text, signal, resolve, reject }));
        p.catch(() => undefined);
        return p;
      });
      post();
      return out;
    },
    close: async () => {
      closed = true;
      const err = new Error('classifier worker pool is closed');
      for (const w of waiting.splice(0)) w.reject(err);
      await pool.close();
    },
  };
}

/** The worker thread's side (run through BUILTIN_WORKER_SOURCE; not for direct use). */
export function runBuiltinClassifierWorker(): void {
  const model = loadBuiltinModel();
  serveWorkerTasks<string[], ChunkAnswer>((texts) => packScores(texts.map((text) => model.scoreWindow(text))));
}
