import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { DetectionPolicy, DetectorEntry } from '../shared/policy';

/** Helpers shared by the traffic benchmarks (bench-gateway.ts, bench-streams.ts): processes, quantiles, the policy. */

export const ROOT = resolve(__dirname, '..', '..');

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

/** CPU time (ms) of a process, and of its main thread alone (Linux /proc; undefined elsewhere). */
export function cpuMs(pid: number): { total: number; main: number } | undefined {
  try {
    const ticks = (stat: string) => {
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(f[11]) + Number(f[12])) * 10; // utime + stime, in 10 ms clock ticks
    };
    return { total: ticks(readFileSync(`/proc/${pid}/stat`, 'utf8')), main: ticks(readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8')) };
  } catch {
    return undefined;
  }
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
