import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { createDetectionClient } from '#src/shared/detection-client';
import type { DetectorType } from '#src/shared/detector-catalog';
import { DETECTOR_CATALOG } from '#src/shared/detector-catalog';
import type { DetectionPolicy } from '#src/shared/policy';
import { processCpuMs, r2, start } from './bench-procs';
import { writeSection } from './results-sections';
import { CLASSIFIER_CATEGORIES, generateProse, PACKAGE_ROOT } from './text-corpus';

/**
 * `npm run bench:hop`: CPU per Detect call of the internal hop (the gateway's detection client → the
 * detection service), measured on both sides: the detection service runs as its own process
 * (`node dist/main.js detection`, its CPU read from /proc/<pid>/stat) and the client in this process
 * (process.cpuUsage). Every call sends a fresh 1 KB prose text with the same policy, as the gateway does.
 *
 * Scenarios, interleaved in the same run (so their ratios hold however busy the machine is):
 *   - `tcp, uncached`: TCP, the compiled-config cache off (DETECTION_CONFIG_CACHE_ENTRIES=0):
 *     every call decodes, validates and compiles its config, as before the cache existed;
 *   - `tcp, cached`: TCP, the cache on (default);
 *   - `uds, cached`: the same over a Unix domain socket (how `all` mode reaches its co-located detection).
 * Each for two policies: no detectors (the hop and config handling alone) and every signature detector on
 * input and output with a deny list, an allow list and custom detectors (what a configured project sends).
 */

const WARMUP = 300;
const CALLS = Number(process.env.BENCH_HOP_CALLS ?? 4000);
const CONCURRENCY = 8;
const TEXTS = 64;
const SECTION_TITLE = '## Detection hop (npm run bench:hop)';

interface Scenario {
  name: string;
  transport: 'tcp' | 'uds';
  cache: boolean;
  /** Another build's package root to run detection from (BENCH_HOP_BEFORE). */
  root?: string;
}

/**
 * BENCH_HOP_BEFORE=<package root of an earlier build> adds its detection service as the first row (e.g. the
 * commit before the cache: `git archive <commit> | tar -x -C /tmp/before`, node_modules linked, `npm run build`).
 */
const BEFORE = process.env.BENCH_HOP_BEFORE;
const SCENARIOS: Scenario[] = [
  ...(BEFORE ? [{ name: 'tcp, earlier build', transport: 'tcp' as const, cache: false, root: BEFORE }] : []),
  { name: 'tcp, uncached', transport: 'tcp', cache: false },
  { name: 'tcp, cached', transport: 'tcp', cache: true },
  { name: 'uds, cached', transport: 'uds', cache: true },
];
const ROUNDS = Number(process.env.BENCH_HOP_ROUNDS ?? 3);

function signatureTypes(): DetectorType[] {
  return DETECTOR_CATALOG.filter((d) => !CLASSIFIER_CATEGORIES.has(d.category)).map((d) => d.value);
}

function policies(): Array<{ name: string; policy: DetectionPolicy }> {
  const entries = signatureTypes().map((t) => ({ detector_type: t, threshold: 'L2' as const, action: 'block' as const }));
  const empty = { entries: [], match_type: 'contains' as const };
  return [
    {
      name: 'no detectors',
      policy: { cacheKey: 'bench:hop:empty:v1', policyMode: 'IO', inputDetectors: [], outputDetectors: [], allowList: empty, denyList: empty, customDetectors: [] },
    },
    {
      name: 'signature detectors + lists',
      policy: {
        cacheKey: 'bench:hop:full:v1',
        policyMode: 'IO',
        inputDetectors: entries,
        outputDetectors: entries,
        allowList: { entries: ['internal wiki', 'status page'], match_type: 'contains' },
        denyList: { entries: Array.from({ length: 20 }, (_, i) => `forbidden phrase number ${i}`), match_type: 'contains' },
        customDetectors: [
          { name: 'ticket', pattern: '\\bTICKET-[0-9]{4,8}\\b', action: 'log' },
          { name: 'project', pattern: '(?i)project\\s+nightingale', action: 'block' },
        ],
      },
    },
  ];
}

interface Row {
  scenario: string;
  policy: string;
  serverMs: number;
  clientMs: number;
  wallUs: number;
  /** Lowest and highest detection ms/call over the rounds. */
  range?: number[];
}

