import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join, resolve } from 'node:path';

/** The shipped program as an operator runs it: `node dist/main.js …` (built by `npm test` before jest). */
export const ROOT = resolve(__dirname, '..', '..');
export const MAIN = join(ROOT, 'dist', 'main.js');
/** What `npm start` runs: dist/main.js after a staleness check of dist/ (scripts/build.js isStale). */
export const START = join(ROOT, 'scripts', 'start.js');

export interface Proc {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Starts `node dist/main.js <args>` (or `script`) with only PATH, LOG_LEVEL=warn and `env` in its environment. */
export function run(args: string[], env: Record<string, string>, script = MAIN): Proc {
  const child = spawn(process.execPath, [script, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

export async function waitFor(fn: () => RegExpMatchArray | null, what: string, ms = 20000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const m = fn();
    if (m) return m;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}
