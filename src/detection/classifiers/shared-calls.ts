import { createHash } from 'node:crypto';
import type { ClassifierBackend, ClassifierScores } from './backend';

/**
 * One classify call per (backend, window content), shared by every detector that needs it: the 13
 * moderation detectors of one request (and the views of one text that share windows) ask for the same
 * window, and only the first ask reaches the backend; the others await the same promise. Keyed by the
 * SHA-256 of the window text, so identical content in a later request within `ttlMs` is also served
 * from here (bounded LRU). Failures are not kept: the next ask tries again.
 *
 * Cancellation: the backend call gets its own AbortSignal, aborted only when EVERY detector waiting on
 * it has been aborted (one detector hitting its deadline does not cancel a call the others still
 * need). A waiter whose own signal aborts stops waiting at once.
 */

export interface SharedCallOptions {
  maxEntries?: number;
  ttlMs?: number;
}

export const DEFAULT_SHARED_CALL_ENTRIES = 2048;

/** The key of a window's content (SHA-256, base64). */
export function contentDigest(text: string): string {
  return createHash('sha256').update(text).digest('base64');
}
export const DEFAULT_SHARED_CALL_TTL_MS = 60_000;

/** The key of a window's call: the backend's name and the window's contentDigest. */
export function sharedCallKey(backend: string, digest: string): string {
  return `${backend}\u0000${digest}`;
}

interface Entry {
  promise: Promise<ClassifierScores>;
  expires: number;
  controller: AbortController;
  waiters: number;
  settled: boolean;
  /** The scores, once the call succeeded (what classifyAllNow reads without awaiting). */
  value?: ClassifierScores;
}

/** The controller of entries scored before anyone could wait on them (never aborted: nothing to cancel). */
const SCORED_NOW = new AbortController();

/** Windows asked for and windows newly scored (the rest shared a call in flight or a recent score), by backend. */
export interface ClassifierWindowCount {
  windows: number;
  scored: number;
}

/** This thread's window counts since start, by backend name (read by the detection metrics at scrape time). */
export const classifierWindowCounts = new Map<string, ClassifierWindowCount>();

function countWindows(backend: string, windows: number, scored: number): void {
  let count = classifierWindowCounts.get(backend);
  if (count === undefined) {
    count = { windows: 0, scored: 0 };
    classifierWindowCounts.set(backend, count);
  }
  count.windows += windows;
  count.scored += scored;
}

export class SharedClassifyCalls {
  private readonly entries = new Map<string, Entry>();
  private readonly maxEntries: number;
  private readonly ttlMs: number;