async function startDetection(scenario: Scenario): Promise<{ child: ChildProcess; address: string; cleanup(): void }> {
  const socket = path.join(os.tmpdir(), `bench-hop-${process.pid}.sock`);
  fs.rmSync(socket, { force: true });
  const env: Record<string, string> = {
    DETECTION_ADDRESS: '127.0.0.1:0',
    LOG_LEVEL: 'warn',
    DETECTION_CONFIG_CACHE_ENTRIES: scenario.cache ? '256' : '0',
    ...(scenario.transport === 'uds' ? { DETECTION_SOCKET: socket } : {}),
  };
  const main = path.join(scenario.root ?? PACKAGE_ROOT, 'dist', 'main.js');
  const { child, match } = await start([main, 'detection'], env, /detection grpc:\/\/(\S+)/);
  const address = scenario.transport === 'uds' ? `unix:${socket}` : (match[1] as string).replace(/,$/, '');
  return { child, address, cleanup: () => fs.rmSync(socket, { force: true }) };
}

async function run(scenario: Scenario, policy: { name: string; policy: DetectionPolicy }, texts: string[]): Promise<Row> {
  const detection = await startDetection(scenario);
  const client = createDetectionClient({ address: detection.address, timeoutMs: 10_000 });
  try {
    let next = 0;
    const drive = async (calls: number) => {
      const worker = async () => {
        while (next < calls) {
          const i = next++;
          const text = texts[i % texts.length] as string;
          await client.detect({ text, direction: i % 2 === 0 ? 'input' : 'output', policy: policy.policy });
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
      next = 0;
    };
    await drive(WARMUP);
    const pid = detection.child.pid as number;
    const server0 = processCpuMs(pid);
    const client0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    await drive(CALLS);
    const wall = Number(process.hrtime.bigint() - t0) / 1e6;
    const client1 = process.cpuUsage(client0);
    const serverMs = processCpuMs(pid) - server0;
    return {
      scenario: scenario.name,
      policy: policy.name,
      serverMs: serverMs / CALLS,
      clientMs: (client1.user + client1.system) / 1000 / CALLS,
      wallUs: (wall * 1000) / CALLS,
    };
  } finally {
    client.close();
    detection.child.kill('SIGTERM');
    await new Promise((r) => detection.child.once('exit', r));
    detection.cleanup();
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

export async function main(): Promise<void> {
  const texts = Array.from({ length: TEXTS }, (_, i) => generateProse({ seed: 17 + i, length: 1024, piiEvery: 4096 }));
  const samples: Row[] = [];
  // Rounds interleave the scenarios, so a busy spell of the (shared) machine does not land on one row only.
  for (let round = 0; round < ROUNDS; round++) {
    for (const policy of policies()) {
      for (const scenario of SCENARIOS) {
        const row = await run(scenario, policy, texts);
        samples.push(row);
        process.stdout.write(`round ${round + 1} | ${row.policy} | ${row.scenario}: detection ${row.serverMs.toFixed(3)} ms CPU/call, client ${row.clientMs.toFixed(3)}, ${row.wallUs.toFixed(0)} µs wall/call\n`);
      }
    }
  }
  const rows: Row[] = policies().flatMap((policy) =>
    SCENARIOS.map((scenario) => {
      const mine = samples.filter((r) => r.policy === policy.name && r.scenario === scenario.name);
      return { scenario: scenario.name, policy: policy.name, serverMs: median(mine.map((r) => r.serverMs)), clientMs: median(mine.map((r) => r.clientMs)), wallUs: median(mine.map((r) => r.wallUs)), range: [Math.min(...mine.map((r) => r.serverMs)), Math.max(...mine.map((r) => r.serverMs))] };
    }),
  );
  const lines = [
    SECTION_TITLE,
    '',
    `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}; ${ROUNDS} rounds × ${CALLS} Detect calls per row`,
    `(each after ${WARMUP} warm-up calls on a fresh detection process), ${CONCURRENCY} in flight, a fresh 1 KB prose text each. CPU per call, median of the rounds:`,
    '`detection` = the detection process (`node dist/main.js detection`, its /proc CPU), `client` = the gateway-side detection client (this process).',
    '`uncached` = DETECTION_CONFIG_CACHE_ENTRIES=0. `x first` = detection CPU against the first row of the same policy (lower is better).',
    '',
    '| policy | hop | detection ms/call (range) | x first | client ms/call | wall µs/call |',
    '|---|---|---|---|---|---|',
    ...rows.map((row) => {
      const base = rows.find((r) => r.policy === row.policy && r.scenario === SCENARIOS[0]!.name)!;
      const range = row.range ? ` (${row.range.map((v) => v.toFixed(3)).join('–')})` : '';
      return `| ${row.policy} | ${row.scenario} | ${row.serverMs.toFixed(3)}${range} | ${r2(row.serverMs / base.serverMs)} | ${row.clientMs.toFixed(3)} | ${row.wallUs.toFixed(0)} |`;
    }),
    '',
  ];
  writeSection(path.join(PACKAGE_ROOT, 'bench', 'RESULTS.md'), SECTION_TITLE, lines.join('\n'));
  process.stdout.write(`${lines.join('\n')}\nwritten to bench/RESULTS.md\n`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
