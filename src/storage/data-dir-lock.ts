import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/**
 * An embedded database directory may be opened by one process only (PGlite has no multi-process
 * locking; two writers would corrupt it). A pid file guards it; a stale file (its process is gone) is
 * taken over.
 */
export interface DataDirLock {
  release(): void;
}

/** Whether a process with this id exists (EPERM: it does, owned by another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function acquireDataDirLock(dir: string): DataDirLock {
  const file = join(dir, '..', 'gateway.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          try {
            unlinkSync(file);
          } catch {
            /* already gone */
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number.parseInt(readFileSync(file, 'utf8'), 10);
      if (Number.isInteger(owner) && owner !== process.pid && processAlive(owner)) {
        throw new Error(
          `The embedded database in ${dir} is in use by process ${owner}. Stop it, or set DATA_DIR to another directory, or use DATABASE_URL for several instances.`,
        );
      }
      if (owner === process.pid) {
        throw new Error(`The embedded database in ${dir} is already open in this process.`);
      }
      unlinkSync(file); // stale: its process is gone
    }
  }
  throw new Error(`Could not lock the embedded database directory ${dir}`);
}
