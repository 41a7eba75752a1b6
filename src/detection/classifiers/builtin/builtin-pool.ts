import { attachScoreSignals, scoreSignalOf, CLASSIFIER_TYPES, type ClassifierBackend, type ClassifierScores, type ClassifierType } from '../backend';
import { compiledModulePath, serveWorkerTasks, WorkerPool, WorkerPoolFull } from '../../../shared/worker-pool';
import { createBuiltinBackend, loadBuiltinModel } from './builtin-backend';

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
 * pool replaces the worker for the next chunk. A chunk whose every window is no longer awaited (the
 * detectors hit their deadline) is dropped before it is posted. A full queue (`maxQueue` chunks waiting)
 * scores the chunk inline, as without a pool.
 */

/** The pool always scores with the committed model (what the workers load). */
export interface BuiltinPoolOptions {
  /** Worker threads (≥ 1). */
  size: number;
  /** Batches with fewer new windows are scored inline. Default DEFAULT_POOL_MIN_WINDOWS. */
  minWindows?: number;
  /** Chunks waiting for a worker before further chunks are scored inline. Default 256. */
  maxQueue?: number;
  /** Worker source (tests wrap the default one); default WORKER_SOURCE. */
  workerSource?: string;
}

export const DEFAULT_POOL_MIN_WINDOWS = 8;
/** Windows per chunk posted to a worker: small enough to share out and cancel, large enough to amortise a post. */
const CHUNK_WINDOWS = 16;

/** What a worker answers per window: the scores and, when a heuristic decided a type, which one. */
interface WindowAnswer {
  scores: ClassifierScores;
  signals?: Partial<Record<ClassifierType, string>>;
}

export const BUILTIN_WORKER_SOURCE = `require(${JSON.stringify(compiledModulePath(__filename))}).runBuiltinClassifierWorker();`;

export interface PooledClassifierBackend extends ClassifierBackend {
  classifyMany(texts: readonly string[], signals: readonly AbortSignal[]): Array<Promise<ClassifierScores>>;
  readonly pool: WorkerPool<string[], WindowAnswer[]>;
  close(): Promise<void>;
}

export function createPooledBuiltinBackend(options: BuiltinPoolOptions): PooledClassifierBackend {
  const inline = createBuiltinBackend();
  const minWindows = options.minWindows ?? DEFAULT_POOL_MIN_WINDOWS;
  const pool = new WorkerPool<string[], WindowAnswer[]>({
    name: 'classifier',
    source: options.workerSource ?? BUILTIN_WORKER_SOURCE,
    size: options.size,
    maxQueue: options.maxQueue ?? 256,
  });
  const chunk = (texts: readonly string[], signals: readonly AbortSignal[]): Array<Promise<ClassifierScores>> => {
    const answers = pool
      .run([...texts], {
        cancelled: () => (signals.every((s) => s.aborted) ? (signals[0]?.reason ?? new Error('classification aborted')) : undefined),
      })
      .then(
        (list) => list.map((a) => (a.signals ? attachScoreSignals(a.scores, a.signals) : a.scores)),
        (err: unknown) => {
          if (err instanceof WorkerPoolFull) return Promise.all(texts.map((t, i) => inline.classify(t, signals[i] as AbortSignal)));
          throw err;
        },
      );
    answers.catch(() => undefined);
    return texts.map((_, i) => answers.then((list) => list[i] as ClassifierScores));
  };
  return {
    name: inline.name,
    types: inline.types,
    local: true,
    pool,
    classify: (text, signal) => inline.classify(text, signal),
    classifyMany(texts, signals) {
      if (texts.length < minWindows) return texts.map((t, i) => inline.classify(t, signals[i] as AbortSignal));
      const out: Array<Promise<ClassifierScores>> = [];
      for (let i = 0; i < texts.length; i += CHUNK_WINDOWS) {
        out.push(...chunk(texts.slice(i, i + CHUNK_WINDOWS), signals.slice(i, i + CHUNK_WINDOWS)));
      }
      return out;
    },
    close: () => pool.close(),
  };
}

/** The worker thread's side (run through BUILTIN_WORKER_SOURCE; not for direct use). */
export function runBuiltinClassifierWorker(): void {
  const model = loadBuiltinModel();
  serveWorkerTasks<string[], WindowAnswer[]>((texts) =>
    texts.map((text) => {
      const scores = model.scoreWindow(text);
      let signals: Partial<Record<ClassifierType, string>> | undefined;
      for (const type of CLASSIFIER_TYPES) {
        const s = scoreSignalOf(scores, type);
        if (s !== undefined) (signals ??= {})[type] = s;
      }
      return signals ? { scores: { ...scores }, signals } : { scores: { ...scores } };
    }),
  );
}
