import { EventEmitter } from 'node:events';
import type { EmbeddedDatabase } from './pglite-thread';

/**
 * A node-postgres-compatible Pool over one embedded PGlite instance (in its worker thread, or PGlite
 * itself), handed to TypeORM's postgres
 * driver (`driver: { Pool }`, `extra: { pglite }`).
 *
 * PGlite is a single session. Unlike a naive adapter, this pool lends that session to one TypeORM
 * query runner at a time (FIFO), so transactions of concurrent requests never interleave. A checkout
 * that waits longer than `checkoutTimeoutMs` fails instead of hanging (it means code is holding a
 * query runner while asking for another).
 */

type ConnectCallback = (err: Error | null, client: PGliteClient | null, release: (err?: unknown) => void) => void;
type QueryCallback = (err: Error | null, result: PgStyleResult | null) => void;

interface Results {
  rows: unknown[];
  affectedRows?: number;
  fields: Array<{ name: string; dataTypeID: number }>;
}

interface PgStyleResult {
  rows: unknown[];
  rowCount: number;
  command: string;
  fields: Results['fields'];
}

export interface PGlitePoolOptions {
  pglite: EmbeddedDatabase;
  checkoutTimeoutMs?: number;
}

function toPgResult(sql: string, result: Results | undefined): PgStyleResult {
  const command = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? '';
  const rows = (result?.rows ?? []) as unknown[];
  return {
    rows,
    rowCount: result?.affectedRows ?? rows.length,
    command,
    fields: result?.fields ?? [],
  };
}

class PGliteClient extends EventEmitter {
  constructor(private readonly db: EmbeddedDatabase) {
    super();
  }

  query(sql: string, paramsOrCb?: unknown[] | QueryCallback, maybeCb?: QueryCallback): Promise<PgStyleResult> {
    const cb = typeof paramsOrCb === 'function' ? paramsOrCb : maybeCb;
    const params = Array.isArray(paramsOrCb) ? paramsOrCb : undefined;
    const run: Promise<Results | undefined> =
      params && params.length > 0
        ? this.db.query(sql, params)
        : this.db.exec(sql).then((all) => all[all.length - 1]);
    const out = run.then((r) => toPgResult(sql, r));
    if (cb) out.then((r) => cb(null, r), (e: Error) => cb(e, null));
    return out;
  }
}

export class PGlitePool extends EventEmitter {
  private readonly db: EmbeddedDatabase;
  private readonly client: PGliteClient;
  private readonly checkoutTimeoutMs: number;
  private busy = false;
  private readonly waiters: Array<() => void> = [];

  constructor(options: Partial<PGlitePoolOptions> & Record<string, unknown>) {
    super();
    if (!options.pglite) throw new Error('PGlitePool needs extra.pglite (a PGlite instance)');
    this.db = options.pglite;
    this.client = new PGliteClient(this.db);
    this.checkoutTimeoutMs = options.checkoutTimeoutMs ?? 30_000;
  }

  connect(cb?: ConnectCallback): Promise<PGliteClient> {
    const acquired = this.acquire().then(() => this.client);
    if (cb) {
      acquired.then(
        (client) => cb(null, client, this.makeRelease()),
        (err: Error) => cb(err, null, () => undefined),
      );
    }
    return acquired;
  }

  /** Pool-level query: borrows the session for one statement. */
  async query(sql: string, params?: unknown[]): Promise<PgStyleResult> {
    await this.acquire();
    try {
      return await this.client.query(sql, params);
    } finally {
      this.releaseSession();
    }
  }

  end(cb?: (err?: Error | null) => void): Promise<void> {
    // The PGlite instance belongs to whoever created it (see data-source.ts); it is closed there.
    cb?.(null);
    return Promise.resolve();
  }

  private makeRelease(): (err?: unknown) => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.releaseSession();
    };
  }

  private acquire(): Promise<void> {
    if (!this.busy) {
      this.busy = true;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(grant);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new Error(`embedded database busy: no session free within ${this.checkoutTimeoutMs} ms`));
      }, this.checkoutTimeoutMs);
      this.waiters.push(grant);
    });
  }

  private releaseSession(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.busy = false;
  }
}
