import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { acquireDataDirLock, lockPathOf, tryDataDirLock, type LockTiming } from '../../../src/storage/data-dir-lock';

/**
 * The single-instance lock of the embedded database (proper-lockfile: an mtime-refreshed directory, no
 * process ids). A holder that was killed (a container restarted where the new process reuses the old
 * pid) does not keep the directory locked; a live holder does.
 */
const FAST: LockTiming = { staleMs: 2000, updateMs: 300, waitMs: 6000 };
const ROOT = resolve(__dirname, '..', '..', '..');

/** A separate node process holding the lock on `dir` (the compiled module: dist/storage/data-dir-lock.js). */
function holder(dir: string): Promise<{ kill(signal: NodeJS.Signals): Promise<void> }> {
  const code = `const { tryDataDirLock } = require(${JSON.stringify(join(ROOT, 'dist', 'storage', 'data-dir-lock.js'))});
    tryDataDirLock(${JSON.stringify(dir)}, ${JSON.stringify(FAST)}); console.log('locked'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((res) => child.on('exit', () => res()));
  return new Promise((res, rej) => {
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('locked')) res({ kill: (signal) => (child.kill(signal), exited) });
    });
    child.on('exit', (code) => rej(new Error(`holder exited ${code}`)));
  });
}

describe('data-dir lock', () => {
  let base: string;
  let dir: string;
  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'dir-lock-'));
    dir = join(base, 'pglite');
    mkdirSync(dir);
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  beforeAll(() => {
    if (!existsSync(join(ROOT, 'dist', 'storage', 'data-dir-lock.js'))) throw new Error('dist/ is missing: run `npm run build`');
  });

  it('is exclusive within a process and released by release()', async () => {
    const lock = await acquireDataDirLock(dir, FAST);
    expect(existsSync(lockPathOf(dir))).toBe(true);
    await expect(acquireDataDirLock(dir, FAST)).rejects.toThrow(/already open in this process/);
    expect(() => tryDataDirLock(dir, FAST)).toThrow(/already open in this process/);
    lock.release();
    await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(lockPathOf(dir))).toBe(false);
    (await acquireDataDirLock(dir, FAST)).release();
  });

  it('takes over a lock left by a process that is gone, whatever pid runs now', async () => {
    // What a killed container leaves: the lock directory, no longer refreshed (pids play no part).
    mkdirSync(lockPathOf(dir));
    const past = (Date.now() - 60_000) / 1000;
    utimesSync(lockPathOf(dir), past, past);
    const lock = tryDataDirLock(dir, FAST);
    lock.release();
  });

  it('refuses while another live process holds it', async () => {
    const other = await holder(dir);
    try {
      expect(() => tryDataDirLock(dir, FAST)).toThrow(/in use by another process/);
      await expect(acquireDataDirLock(dir, { ...FAST, waitMs: 3000 })).rejects.toThrow(/in use by another process/);
    } finally {
      await other.kill('SIGTERM');
    }
  }, 20_000);

  it('gives up as soon as it sees a live holder refresh the lock, not at the end of its wait', async () => {
    const other = await holder(dir);
    try {
      // A wait far longer than the test's own timeout: only the early answer can pass.
      await expect(acquireDataDirLock(dir, { ...FAST, waitMs: 120_000 })).rejects.toThrow(/in use by another process \(its holder refreshed the lock .* while this process waited for it\)/);
    } finally {
      await other.kill('SIGTERM');
    }
  }, 20_000);

  it('is acquired once the holder was killed (SIGKILL: no clean-up) and its lock went stale', async () => {
    const other = await holder(dir);
    await other.kill('SIGKILL');
    expect(existsSync(lockPathOf(dir))).toBe(true); // left behind
    const lock = await acquireDataDirLock(dir, FAST); // waits until the lock is stale (≤ staleMs)
    lock.release();
  }, 20_000);
});
