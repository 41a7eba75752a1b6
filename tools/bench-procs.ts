import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { request } from 'undici';
import { createWriteStream, readdirSync, readFileSync } from 'node:fs';
import type { DetectionPolicy, DetectorEntry } from '#src/shared/policy';
import { PACKAGE_ROOT as ROOT } from './package-root';

/** Helpers shared by the traffic benchmarks (bench-gateway.ts, bench-streams.ts): processes, quantiles, the policy. */

export { ROOT };

/** Starts `node <cmd>` from the package root and resolves once its output matches `ready`; later output goes to `logTo` when given, else nowhere. */
export function start(cmd: string[], env: Record<string, string>, ready: RegExp, logTo?: string, timeoutMs = 60_000): Promise<{ child: ChildProcess; match: RegExpMatchArray }> {
  const child = spawn(process.execPath, cmd, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((res, rej) => {
    const timer = setTimeout(() => {
      child.kill();
      rej(new Error(`${cmd.join(' ')} did not start: ${out}`));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = out.match(ready);
      if (m) {
        clearTimeout(timer);
        // From here on the output is drained and dropped (the service logs every request).
        child.stdout!.off('data', onData);
        if (logTo) child.stdout!.pipe(createWriteStream(logTo));
        else child.stdout!.resume();
        out = '';
        res({ child, match: m });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => rej(new Error(`${cmd.join(' ')} exited ${code}: ${out}`)));
  });
}

export const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
export const r2 = (n: number) => Math.round(n * 100) / 100;

interface DetectorType {
  value: string;
  category: string;
}

/**
 * Sets the input and output detectors of the default policy to `entries(catalog)` (the catalog from
 * the management API's detector types); returns the detector types set.
 */
export async function configureDefaultPolicy(
  gateway: string,
  auth: Record<string, string>,
  entries: (types: DetectorType[]) => Array<{ detector_type: string; threshold: string; action: string }>,
): Promise<string[]> {
  const types = ((await (await fetch(`${gateway}/v1/policies/detector_types/`, { headers: auth })).json()) as { detector_types: DetectorType[] }).detector_types;
  const chosen = entries(types);
  const policies = (await (await fetch(`${gateway}/v1/policies/?is_default=true`, { headers: auth })).json()) as { results: Array<{ id: string }> };
  const res = await fetch(`${gateway}/v1/policies/${policies.results[0]!.id}/`, {
    method: 'PATCH',
    headers: auth,
    body: JSON.stringify({ input_detectors: chosen, output_detectors: chosen }),
  });
  if (!res.ok) throw new Error(`could not configure the policy: ${await res.text()}`);
  return chosen.map((e) => e.detector_type);
}

/** Every signature detector (no classifier backends) on input and output, action log, in the default policy. */
export function enableSignatureDetectors(gateway: string, auth: Record<string, string>): Promise<string[]> {
  return configureDefaultPolicy(gateway, auth, (types) =>
    types.filter((t) => !['prompt_defense', 'content_moderation'].includes(t.category)).map((t) => ({ detector_type: t.value, threshold: 'L2', action: 'log' })),
  );
}

/** Clock ticks per second of /proc's CPU times (getconf CLK_TCK; 100 where it cannot be asked). */
const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/** The fields of /proc/<pid>/stat (or a thread's) after the command name: [0] state, [1] ppid, [11] utime, [12] stime, [13] cutime, [14] cstime. */
function statFields(path: string): string[] {
  const stat = readFileSync(path, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

const ticksMs = (ticks: number) => (ticks * 1000) / CLK_TCK;
const ownTicks = (f: string[]) => Number(f[11]) + Number(f[12]);

/** User + system CPU time (ms) of a process, every thread (Linux /proc; throws when it is gone). */
export function processCpuMs(pid: number): number {
  return ticksMs(ownTicks(statFields(`/proc/${pid}/stat`)));
}

/** CPU time (ms) of a process, and of its main thread alone (Linux /proc; undefined elsewhere). */
export function cpuMs(pid: number): { total: number; main: number } | undefined {
  try {
    return { total: processCpuMs(pid), main: ticksMs(ownTicks(statFields(`/proc/${pid}/task/${pid}/stat`))) };
  } catch {
    return undefined;
  }
}

/** Every process below `pid`, children before grandchildren (Linux /proc). */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  const walk = (p: number) => {
    try {
      for (const tid of readdirSync(`/proc/${p}/task`)) {
        const children = readFileSync(`/proc/${p}/task/${tid}/children`, 'utf8').trim();
        if (children) for (const c of children.split(/\s+/)) {
          out.push(Number(c));
          walk(Number(c));
        }
      }
    } catch {
      // gone meanwhile
    }
  };
  walk(pid);
  return out;
}

/** utime + stime + cutime + cstime (ms) over a process and its descendants, every thread. */
export function treeCpuMs(pid: number): number {
  let ticks = 0;
  for (const p of [pid, ...descendants(pid)]) {
    try {
      const f = statFields(`/proc/${p}/stat`);
      ticks += ownTicks(f) + Number(f[13]) + Number(f[14]);
    } catch {
      // gone meanwhile
    }
  }
  return ticksMs(ticks);
}

/** CPU time (ms, user + system) of each thread of a process, by thread id (Linux /proc; threads gone meanwhile are left out). */
export function threadCpuMs(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      out.set(tid, ticksMs(ownTicks(statFields(`/proc/${pid}/task/${tid}/stat`))));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** VmRSS and VmHWM (peak) of a process, in kB (throws when it is gone). */
export function memoryKb(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** Resident memory (MB) of a process and its descendants. */
export function treeRssMb(pid: number): number {
  let kb = 0;
  for (const p of [pid, ...descendants(pid)]) {
    try {
      kb += memoryKb(p).rss || 0;
    } catch {
      // gone meanwhile
    }
  }
  return r2(kb / 1024);
}

/** An in-process detection policy: `types` on input and output at L2 with action block, nothing else configured. */
export function blockPolicy(types: readonly string[], cacheKey: string): DetectionPolicy {
  const entries = types.map((t) => ({ detector_type: t as DetectorEntry['detector_type'], threshold: 'L2' as const, action: 'block' as const }));
  return {
    cacheKey,
    policyMode: 'IO',
    inputDetectors: entries,
    outputDetectors: entries,
    allowList: { entries: [], match_type: 'contains' },
    denyList: { entries: [], match_type: 'contains' },
    customDetectors: [],
  };
}

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((res) => s.listen(0, '127.0.0.1', res));
  const port = (s.address() as AddressInfo).port;
  await new Promise((res) => s.close(res));
  return port;
}

/** Spawns `node <args>` and waits until every URL answers 200; resolves with the time from spawn to then. */
export async function startHealthy(args: string[], childEnv: Record<string, string>, urls: string[], timeoutMs: number): Promise<{ child: ChildProcess; ms: number }> {
  const t0 = process.hrtime.bigint();
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...childEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  const keep = (d: Buffer) => (tail = (tail + d.toString()).slice(-4000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exited: number | null | undefined;
  child.on('exit', (code) => (exited = code));
  const deadline = Date.now() + timeoutMs;
  for (const url of urls) {
    for (;;) {
      if (exited !== undefined) throw new Error(`${args.join(' ')} exited ${exited}: ${tail}`);
      if (Date.now() > deadline) {
        child.kill('SIGTERM');
        throw new Error(`${args.join(' ')} not healthy after ${timeoutMs} ms (${url}): ${tail}`);
      }
      try {
        const res = await request(url, { headersTimeout: 2000, bodyTimeout: 2000 });
        await res.body.text();
        if (res.statusCode === 200) break;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  // From here on the output (a log line per request at info) is drained and dropped.
  child.stdout!.off('data', keep);
  child.stderr!.off('data', keep);
  child.stdout!.resume();
  child.stderr!.resume();
  return { child, ms };
}

/**
 * For the `--require` probes of bench:memory and bench:c1-gc (JavaScript source, inside their template strings):
 * `role()`, the measured process's thread the probe runs in — main, database (PGlite), detection, classifier,
 * token or worker — told by the modules that thread has loaded. The probe must have `wt` (node:worker_threads).
 */
export const THREAD_ROLE_SOURCE = `const role = () => {
    if (wt.isMainThread) return 'main';
    const keys = Object.keys(require('node:module')._cache).join('\\n');
    if (/@electric-sql[\\\\/]pglite/.test(keys)) return 'database';
    if (/detection-worker\\.js/.test(keys)) return 'detection';
    if (/builtin-pool\\.js/.test(keys)) return 'classifier';
    if (/token-counter\\.js/.test(keys)) return 'token';
    return 'worker';
  };`;
