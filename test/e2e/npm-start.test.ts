import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { START_ENV, START_NODE_ARGS } from '../../tools/start-settings';
import { MAIN, ROOT, run, waitFor } from '../helpers/main-process';

/**
 * `npm start` as a new operator meets it: `--help` prints usage, SIGTERM to the npm process stops every
 * process it started (npm runs scripts through `sh -c`: without `exec` the shell dies and node is
 * orphaned), nothing is written to stderr on the way (no deprecation warnings), and the node process
 * runs with npm start's process settings (tools/start-settings.ts), an operator's own malloc values kept.
 */
const ports = { PORT: '0', SENSOR_PORT: '0', DETECTION_ADDRESS: '127.0.0.1:0' };

beforeAll(() => {
  if (!existsSync(MAIN)) throw new Error('dist/main.js is missing: run `npm run build` (npm test does it)');
});

/** Live descendants of `pid` (Linux `ps`). */
function descendants(pid: number): number[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number) as [number, number]);
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of rows) if (parent === p) (out.push(child), walk(child));
  };
  walk(pid);
  return out;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('--help', () => {
  it('node dist/main.js --help prints the usage and exits 0', async () => {
    const p = run(['--help'], {});
    expect(await p.exited).toBe(0);
    expect(p.stdout()).toMatch(/usage: npm start/);
    expect(p.stdout()).toMatch(/create-org/);
    expect(p.stderr()).toBe('');
  });

  it('npm start -- --help prints the same usage', () => {
    const out = execFileSync('npm', ['start', '--silent', '--', '--help'], { cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
    expect(out).toMatch(/usage: npm start/);
  });
});

describe('npm start', () => {
  let dataDir: string;
  let children: number[] = [];
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'gw-npm-start-'));
  });
  afterAll(() => {
    for (const pid of children.filter(alive)) process.kill(pid, 'SIGKILL'); // after a failure only
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves, writes nothing to stderr, and SIGTERM to npm stops every child process', async () => {
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: ROOT,
      // The operator's own MALLOC_ARENA_MAX wins over npm start's default; the other variable is defaulted.
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', DATA_DIR: dataDir, MALLOC_ARENA_MAX: '4', ...ports },
    });
    let out = '';
    let err = '';
    npm.stdout.on('data', (d: Buffer) => (out += d.toString()));
    npm.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<void>((res) => npm.on('exit', () => res()));
    await waitFor(() => out.match(/Ready: gateway (\S+)/), 'Ready', 60_000);
    children = descendants(npm.pid!);
    expect(children.length).toBeGreaterThan(0);
    // npm's own notices about its config (.npmrc) are npm's, not the program's.
    expect(err.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('npm warn'))).toEqual([]);

    // The program's process (the only node among npm's descendants running scripts/start.js) has the
    // V8 flags on its command line and glibc's malloc variables in its environment.
    const server = children.find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('scripts/start.js'));
    expect(server).toBeDefined();
    const argv = readFileSync(`/proc/${server}/cmdline`, 'utf8').split('\0');
    expect(argv.slice(1, 1 + START_NODE_ARGS.length)).toEqual([...START_NODE_ARGS]);
    const environ = new Map(readFileSync(`/proc/${server}/environ`, 'utf8').split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
    expect(environ.get('MALLOC_ARENA_MAX')).toBe('4');
    expect(environ.get('MALLOC_MMAP_THRESHOLD_')).toBe(START_ENV.MALLOC_MMAP_THRESHOLD_);

    npm.kill('SIGTERM');
    await exited;
    await waitFor(() => (children.some(alive) ? null : ([] as unknown as RegExpMatchArray)), 'every child of npm start to exit', 20_000);
    expect(children.filter(alive)).toEqual([]);
  }, 90_000);
});
