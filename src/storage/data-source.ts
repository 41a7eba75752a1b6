import 'reflect-metadata';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { DataSource } from 'typeorm';
import { PGlite } from '@electric-sql/pglite';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';
import { PGlitePool } from './pglite-pool';
import { pgliteStartParams, seedFromTemplate } from './pglite-template';
import { openPGliteThread, type EmbeddedDatabase } from './pglite-thread';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock';
import type { Config } from '../shared/config';

export type StorageKind = 'postgres' | 'pglite';

export interface Storage {
  readonly kind: StorageKind;
  readonly dataSource: DataSource;
  /** Raw SQL on the pool (a short-lived connection). */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

export interface StorageOptions {
  /** postgres:// URL; when absent the embedded PGlite database under `dataDir` is used. */
  databaseUrl?: string;
  /** Directory of the embedded database; `memory://` keeps it in memory (tests). */
  dataDir: string;
  /** Pool size for PostgreSQL. */
  poolSize?: number;
  /** PostgreSQL: bound on opening a connection and on waiting for a pooled one (default 3000 ms). */
  connectTimeoutMs?: number;
  /**
   * PostgreSQL: bound on one statement (default 5000 ms). Set both as the server's `statement_timeout`
   * (the server cancels the work) and as the client's read timeout (a stalled server or network fails
   * the call instead of hanging it).
   */
  statementTimeoutMs?: number;
  /**
   * Run the embedded database in a worker thread (pglite-thread.ts) instead of on the calling thread;
   * default true. Its statements are synchronous WebAssembly: on the main thread they stall requests.
   */
  embeddedThread?: boolean;
}

/** The storage options of a configuration (database, directory, PostgreSQL timeouts). */
export function storageOptions(config: Config): StorageOptions {
  return {
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    connectTimeoutMs: config.DATABASE_CONNECT_TIMEOUT_MS,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
  };
}

const common = {
  type: 'postgres' as const,
  entities: ENTITIES,
  migrations: MIGRATIONS,
  migrationsTableName: 'schema_migrations',
  synchronize: false,
  migrationsRun: false,
  logging: false as const,
};

/** Opens (but does not migrate) the configured database. */
export async function openStorage(options: StorageOptions): Promise<Storage> {
  return options.databaseUrl
    ? openPostgres(options.databaseUrl, {
        poolSize: options.poolSize ?? 10,
        connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
        statementTimeoutMs: options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
      })
    : openPGlite(options.dataDir, options.embeddedThread ?? true);
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 3000;
export const DEFAULT_STATEMENT_TIMEOUT_MS = 5000;

interface PostgresPoolOptions {
  poolSize: number;
  connectTimeoutMs: number;
  statementTimeoutMs: number;
}

async function openPostgres(url: string, o: PostgresPoolOptions): Promise<Storage> {
  const dataSource = new DataSource({
    ...common,
    url,
    poolSize: o.poolSize,
    applicationName: 'llm-content-security-gateway',
    // node-postgres' connectionTimeoutMillis: bounds the TCP + startup handshake and the wait for a pooled client.
    connectTimeoutMS: o.connectTimeoutMs,
    // Passed to pg.Pool as is: statement_timeout is a startup parameter of every connection (the server
    // cancels with SQLSTATE 57014); query_timeout is node-postgres' client-side read timeout.
    extra: { statement_timeout: o.statementTimeoutMs, query_timeout: o.statementTimeoutMs + 1000 },
  });
  await dataSource.initialize();
  return wrap('postgres', dataSource, async () => undefined);
}

async function openPGlite(dataDir: string, thread: boolean): Promise<Storage> {
  const inMemory = dataDir.startsWith('memory://');
  const open = (dir?: string): Promise<EmbeddedDatabase> =>
    thread ? openPGliteThread(dir) : PGlite.create({ dataDir: dir, startParams: pgliteStartParams() });
  let lock: DataDirLock | undefined;
  let pglite: EmbeddedDatabase;
  if (inMemory) {
    pglite = await open();
  } else {
    const dir = resolve(dataDir, 'pglite');
    mkdirSync(dir, { recursive: true });
    lock = await acquireDataDirLock(dir);
    try {
      // First start: the install-time cluster instead of initdb (pglite-template.ts).
      seedFromTemplate(dir);
      pglite = await open(dir);
    } catch (err) {
      lock.release();
      throw err;
    }
  }
  const dataSource = new DataSource({
    ...common,
    driver: { Pool: PGlitePool },
    extra: { pglite },
  });
  try {
    await dataSource.initialize();
  } catch (err) {
    await pglite.close();
    lock?.release();
    throw err;
  }
  return wrap('pglite', dataSource, async () => {
    await pglite.close();
    lock?.release();
  });
}

function wrap(kind: StorageKind, dataSource: DataSource, afterDestroy: () => Promise<void>): Storage {
  let closed = false;
  return {
    kind,
    dataSource,
    query: (sql, params) => dataSource.query(sql, params),
    async close() {
      if (closed) return;
      closed = true;
      if (dataSource.isInitialized) await dataSource.destroy();
      await afterDestroy();
    },
  };
}
