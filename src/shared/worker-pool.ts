import { Worker, type ResourceLimits } from 'node:worker_threads';

/**
 * A small bounded pool of worker threads for CPU-heavy, synchronous work (builtin classifier windows,
 * audit token counts) that must not hold the event loop of the process that serves requests.
 *
 * - Workers start lazily (on the first task that finds no idle one), up to `size`; an idle worker is
 *   unref'd, so it never keeps the process alive, and with `idleMs` it is terminated after that long idle.
 * - At most `maxQueue` tasks wait for a worker; `run` rejects a task beyond that with WorkerPoolFull at
 *   once (callers fall back to doing the work themselves, so a burst degrades to today's inline cost).
 * - A task whose `cancelled()` says so when its turn comes is dropped (rejected with its reason) instead
 *   of being posted.
 * - A worker that dies (crash, process.exit, uncaught exception) rejects the task it was running with an
 *   error naming the pool; it is replaced on demand, so the next task runs on a fresh worker.
 * - `close()` terminates every worker and rejects everything queued or running.
 *
 * The worker side is `serveWorkerTasks(handler)` in the worker's source: one message in
 * (`{ id, task }`), one out (`{ id, result }` or `{ id, error }`).
 */

export interface WorkerPoolOptions {
  /** Short name for errors and logs, e.g. "classifier". */
  name: string;
  /** JavaScript run in each worker (`eval: true`); it calls serveWorkerTasks. */
  source: string;
  workerData?: unknown;
  /** Most workers alive at once (≥ 1). */
  size: number;
  /** Most tasks waiting for a worker (≥ 0). */
  maxQueue: number;
  /** A worker idle this long is terminated (its memory released; a later task starts a new one). Default: kept. */
  idleMs?: number;
  /**
   * Each worker's V8 limits. Default: a young generation of DEFAULT_WORKER_YOUNG_GENERATION_MB (V8 lets
   * a thread's grow to 32–48 MB, most of it resident after one burst, per worker).
   */
  resourceLimits?: ResourceLimits;
  /**
   * Linux only: each worker thread lowers its own scheduling priority to this nice value (1–19) when it
   * starts, so the threads that serve requests (nice 0) win the cores from it whenever both want one, and
   * it gets every cycle they leave. Linux keeps a nice value per thread; other systems keep one per process,
   * so there it is not set (it would slow the whole process). Default 0: not set.
   */
  nice?: number;
}

/**
 * A pool worker's young generation by default. Its tasks allocate short-lived strings and arrays of a
 * few KB per window or text: 8 MB keeps scavenges cheap (the detection thread runs with 12 MB).
 */
export const DEFAULT_WORKER_YOUNG_GENERATION_MB = 8;

export interface RunOptions {
  /** Checked when the task's turn comes: a reason to drop it, or undefined to run it. */
  cancelled?: () => unknown;
}

export class WorkerPoolFull extends Error {
  constructor(name: string) {
    super(`${name} worker pool queue is full`);
    this.name = 'WorkerPoolFull';
  }
}

interface Task {
  id: number;
  payload: unknown;
  options: RunOptions;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  task: Task | undefined;
  idle?: NodeJS.Timeout;
}

type Answer = { id: number; result?: unknown; error?: string };

export class WorkerPool<In, Out> {
  private readonly slots = new Set<Slot>();
  private readonly queue: Task[] = [];
  private nextId = 1;
  private closed = false;
  /** Tasks posted to a worker so far (tests and benchmarks count them). */
  dispatched = 0;
  /** Workers started so far (a replaced crashed worker counts again). */
  started = 0;

  constructor(private readonly options: WorkerPoolOptions) {
    if (!(Number.isInteger(options.size) && options.size >= 1)) throw new Error(`${options.name} worker pool size must be at least 1`);
    checkNice(options.nice);
  }

  get size(): number {
    return this.options.size;
  }

  /** Live workers. */
  get threads(): number {
    return this.slots.size;
  }