  constructor(options: SharedCallOptions = {}) {
    this.maxEntries = options.maxEntries ?? DEFAULT_SHARED_CALL_ENTRIES;
    this.ttlMs = options.ttlMs ?? DEFAULT_SHARED_CALL_TTL_MS;
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Scores of every text (one window each), in order; one abort listener for the whole batch. `keys` are
   * the texts' sharedCallKey for this backend, made by the caller (once per text, however many detectors ask).
   */
  classifyAll(backend: ClassifierBackend, texts: readonly string[], keys: readonly string[], signal: AbortSignal): Promise<ClassifierScores[]> {
    signal.throwIfAborted();
    const now = Date.now();
    const fresh = new Map<string, { text: string; entry: Entry }>();
    const entries = texts.map((text, i) => {
      const key = keys[i] as string;
      const known = fresh.get(key)?.entry ?? this.known(key, now);
      if (known) return known;
      const entry = this.newEntry(now);
      fresh.set(key, { text, entry });
      return entry;
    });
    countWindows(backend.name, texts.length, fresh.size);
    if (fresh.size > 0) {
      // One batch for the backend when it takes batches (windows not already scored or in flight).
      const list = [...fresh];
      const batch = backend.classifyMany?.(
        list.map(([, f]) => f.text),
        list.map(([, f]) => f.entry.controller.signal),
      );
      list.forEach(([key, f], i) => this.start(key, f.entry, batch?.[i], backend, f.text));
    }
    return this.wait(entries, signal);
  }

  /**
   * classifyAll without a promise, when that is possible: every text's scores are known (a settled call of
   * this or an earlier request) or the backend scores the others now (`classifyNow`: the builtin model on
   * the calling thread for a short text). Undefined when a call is in flight or the backend cannot answer
   * now: then classifyAll. Throws where classifyAll would reject (a failure is not kept, as there).
   */
  classifyAllNow(backend: ClassifierBackend, texts: readonly string[], keys: readonly string[], signal: AbortSignal): ClassifierScores[] | undefined {
    signal.throwIfAborted();
    const now = Date.now();
    const out: ClassifierScores[] = new Array<ClassifierScores>(texts.length);
    let missing: number[] | undefined;
    for (let i = 0; i < texts.length; i++) {
      const entry = this.known(keys[i] as string, now);
      if (entry === undefined) (missing ??= []).push(i);
      else if (entry.value !== undefined) out[i] = entry.value;
      else return undefined; // in flight
    }
    if (missing === undefined) {
      countWindows(backend.name, texts.length, 0);
      return out;
    }
    if (backend.classifyNow === undefined) return undefined;
    // One score per distinct window (a text may repeat one).
    const fresh = new Map<string, number>();
    for (const i of missing) if (!fresh.has(keys[i] as string)) fresh.set(keys[i] as string, i);
    const firsts = [...fresh.values()];
    const scored = backend.classifyNow(firsts.map((i) => texts[i] as string));
    if (scored === undefined) return undefined;
    firsts.forEach((i, k) => {
      const value = scored[k] as ClassifierScores;
      this.remember(keys[i] as string, { promise: Promise.resolve(value), expires: now + this.ttlMs, controller: SCORED_NOW, waiters: 0, settled: true, value });
      out[i] = value;
    });
    for (const i of missing) out[i] ??= out[fresh.get(keys[i] as string) as number] as ClassifierScores;
    countWindows(backend.name, texts.length, fresh.size);
    return out;
  }

  /** A live entry for the key (moved to the LRU end), or undefined (an expired one is dropped). */
  private known(key: string, now: number): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry && !(entry.settled && entry.expires <= now)) {
      // LRU: move to the end.
      this.entries.delete(key);
      this.entries.set(key, entry);
      return entry;
    }
    if (entry) this.entries.delete(key);
    return undefined;
  }

  private newEntry(now: number): Entry {
    return { promise: Promise.resolve({}), expires: now + this.ttlMs, controller: new AbortController(), waiters: 0, settled: false };
  }

  /** Starts the entry's call: `batched` when the backend already took it in a batch, else one classify. */
  private start(key: string, entry: Entry, batched: Promise<ClassifierScores> | undefined, backend: ClassifierBackend, text: string): void {
    const call = batched ?? Promise.resolve().then(() => backend.classify(text, entry.controller.signal));
    entry.promise = call.then(
      (scores) => {
        entry.settled = true;
        entry.value = scores;
        return scores;
      },
      (err: unknown) => {
        entry.settled = true;
        if (this.entries.get(key) === entry) this.entries.delete(key);
        throw err;
      },
    );
    entry.promise.catch(() => undefined);
    this.remember(key, entry);
  }

  /** Keeps the entry (LRU end), dropping the oldest beyond maxEntries. */
  private remember(key: string, entry: Entry): void {
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  private wait(entries: Entry[], signal: AbortSignal): Promise<ClassifierScores[]> {
    const pending = entries.filter((e) => !e.settled);
    for (const e of pending) e.waiters++;
    return new Promise<ClassifierScores[]>((resolve, reject) => {
      let done = false;
      const finish = (): boolean => {
        if (done) return false;
        done = true;
        unsubscribe();
        for (const e of pending) {
          e.waiters--;
          // Nobody needs this call any more: cancel it.
          if (e.waiters === 0 && !e.settled) e.controller.abort(signal.aborted ? signal.reason : new Error('no longer needed'));
        }
        return true;
      };
      const onAbort = () => {
        if (finish()) reject(signal.reason instanceof Error ? signal.reason : new Error('classification aborted'));
      };
      const unsubscribe = onSignalAbort(signal, onAbort);
      Promise.all(entries.map((e) => e.promise)).then(
        (scores) => {
          if (finish()) resolve(scores);
        },
        (err: unknown) => {
          if (finish()) reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }
}

/**
 * One 'abort' listener per signal, fanning out to the callbacks registered on it. The engine gives all
 * detectors of a scan one shared signal, and every detector × view waits on it: listening directly
 * would add dozens of listeners to one signal (and Node's max-listeners warning).
 */
const hubs = new WeakMap<AbortSignal, Set<() => void>>();

function onSignalAbort(signal: AbortSignal, callback: () => void): () => void {
  let callbacks = hubs.get(signal);
  if (!callbacks) {
    const set = new Set<() => void>();
    hubs.set(signal, set);
    signal.addEventListener(
      'abort',
      () => {
        for (const cb of [...set]) cb();
        set.clear();
      },
      { once: true },
    );
    callbacks = set;
  }
  const registered = callbacks;
  registered.add(callback);
  return () => registered.delete(callback);
}
