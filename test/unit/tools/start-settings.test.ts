import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchStartSettings, START_ENV, START_NODE_ARGS, startScript } from '../../../tools/start-settings';

/**
 * npm start's process settings live in tools/start-settings.ts for the benchmarks; package.json's
 * "start" script and the Dockerfile must say the same, or the benchmarks measure something operators
 * do not run. (test/e2e/npm-start.test.ts checks the running process's command line and environment.)
 */
const ROOT = join(__dirname, '..', '..', '..');

describe('npm start process settings', () => {
  it('package.json "start" is the script the settings make', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toBe(startScript());
    expect(startScript()).toBe('MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2} MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-131072} exec node --heap-growing-percent=30 scripts/start.js all');
  });

  it('the Dockerfile runs node with the same flags and environment', () => {
    const docker = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const entry = /^ENTRYPOINT (\[.*\])$/m.exec(docker);
    expect(entry).not.toBeNull();
    expect(JSON.parse(entry![1]!)).toEqual(['node', ...START_NODE_ARGS, 'dist/main.js']);
    const envLines = docker.split('\n').filter((l) => l.startsWith('ENV '));
    for (const [k, v] of Object.entries(START_ENV)) expect(envLines.some((l) => l.split(/\s+/).includes(`${k}=${v}`))).toBe(true);
  });

  it('benchmarks use them unless told not to', () => {
    expect(benchStartSettings({})).toEqual({ enabled: true, nodeArgs: ['--heap-growing-percent=30'], env: { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' } });
    expect(benchStartSettings({ BENCH_START_SETTINGS: 'false' })).toEqual({ enabled: false, nodeArgs: [], env: {} });
    // BENCH_NODE_ARGS comes after npm start's options, with or without them.
    expect(benchStartSettings({ BENCH_NODE_ARGS: ' --max-semi-space-size=2  --trace-gc ' }).nodeArgs).toEqual(['--heap-growing-percent=30', '--max-semi-space-size=2', '--trace-gc']);
    expect(benchStartSettings({ BENCH_START_SETTINGS: 'false', BENCH_NODE_ARGS: '--optimize-for-size' }).nodeArgs).toEqual(['--optimize-for-size']);
  });
});