  run(payload: In, options: RunOptions = {}): Promise<Out> {
    if (this.closed) return Promise.reject(new Error(`${this.options.name} worker pool is closed`));
    const idle = this.idleSlot();
    const canStart = this.slots.size < this.options.size;
    if (!idle && !canStart && this.queue.length >= this.options.maxQueue) return Promise.reject(new WorkerPoolFull(this.options.name));
    return new Promise<Out>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, payload, options, resolve: resolve as (v: unknown) => void, reject });
      this.pump();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const err = new Error(`${this.options.name} worker pool is closed`);
    for (const t of this.queue.splice(0)) t.reject(err);
    const slots = [...this.slots];
    this.slots.clear();
    for (const s of slots) {
      clearTimeout(s.idle);
      s.task?.reject(err);
      s.task = undefined;
    }
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private idleSlot(): Slot | undefined {
    for (const s of this.slots) if (!s.task) return s;
    return undefined;
  }

  private pump(): void {
    while (!this.closed && this.queue.length > 0) {
      const slot = this.idleSlot() ?? (this.slots.size < this.options.size ? this.spawn() : undefined);
      if (!slot) return;
      const task = this.queue.shift() as Task;
      const reason = task.options.cancelled?.();
      if (reason !== undefined) {
        task.reject(reason instanceof Error ? reason : new Error(String(reason)));
        continue;
      }
      slot.task = task;
      clearTimeout(slot.idle);
      slot.worker.ref();
      this.dispatched++;
      slot.worker.postMessage({ id: task.id, task: task.payload });
    }
  }

  private spawn(): Slot {
    const worker = new Worker(niceSource(this.options.source, this.options.nice), {
      eval: true,
      workerData: this.options.workerData,
      resourceLimits: this.options.resourceLimits ?? { maxYoungGenerationSizeMb: DEFAULT_WORKER_YOUNG_GENERATION_MB },
    });
    this.started++;
    const slot: Slot = { worker, task: undefined };
    this.slots.add(slot);
    worker.unref();
    worker.on('message', (m: Answer) => {
      const task = slot.task;
      if (!task || task.id !== m.id) return;
      slot.task = undefined;
      worker.unref();
      if (m.error !== undefined) task.reject(new Error(m.error));
      else task.resolve(m.result);
      this.pump();
      if (!slot.task && this.options.idleMs !== undefined) {
        slot.idle = setTimeout(() => {
          if (slot.task || !this.slots.delete(slot)) return;
          void worker.terminate();
        }, this.options.idleMs).unref();
      }
    });
    const died = (why: string) => {
      clearTimeout(slot.idle);
      if (!this.slots.delete(slot)) return;
      const task = slot.task;
      slot.task = undefined;
      task?.reject(new Error(`${this.options.name} worker failed: ${why}`));
      void worker.terminate();
      this.pump();
    };
    worker.on('error', (err) => died(err.message));
    worker.on('exit', (code) => died(`exited with code ${code}`));
    return slot;
  }
}

/**
 * The worker's source with, first, the call that lowers its thread's priority (`os.setPriority` on the
 * calling thread: on Linux that is the worker's thread alone). Best effort: a system that refuses it
 * leaves the worker at the process's priority, as before.
 */
export function niceSource(source: string, nice: number | undefined, platform: NodeJS.Platform = process.platform): string {
  checkNice(nice);
  if (nice === undefined || nice === 0 || platform !== 'linux') return source;
  return `try { require('node:os').setPriority(${nice}); } catch {}\n${source}`;
}

/** A nice value is an integer from 0 to 19 (checked on every system, though only Linux applies it). */
function checkNice(nice: number | undefined): void {
  if (nice !== undefined && !(Number.isInteger(nice) && nice >= 0 && nice <= 19)) throw new Error(`worker nice value must be an integer from 0 to 19, got ${nice}`);
}

/** The worker side: answers each `{ id, task }` with `handler(task)` (or its error message). */
export function serveWorkerTasks<In, Out>(handler: (task: In) => Out): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { parentPort } = require('node:worker_threads') as typeof import('node:worker_threads');
  if (!parentPort) throw new Error('serveWorkerTasks runs in a worker thread only');
  const port = parentPort;
  port.on('message', (m: { id: number; task: In }) => {
    let answer: Answer;
    try {
      answer = { id: m.id, result: handler(m.task) };
    } catch (err) {
      answer = { id: m.id, error: err instanceof Error ? err.message : String(err) };
    }
    port.postMessage(answer);
  });
}

/**
 * The compiled JavaScript of a module, for a worker's `require` (a worker cannot load TypeScript): the
 * file itself when running compiled, else its counterpart under dist/ (tests run from sources after
 * `npm run build`).
 */
export function compiledModulePath(filename: string): string {
  if (filename.endsWith('.js')) return filename;
  return filename.replace(/([\\/])src([\\/])(?!.*[\\/]src[\\/])/, '$1dist$2').replace(/\.ts$/, '.js');
}

/**
 * The pools' default nice value (CLASSIFIER_WORKER_NICE, AUDIT_TOKEN_WORKER_NICE). At nice 10 a worker
 * that competes for a core with a serving thread (nice 0) gets about a tenth of it: on 2 cores, small
 * requests sent while 1 MB texts were scored kept their p50 alone (5.6 ms; p99 53 vs 22 ms alone; at nice 0
 * 10.5 / 81 ms with two workers, 6.1 / 63 ms with one), while a 1 MB text alone had both cores (median 267
 * vs 401 ms with one worker; bench/RESULTS.md, "Worker priority").
 */
export const DEFAULT_WORKER_NICE = 10;

/**
 * Default pool size. On Linux one worker per core: the workers run at a lower priority than the threads
 * that serve requests (DEFAULT_WORKER_NICE), so they take the cores those leave: all of them while one
 * large text is scored alone, little while small requests need them. Elsewhere a worker cannot be niced
 * alone (niceSource), so one core is left to the serving threads: cores − 1, at least 1 (the Linux default
 * too before the workers were niced).
 */
export function defaultPoolSize(cores: number, platform: NodeJS.Platform = process.platform): number {
  return Math.max(1, platform === 'linux' ? cores : cores - 1);
}
