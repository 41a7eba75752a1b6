import { Worker } from 'node:worker_threads';
import { pgliteStartParams } from './pglite-template';

/**
 * The embedded database (PGlite) in a worker thread of its own. PGlite is PostgreSQL compiled to
 * WebAssembly: every statement is synchronous CPU work on the thread that owns the instance. On the
 * main thread that stalled every request behind an audit batch (100 rows ≈ 10–15 ms, a statement's
 * fixed cost ≈ 0.3 ms; bench/RESULTS.md). Here the main thread only posts the SQL and awaits the
 * answer; the instance, its WASM heap and its CPU time live on the worker.
 *
 * The worker is plain JavaScript (eval), so it runs the same from the compiled build and from the
 * TypeScript sources under jest. Results cross the thread boundary by structured clone (Dates, parsed
 * JSON, arrays, byte arrays and bigints survive); errors keep their message and every field PostgreSQL
 * sent (code, detail, constraint, ...), which is what TypeORM and our services look at.
 */

/** The part of PGlite's interface the storage layer uses (PGlite itself satisfies it too). */
export interface EmbeddedDatabase {
  query(sql: string, params?: unknown[]): Promise<EmbeddedResults>;
  exec(sql: string): Promise<EmbeddedResults[]>;
  close(): Promise<void>;
}

export interface EmbeddedResults {
  rows: unknown[];
  affectedRows?: number;
  fields: Array<{ name: string; dataTypeID: number }>;
}

type Op = { op: 'query'; sql: string; params?: unknown[] } | { op: 'exec'; sql: string } | { op: 'close' };
type Answer = { id: number; result?: unknown; error?: SerializedError };
interface SerializedError {
  message: string;
  name: string;
  fields: Record<string, unknown>;
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { PGlite } = require(workerData.pglitePath);
const serialize = (e) => {
  const fields = {};
  if (e && typeof e === 'object') {
    for (const k of Object.keys(e)) {
      const v = e[k];
      if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) fields[k] = v;
    }
  }
  return { message: e instanceof Error ? e.message : String(e), name: e instanceof Error ? e.name : 'Error', fields };
};
const plain = (r) => ({ rows: r.rows, affectedRows: r.affectedRows, fields: r.fields });
(async () => {
  let db;
  const v8 = require('node:v8');
  try {
    // PostgreSQL's WebAssembly is compiled by Liftoff only: TurboFan's optimised copies of its hot
    // functions cost ~40 MB of resident memory for ~1 ms per audit batch. The flag is process-wide, so
    // it is set only while PGlite compiles its module (a module keeps the tiering it was compiled with).
    v8.setFlagsFromString('--liftoff-only');
    db = await PGlite.create({ dataDir: workerData.dataDir, startParams: workerData.startParams });
  } catch (e) {
    parentPort.postMessage({ id: 0, error: serialize(e) });
    return;
  } finally {
    v8.setFlagsFromString('--no-liftoff-only');
  }
  parentPort.postMessage({ id: 0, result: 'ready' });
  parentPort.on('message', async (m) => {
    try {
      let result = null;
      if (m.op === 'query') result = plain(await db.query(m.sql, m.params));
      else if (m.op === 'exec') result = (await db.exec(m.sql)).map(plain);
      else if (m.op === 'close') await db.close();
      parentPort.postMessage({ id: m.id, result });
      if (m.op === 'close') parentPort.close();
    } catch (e) {
      parentPort.postMessage({ id: m.id, error: serialize(e) });
    }
  });
})();
`;

function revive(e: SerializedError): Error {
  const err = new Error(e.message);
  Object.assign(err, e.fields);
  err.name = e.name;
  return err;
}

const PGLITE_THREAD_YOUNG_GENERATION_MB = 4;

/** Opens PGlite in a worker thread: `dataDir` undefined keeps the database in memory. */
export async function openPGliteThread(dataDir: string | undefined): Promise<EmbeddedDatabase> {
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    // Its JavaScript only relays statements and rows: a small young generation (V8's default lets it
    // grow to tens of MB per thread).
    resourceLimits: { maxYoungGenerationSizeMb: PGLITE_THREAD_YOUNG_GENERATION_MB },
    workerData: { dataDir, startParams: pgliteStartParams(), pglitePath: require.resolve('@electric-sql/pglite') },
  });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let dead: Error | undefined;
  const ready = new Promise<void>((resolve, reject) => pending.set(0, { resolve: () => resolve(), reject }));
  worker.on('message', (m: Answer) => {
    const waiter = pending.get(m.id);
    if (!waiter) return;
    pending.delete(m.id);
    if (pending.size === 0) worker.unref();
    if (m.error) waiter.reject(revive(m.error));
    else waiter.resolve(m.result);
  });
  const failAll = (err: Error) => {
    dead = err;
    for (const w of pending.values()) w.reject(err);
    pending.clear();
  };
  worker.on('error', (err) => failAll(err));
  worker.on('exit', (code) => failAll(new Error(`embedded database thread exited (${code})`)));
  try {
    await ready;
  } catch (err) {
    await worker.terminate();
    throw err;
  }
  // An idle database thread does not keep the process alive; a pending statement does (ref below).
  worker.unref();
  const send = <T>(op: Op): Promise<T> => {
    if (dead) return Promise.reject(dead);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      if (pending.size === 0) worker.ref();
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      worker.postMessage({ ...op, id });
    });
  };
  let closed = false;
  return {
    query: (sql, params) => send<EmbeddedResults>({ op: 'query', sql, params }),
    exec: (sql) => send<EmbeddedResults[]>({ op: 'exec', sql }),
    async close() {
      if (closed) return;
      closed = true;
      try {
        await send<null>({ op: 'close' });
      } finally {
        await worker.terminate();
      }
    },
  };
}
