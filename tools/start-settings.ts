/**
 * The process settings `npm start` runs this project with (package.json "start", the Dockerfile's
 * ENTRYPOINT and ENV), in one place for the benchmarks: bench:perf and bench:memory start
 * `node dist/main.js all` with exactly these, so what they measure is what an operator runs
 * (test/unit/tools/start-settings.test.ts checks that package.json and the Dockerfile agree).
 *
 * - `--heap-growing-percent=30` (V8): every thread's heap (main, detection, database, pool workers: flags
 *   are per process) grows to 1.3× what a full collection left live before the next one, instead of up to
 *   4× (V8's dynamic factor). A V8 flag: only on the command line (NODE_OPTIONS refuses it). Measured
 *   with bench:perf and bench:memory (bench/RESULTS.md, "2026-11-29 (later): npm start's process
 *   settings"): about 150–190 MB less right after the benchmark, CPU per request within bench:perf's
 *   run-to-run spread (13% higher under bench:memory's shorter load).
 *   `--optimize-for-size` saves more (about 270 MB) but costs 2–3× the CPU per request: not a default.
 * - glibc malloc: two arenas instead of eight per core, and a fixed 128 KB mmap threshold (glibc raises
 *   it after a large buffer is freed and then keeps later ones on a heap it never returns). Read by glibc
 *   when the process starts, so they are set in the environment of the `exec`; an operator's own values win.
 */
export const START_NODE_ARGS: readonly string[] = ['--heap-growing-percent=30'];
export const START_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' };

/** package.json's "start" script as these settings make it (the unit test compares it with the file). */
export function startScript(): string {
  const envPart = Object.entries(START_ENV).map(([k, v]) => `${k}=\${${k}:-${v}}`).join(' ');
  return `${envPart} exec node ${START_NODE_ARGS.join(' ')} scripts/start.js all`;
}

/**
 * A benchmark's settings for the measured process, read from its environment: npm start's unless
 * BENCH_START_SETTINGS=false (the bare `node dist/main.js all`, for comparison), then the node options of
 * BENCH_NODE_ARGS (space-separated) after them.
 */
export function benchStartSettings(benchEnv: NodeJS.ProcessEnv): { enabled: boolean; nodeArgs: string[]; env: Record<string, string> } {
  const enabled = benchEnv.BENCH_START_SETTINGS !== 'false';
  const extra = (benchEnv.BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  return enabled ? { enabled, nodeArgs: [...START_NODE_ARGS, ...extra], env: { ...START_ENV } } : { enabled, nodeArgs: extra, env: {} };
}
