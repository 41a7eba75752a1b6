import { statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import lockfile from 'proper-lockfile';

/**
 * An embedded database directory (and an audit spool) may be opened by one process only (PGlite has no
 * multi-process locking; two writers would corrupt it). The lock is proper-lockfile's: a directory
 * `<dir>.lock` created atomically beside `dir`, whose mtime its holder refreshes every `updateMs`. A
 * lock not refreshed for `staleMs` belongs to a process that is gone and is taken over. Process ids
 * play no part: a container restarted after a kill (where the new process gets the old one's pid,
 * often 1) is not mistaken for the old holder, and a reused pid never keeps a dead lock alive.
 * A clean stop removes the lock at once; after a crash the next start waits until it is stale.
 */
export interface DataDirLock {
  release(): void;
}

export interface LockTiming {
  /** A lock whose mtime is older than this is stale (its holder is gone). proper-lockfile's minimum: 2000. */
  staleMs: number;
  /** How often the holder refreshes the mtime. */
  updateMs: number;
  /** acquireDataDirLock only: how long to wait for a held lock to be released or go stale. */
  waitMs: number;
}

/** A holder must stall its event loop for 30 s to lose its lock; a restart after a crash waits up to ~30 s. */
export const LOCK_TIMING: LockTiming = { staleMs: 30_000, updateMs: 5_000, waitMs: 32_000 };

/** Directories locked by this process (a second open here fails at once instead of waiting). */
const heldHere = new Set<string>();

/** Whether a process with this id exists (EPERM: it does, owned by another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function lockPathOf(dir: string): string {
  return join(dirname(dir), `${basename(dir)}.lock`);
}

function options(dir: string, timing: LockTiming) {
  return { lockfilePath: lockPathOf(dir), realpath: false, stale: timing.staleMs, update: timing.updateMs };
}

function inUse(dir: string, timing: LockTiming, refreshedMeanwhile = false): Error {
  const why = refreshedMeanwhile
    ? `its holder refreshed the lock ${lockPathOf(dir)} while this process waited for it`
    : `its lock ${lockPathOf(dir)} was refreshed within the last ${Math.round(timing.staleMs / 1000)} s`;
  return new Error(`The embedded database in ${dir} is in use by another process (${why}). Stop it, or set DATA_DIR to another directory, or use DATABASE_URL for several instances.`);
}

/** The lock directory's mtime (ms), or undefined when there is none. */
function lockMtime(dir: string): number | undefined {
  try {
    return statSync(lockPathOf(dir)).mtimeMs;
  } catch {
    return undefined;
  }
}

function held(dir: string, release: () => void): DataDirLock {
  heldHere.add(dir);
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      heldHere.delete(dir);
      try {
        release();
      } catch {
        /* already gone (or compromised) */
      }
    },
  };
}

function notHeldHere(dir: string): void {
  if (heldHere.has(dir)) throw new Error(`The embedded database in ${dir} is already open in this process.`);
}

/** Locks `dir` now or throws (a live holder elsewhere; a stale lock is taken over). */
export function tryDataDirLock(dir: string, timing: LockTiming = LOCK_TIMING): DataDirLock {
  notHeldHere(dir);
  try {
    return held(dir, lockfile.lockSync(dir, options(dir, timing)));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOCKED') throw inUse(dir, timing);
    throw err;
  }
}

/**
 * Locks `dir`, waiting up to `timing.waitMs` for a held lock to be released or go stale (a restart
 * right after a crash); then throws naming the directory. A live holder refreshes the lock's mtime every
 * `timing.updateMs` and a holder that is gone never does again, so once the mtime is seen to change
 * while waiting, the holder is alive and the wait ends at once (a `create-org` run next to the running
 * server is told so after one refresh, ~5 s, instead of after the whole wait).
 */
export async function acquireDataDirLock(dir: string, timing: LockTiming = LOCK_TIMING): Promise<DataDirLock> {
  notHeldHere(dir);
  const step = Math.min(1000, timing.updateMs);
  const deadline = Date.now() + timing.waitMs;
  let seen: number | undefined;
  for (;;) {
    try {
      const release = await lockfile.lock(dir, options(dir, timing));
      return held(dir, () => void release().catch(() => undefined));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
    }
    const mtime = lockMtime(dir);
    if (seen !== undefined && mtime !== undefined && mtime !== seen) throw inUse(dir, timing, true);
    seen ??= mtime;
    if (Date.now() >= deadline) throw inUse(dir, timing);
    await new Promise((r) => setTimeout(r, step));
  }
}
