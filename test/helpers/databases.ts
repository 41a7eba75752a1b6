import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { openStorage, type Storage } from '../../src/storage/data-source';
import { TcpProxy } from './tcp-proxy';

/**
 * Storage targets for tests: the embedded PGlite always, and a real PostgreSQL when TEST_DATABASE_URL
 * is set (CI sets it). Each Postgres target gets a brand-new database, dropped afterwards.
 */
export interface StorageTarget {
  name: 'pglite' | 'postgres';
  /** Options to open this target (a fresh database each call to `create`). */
  create(): Promise<{ databaseUrl?: string; dataDir: string; cleanup(): Promise<void> }>;
}

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export const pgliteTarget: StorageTarget = {
  name: 'pglite',
  async create() {
    const dir = mkdtempSync(join(tmpdir(), 'gw-pglite-'));
    return { dataDir: dir, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
  },
};

export const postgresTarget: StorageTarget = {
  name: 'postgres',
  async create() {
    if (!TEST_DATABASE_URL) throw new Error('TEST_DATABASE_URL is not set');
    const name = `gw_test_${randomBytes(6).toString('hex')}`;
    await admin((c) => c.query(`CREATE DATABASE ${name}`));
    return {
      databaseUrl: withDatabase(TEST_DATABASE_URL, name),
      dataDir: 'memory://',
      cleanup: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
    };
  },
};

/** PGlite always; PostgreSQL too when TEST_DATABASE_URL is set. */
/**
 * A fresh PostgreSQL database reached through a TcpProxy (to take it down or stall it): `target` hands
 * the services the proxied URL; once created, `state.proxy` is the proxy and `state.directUrl` the
 * database's own URL (to count rows while the proxy is down).
 */
export function postgresBehindProxy(): { target: StorageTarget; state: { proxy?: TcpProxy; directUrl?: string } } {
  const state: { proxy?: TcpProxy; directUrl?: string } = {};
  const target: StorageTarget = {
    name: 'postgres',
    async create() {
      const db = await postgresTarget.create();
      state.directUrl = db.databaseUrl ?? '';
      const url = new URL(state.directUrl);
      state.proxy = new TcpProxy(url.hostname, Number(url.port || 5432));
      await state.proxy.start();
      url.hostname = '127.0.0.1';
      url.port = String(state.proxy.port);
      return { ...db, databaseUrl: url.toString() };
    },
  };
  return { target, state };
}

export const STORAGE_TARGETS: StorageTarget[] = TEST_DATABASE_URL ? [pgliteTarget, postgresTarget] : [pgliteTarget];

if (!TEST_DATABASE_URL && !process.env.CI) {
  // Visible once per run so nobody mistakes a PGlite-only run for full coverage.
  process.stderr.write('[tests] TEST_DATABASE_URL not set: storage tests run on PGlite only\n');
}

/** Opens a fresh storage of the given target; `dispose` closes it and drops/removes the database. */
export async function freshStorage(target: StorageTarget): Promise<{ storage: Storage; options: { databaseUrl?: string; dataDir: string }; dispose(): Promise<void> }> {
  const db = await target.create();
  const storage = await openStorage({ databaseUrl: db.databaseUrl, dataDir: db.dataDir, poolSize: 4 });
  return {
    storage,
    options: { databaseUrl: db.databaseUrl, dataDir: db.dataDir },
    async dispose() {
      await storage.close();
      await db.cleanup();
    },
  };
}
