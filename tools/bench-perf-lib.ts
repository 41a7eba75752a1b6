/**
 * The pure part of `npm run bench:perf` (bench-perf.ts): the benign prompts, and the rendering of the
 * issue-17 table from the measurements of N runs as ranges (min–max, median) next to the targets, with
 * met / not met. No I/O and no timing here, so it is unit-tested (test/unit/tools/bench-perf-lib.test.ts).
 */
import { prng } from './text-corpus';

/**
 * The systems compared, each in its own process(es) in front of (or being) the same fake upstream.
 * `design`: the measured floor of this design (bench-design-floor.ts: the empty proxy plus the two Detect
 * calls over this project's detection socket, nothing else); its CPU includes the detection service's.
 */
export type SystemId = 'direct' | 'floor' | 'design' | 'ours' | 'portkey';

export interface Lat {
  p50: number;
  p99: number;
}

/** What one run measured for one system; a field is absent when not measured (or broken: see the errors). */
export interface SystemRun {
  /** Chat completions, concurrency 1 (ms). */
  c1?: Lat;
  /** Chat completions from `connections` connections: requests per second. */
  rps?: number;
  /** CPU ms per request under that load, every process of the system (its process tree, all threads). */
  cpuMsPerRequest?: number;
  /** Non-2xx answers and transport errors: concurrency 1 and load. */
  errors?: number;
  /** Streams, sequential: time to the first body byte and to the first text token (ms). */
  ttfbMessages?: Lat;
  firstTokenMessages?: Lat;
  ttfbChat?: Lat;
  firstTokenChat?: Lat;
  /** Why a stream kind could not be measured (status and body of the failed attempt). */
  streamErrors?: { messages?: string; chat?: string };
  /** Many streams at once: how many of `n` completed, and the outcome counts. */
  streams?: { n: number; complete: number; outcome: string };
  /** Resident memory of the process tree (MB): right after healthy, after the benchmark, and at rest (BENCH_REST_S later, nothing sent meanwhile). */
  rssStartMb?: number;
  rssAfterMb?: number;
  rssRestMb?: number;
  /** From spawn to healthy (ms). */
  startMs?: number;
  /**
   * This project only: its detection engine and policy called in the driver's process, an input and an
   * output scan per request, nothing else (no HTTP, gRPC, database): CPU ms per request and latency (ms).
   */
  detectorsAlone?: { cpuMs: number; p50: number; p99: number; /** The input scan alone (before the upstream call). */ inputP50?: number };
  /**
   * This project only: one Detect with no detectors over its detection socket, from the driver (the
   * gateway's client code): CPU ms per call of the caller and of the service, wall ms per call (p50).
   */
  hopAlone?: { clientMs: number; serverMs: number; p50: number };
  /** 1 MB /v1/detect, sequential (ms), and how many calls failed (e.g. 503 past the detection deadline). */
  detect1mb?: { p50: number; max: number; failed?: number };
}

export interface PerfRun {
  systems: Partial<Record<SystemId, SystemRun>>;
}

export interface Stats {
  min: number;
  max: number;
  median: number;
}

export function stats(values: number[]): Stats | undefined {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return undefined;
  const mid = Math.floor(v.length / 2);
  const median = v.length % 2 === 1 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
  return { min: v[0]!, max: v[v.length - 1]!, median };
}

/** A number with the precision its size deserves: 0.12, 2.3, 41, 1,024. */
export function num(v: number): string {
  const a = Math.abs(v);
  if (a < 1) return v.toFixed(2);
  if (a < 100) return v.toFixed(1);
  return Math.round(v).toLocaleString('en-US');
}

/**
 * Values of N runs as `min–max<unit><then> (median m)` (one value, or all equal: just it). `unit` is
 * written as given (' ms', '%', '×'); `then` follows it, before the median. `signed`: an added quantity,
 * written `+2.3–4.7` (each number signed when one is negative: `-0.10–+0.20`).
 */
export function range(values: number[], { unit = '', then = '', signed = false }: { unit?: string; then?: string; signed?: boolean } = {}): string {
  const s = stats(values);
  if (!s) return '';
  const anyNegative = s.min < 0;
  const first = (v: number) => (signed && v >= 0 ? `+${num(v)}` : num(v));
  const rest = (v: number) => (signed && anyNegative && v >= 0 ? `+${num(v)}` : num(v));
  if (num(s.min) === num(s.max)) return `${first(s.min)}${unit}${then}`;
  return `${first(s.min)}–${rest(s.max)}${unit}${then} (median ${rest(s.median)})`;
}

/**
 * met / not met: decided on the median over the runs (`medianPass`), with how many runs met it on
 * their own. `undefined` (nothing measured) → n/a.
 */
export function judge(medianPass: boolean | undefined, perRun: Array<boolean | undefined>): string {
  const judged = perRun.filter((x): x is boolean => x !== undefined);
  if (medianPass === undefined || judged.length === 0) return 'n/a';
  const k = judged.filter(Boolean).length;
  return `${medianPass ? 'met' : 'not met'} (${k}/${judged.length} runs)`;
}

const defined = (xs: Array<number | undefined>): number[] => xs.filter((x): x is number => x !== undefined && Number.isFinite(x));

/** One system's value per run (runs where it is missing are left out). */
function per(runs: PerfRun[], f: (r: PerfRun) => number | undefined): number[] {
  return defined(runs.map(f));
}

const added = (runs: PerfRun[], sys: SystemId, f: (s: SystemRun) => number | undefined) =>
  per(runs, (r) => {
    const a = r.systems[sys] && f(r.systems[sys]!);
    const d = r.systems.direct && f(r.systems.direct);
    return a === undefined || d === undefined ? undefined : a - d;
  });

const ratio = (runs: PerfRun[], a: SystemId, b: SystemId, f: (s: SystemRun) => number | undefined, scale = 1) =>
  per(runs, (r) => {
    const x = r.systems[a] && f(r.systems[a]!);
    const y = r.systems[b] && f(r.systems[b]!);
    return x === undefined || y === undefined || y === 0 ? undefined : (x / y) * scale;
  });

/** Pass of the median of `values` and of each run's value, for judge(). */
function check(runs: PerfRun[], f: (r: PerfRun) => number | undefined, pass: (v: number) => boolean): [boolean | undefined, Array<boolean | undefined>] {
  const s = stats(per(runs, f));
  return [s ? pass(s.median) : undefined, runs.map((r) => { const v = f(r); return v === undefined || !Number.isFinite(v) ? undefined : pass(v); })];
}

export interface Row {
  figure: string;
  ours: string;
  portkey: string;
  floor: string;
  target: string;
  verdict: string;
}

/** The cell of a system that was not measured in any run: why (a stream error, or skipped). */
function missing(runs: PerfRun[], sys: SystemId, why?: (s: SystemRun) => string | undefined): string {
  if (runs.every((r) => !r.systems[sys])) return sys === 'portkey' ? 'skipped' : '';
  const reasons = [...new Set(runs.map((r) => (r.systems[sys] && why ? why(r.systems[sys]!) : undefined)).filter((x): x is string => !!x))];
  return reasons.length ? `not measured: ${reasons.join('; ')}` : '';
}

const orMissing = (cell: string, runs: PerfRun[], sys: SystemId, why?: (s: SystemRun) => string | undefined) => cell || missing(runs, sys, why);

/** The rows of the issue's table, from N runs. `streams`: the number of concurrent streams opened. */
export function rows(runs: PerfRun[], streams: number): Row[] {
  const out: Row[] = [];
  const c1 = (q: keyof Lat, figure: string, limit: number) => {
    const f = (s: SystemRun) => s.c1?.[q];
    const cell = (sys: SystemId) => orMissing(range(added(runs, sys, f), { unit: ' ms', signed: true }), runs, sys);
    const [m, each] = check(runs, (r) => added([r], 'ours', f)[0], (v) => v <= limit);
    out.push({ figure, ours: cell('ours'), portkey: cell('portkey'), floor: cell('floor'), target: `≤ +${num(limit)} ms`, verdict: judge(m, each) });
  };
  c1('p50', 'added p50 at concurrency 1 (chat completions, vs direct)', 1);
  c1('p99', 'added p99 at concurrency 1', 3);

  // Throughput: % of the empty proxy, % of direct, × Portkey.
  {
    const rps = (s: SystemRun) => s.rps;
    const ofFloor = (sys: SystemId) => ratio(runs, sys, 'floor', rps, 100);
    const ofDirect = (sys: SystemId) => ratio(runs, sys, 'direct', rps, 100);
    const xPortkey = ratio(runs, 'ours', 'portkey', rps);
    const oursCell = [
      range(ofFloor('ours'), { unit: '%', then: ' of the empty proxy' }),
      range(ofDirect('ours'), { unit: '%', then: ' of direct' }),
      range(xPortkey, { unit: '× Portkey' }),
    ].filter(Boolean).join('; ');
    const portkeyCell = [range(ofFloor('portkey'), { unit: '%', then: ' of the empty proxy' }), range(ofDirect('portkey'), { unit: '%', then: ' of direct' })].filter(Boolean).join('; ');
    const floorCell = range(ofDirect('floor'), { unit: '%', then: ' of direct' });
    const passRun = (r: PerfRun) => {
      const f = ratio([r], 'ours', 'floor', rps, 100)[0];
      if (f === undefined) return undefined;
      const x = ratio([r], 'ours', 'portkey', rps)[0];
      return f >= 20 && (x === undefined || x >= 2);
    };
    const sf = stats(ofFloor('ours'));
    const sx = stats(xPortkey);
    const m = sf ? sf.median >= 20 && (!sx || sx.median >= 2) : undefined;
    out.push({
      figure: 'throughput at concurrency 32 (chat completions)',
      ours: orMissing(oursCell, runs, 'ours'),
      portkey: orMissing(portkeyCell, runs, 'portkey'),
      floor: orMissing(floorCell, runs, 'floor'),
      target: `≥ 20% of the empty proxy and ≥ 2× Portkey${sx ? '' : ' (Portkey not measured: first part only)'}`,
      verdict: judge(m, runs.map(passRun)),
    });
  }

  // CPU per request, all processes of each system; × the empty proxy's.
  {
    const cpu = (s: SystemRun) => s.cpuMsPerRequest;
    const cell = (sys: SystemId) => {
      const ms = range(per(runs, (r) => r.systems[sys] && cpu(r.systems[sys]!)), { unit: ' ms' });
      const x = sys === 'floor' ? '' : range(ratio(runs, sys, 'floor', cpu), { unit: '× the empty proxy' });
      return orMissing(ms && (x ? `${ms} = ${x}` : ms), runs, sys);
    };
    const [m, each] = check(runs, (r) => ratio([r], 'ours', 'floor', cpu)[0], (v) => v <= 5);
    out.push({ figure: 'CPU per request, all processes (under the concurrency-32 load)', ours: cell('ours'), portkey: cell('portkey'), floor: cell('floor'), target: '≤ 5× the empty proxy\'s', verdict: judge(m, each) });
  }

  // Streams: time to first byte (target) and to the first token (reported), added vs direct.
  const stream = (figure: string, f: (s: SystemRun) => number | undefined, kind: 'messages' | 'chat', limit?: number) => {
    const cell = (sys: SystemId) => orMissing(range(added(runs, sys, f), { unit: ' ms', signed: true }), runs, sys, (s) => s.streamErrors?.[kind]);
    const [m, each] = limit === undefined ? [undefined, []] : check(runs, (r) => added([r], 'ours', f)[0], (v) => v <= limit);
    out.push({
      figure,
      ours: cell('ours'),
      portkey: cell('portkey'),
      floor: cell('floor'),
      target: limit === undefined ? 'none in the issue (reported)' : `≤ +${num(limit)} ms`,
      verdict: limit === undefined ? '—' : judge(m, each),
    });
  };
  stream('stream time to first byte, sensor `/v1/messages` (p50, vs direct)', (s) => s.ttfbMessages?.p50, 'messages', 1);
  stream('stream time to first byte, gateway chat completions (p50, vs direct)', (s) => s.ttfbChat?.p50, 'chat', 1);
  stream('stream first token, sensor `/v1/messages` (p50, vs direct)', (s) => s.firstTokenMessages?.p50, 'messages');
  stream('stream first token, gateway chat completions (p50, vs direct)', (s) => s.firstTokenChat?.p50, 'chat');

  // Many streams at once.
  {
    const cell = (sys: SystemId) => {
      const complete = per(runs, (r) => r.systems[sys]?.streams?.complete);
      if (complete.length === 0) return missing(runs, sys, (s) => s.streamErrors?.chat);
      const worst = runs.map((r) => r.systems[sys]?.streams).filter((x) => x !== undefined).sort((a, b) => a.complete - b.complete)[0]!;
      return `${range(complete)} of ${worst.n.toLocaleString('en-US')} complete${worst.complete < worst.n ? ` (worst run: ${worst.outcome})` : ''}`;
    };
    const [m, each] = check(runs, (r) => (r.systems.ours?.streams ? r.systems.ours.streams.n - r.systems.ours.streams.complete : undefined), (v) => v === 0);
    out.push({ figure: `${streams.toLocaleString('en-US')} concurrent streams (gateway chat completions, ~1 s each)`, ours: cell('ours'), portkey: cell('portkey'), floor: cell('floor'), target: 'all complete', verdict: judge(m, each) });
  }

  {
    // The floor of this project's own work (reported, no target): the detectors alone, the hop alone, and what follows from them.
    const of = <T>(f: (s: SystemRun) => T | undefined) => (r: PerfRun) => (r.systems.ours ? f(r.systems.ours) : undefined);
    const floorCpu = (r: PerfRun) => r.systems.floor?.cpuMsPerRequest;
    const floorAdded = (r: PerfRun) => (r.systems.floor?.c1 && r.systems.direct?.c1 ? r.systems.floor.c1.p50 - r.systems.direct.c1.p50 : undefined);
    const sum = (...xs: Array<number | undefined>) => (xs.some((x) => x === undefined) ? undefined : (xs as number[]).reduce((a, b) => a + b, 0));
    const over = (x: number | undefined, y: number | undefined) => (x === undefined || y === undefined || y === 0 ? undefined : x / y);
    const xEmpty = (cpu: (r: PerfRun) => number | undefined) => range(per(runs, (r) => over(cpu(r), floorCpu(r))), { unit: '× the empty proxy\'s whole request' });
    const aloneCpu = of((s) => s.detectorsAlone?.cpuMs);
    if (per(runs, aloneCpu).length > 0) {
      out.push({
        figure: 'detectors alone, in-process (this project\'s engine and policy, an input and an output scan per request; no HTTP, gRPC, database)',
        ours: `CPU ${range(per(runs, aloneCpu), { unit: ' ms' })} per request = ${xEmpty(aloneCpu)}; latency p50 ${range(per(runs, of((s) => s.detectorsAlone?.p50)), { unit: ' ms' })}, p99 ${range(per(runs, of((s) => s.detectorsAlone?.p99)), { unit: ' ms' })}`,
        portkey: '', floor: '', target: 'none (part of the floor below)', verdict: '—',
      });
    }
    const hopCpu = of((s) => (s.hopAlone ? s.hopAlone.clientMs + s.hopAlone.serverMs : undefined));
    if (per(runs, hopCpu).length > 0) {
      out.push({
        figure: 'the internal hop alone (a Detect with no detectors over the detection socket: CPU with 16 in flight, wall one at a time; a request makes two)',
        ours: `CPU ${range(per(runs, hopCpu), { unit: ' ms' })} per call (caller ${range(per(runs, of((s) => s.hopAlone?.clientMs)), { unit: ' ms' })}, detection service ${range(per(runs, of((s) => s.hopAlone?.serverMs)), { unit: ' ms' })}); wall p50 ${range(per(runs, of((s) => s.hopAlone?.p50)), { unit: ' ms' })}`,
        portkey: '', floor: '', target: 'none (part of the floor below)', verdict: '—',
      });
    }
    if (per(runs, aloneCpu).length > 0 && per(runs, hopCpu).length > 0) {
      // Work any request of this design does: what the empty proxy does, the two scans, the two hops.
      const cpu = (r: PerfRun) => sum(floorCpu(r), aloneCpu(r), hopCpu(r) === undefined ? undefined : 2 * hopCpu(r)!);
      const p50 = (r: PerfRun) => sum(floorAdded(r), of((s) => s.detectorsAlone?.p50)(r), of((s) => (s.hopAlone ? 2 * s.hopAlone.p50 : undefined))(r));
      // Before the first byte of a stream: the input scan and its hop (the output is scanned later).
      const floorTtfb = (r: PerfRun) => (r.systems.floor?.ttfbChat && r.systems.direct?.ttfbChat ? r.systems.floor.ttfbChat.p50 - r.systems.direct.ttfbChat.p50 : undefined);
      const ttfb = (r: PerfRun) => sum(floorTtfb(r), of((s) => s.detectorsAlone?.inputP50)(r), of((s) => s.hopAlone?.p50)(r));
      out.push({
        figure: 'floor of this design (the empty proxy + the two scans alone + two hops alone; nothing else: no audit, limits, logging)',
        ours: [
          `CPU ${range(per(runs, cpu), { unit: ' ms' })} per request = ${xEmpty(cpu)}`,
          `added p50 ≥ ${range(per(runs, p50), { unit: ' ms', signed: true })}`,
          ...(per(runs, ttfb).length ? [`added stream time to first byte (chat) ≥ ${range(per(runs, ttfb), { unit: ' ms', signed: true })}`] : []),
        ].join('; '),
        portkey: '', floor: '', target: 'none (lower bound of the CPU and latency lines)', verdict: '—',
      });
    }
  }

  {
    // The design's floor measured end to end (bench-design-floor.ts), in the same runs and phases as this
    // project: what it adds, and what this project adds beyond it (its own work).
    const d = (r: PerfRun) => r.systems.design;
    if (runs.some((r) => d(r)?.c1 || d(r)?.rps !== undefined)) {
      const beyond = (f: (s: SystemRun) => number | undefined) =>
        per(runs, (r) => { const o = r.systems.ours && f(r.systems.ours); const x = d(r) && f(d(r)!); return o === undefined || x === undefined ? undefined : o - x; });
      const both = (f: (s: SystemRun) => number | undefined, what: string) => {
        const own = range(added(runs, 'design', f), { unit: ' ms', signed: true });
        const more = range(beyond(f), { unit: ' ms', signed: true });
        return own ? `${what} ${own}${more ? ` (this project ${more} beyond it)` : ''}` : '';
      };
      const cpu = (s: SystemRun) => s.cpuMsPerRequest;
      const cpuCell = range(per(runs, (r) => d(r) && cpu(d(r)!)), { unit: ' ms' });
      const xEmpty = range(ratio(runs, 'design', 'floor', cpu), { unit: '× the empty proxy' });
      const xOurs = range(ratio(runs, 'ours', 'design', cpu), { unit: '×' });
      const rpsFloor = range(ratio(runs, 'design', 'floor', (s) => s.rps, 100), { unit: '%', then: ' of the empty proxy' });
      const rpsPortkey = range(ratio(runs, 'design', 'portkey', (s) => s.rps), { unit: '× Portkey' });
      out.push({
        figure: 'floor of this design, measured (bench-design-floor.ts: the empty proxy + the input and output Detect over this project\'s detection socket with the same policy; nothing else; CPU includes the detection service\'s)',
        ours: [
          both((s) => s.c1?.p50, 'added p50'),
          both((s) => s.c1?.p99, 'added p99'),
          cpuCell ? `CPU ${cpuCell} per request${xEmpty ? ` = ${xEmpty}` : ''}${xOurs ? ` (this project ${xOurs} of it)` : ''}` : '',
          rpsFloor || rpsPortkey ? `throughput ${[rpsFloor, rpsPortkey].filter(Boolean).join(', ')}` : '',
          both((s) => s.ttfbChat?.p50, 'added stream time to first byte (chat)'),
          both((s) => s.ttfbMessages?.p50, 'added stream time to first byte (messages)'),
        ].filter(Boolean).join('; '),
        portkey: '', floor: '', target: 'none (lower bound of the latency, CPU and throughput lines)', verdict: '—',
      });
    }
  }

  {
    // A failed call (an answer other than 200) fails the run's check whatever the others took.
    const d1 = (r: PerfRun) => (r.systems.ours?.detect1mb?.failed ? Infinity : r.systems.ours?.detect1mb?.p50);
    const s1 = stats(per(runs, (r) => r.systems.ours?.detect1mb?.p50));
    const failed = runs.reduce((n, r) => n + (r.systems.ours?.detect1mb?.failed ?? 0), 0);
    const m = s1 ? s1.median <= 100 && failed === 0 : undefined;
    const each = runs.map((r) => { const v = d1(r); return v === undefined ? undefined : v <= 100; });
    const cell = range(per(runs, (r) => r.systems.ours?.detect1mb?.p50), { unit: ' ms' });
    out.push({ figure: '1 MB `/v1/detect` (p50)', ours: `${cell}${failed ? `; ${failed} call(s) failed` : ''}`, portkey: '', floor: '', target: '≤ 100 ms', verdict: judge(m, each) });
  }

  {
    const rss = (sys: SystemId) => range(per(runs, (r) => r.systems[sys]?.rssAfterMb), { unit: ' MB' });
    const atStart = range(per(runs, (r) => r.systems.ours?.rssStartMb), { unit: ' MB' });
    const atRest = range(per(runs, (r) => r.systems.ours?.rssRestMb), { unit: ' MB' });
    const [m, each] = check(runs, (r) => r.systems.ours?.rssAfterMb, (v) => v <= 250);
    out.push({
      figure: 'resident memory after the benchmark (process tree)',
      ours: `${rss('ours')}${atStart ? `; right after start ${atStart}` : ''}${atRest ? `; at rest after the benchmark ${atRest}` : ''}`,
      portkey: orMissing(rss('portkey'), runs, 'portkey'),
      floor: rss('floor'),
      target: '≤ 250 MB after the benchmark',
      verdict: judge(m, each),
    });
  }

  {
    const secs = (sys: SystemId) => range(per(runs, (r) => (r.systems[sys]?.startMs === undefined ? undefined : r.systems[sys]!.startMs! / 1000)), { unit: ' s' });
    const [m, each] = check(runs, (r) => r.systems.ours?.startMs, (v) => v <= 5000);
    out.push({ figure: 'start to healthy (`node dist/main.js all`, installed tree, fresh DATA_DIR)', ours: secs('ours'), portkey: orMissing(secs('portkey'), runs, 'portkey'), floor: secs('floor'), target: '≤ 5 s', verdict: judge(m, each) });
  }
  return out;
}

export function renderTable(r: Row[]): string[] {
  return [
    '| figure | this project | Portkey OSS 1.15.2 (Node) | empty Node proxy | target | verdict |',
    '|---|---|---|---|---|---|',
    ...r.map((x) => `| ${x.figure} | ${x.ours} | ${x.portkey} | ${x.floor} | ${x.target} | ${x.verdict} |`),
  ];
}

const lat = (l?: Lat) => (l ? `${num(l.p50)} / ${num(l.p99)}` : '');

/** The raw figures of every run and system, below the table. */
export function renderDetails(runs: PerfRun[]): string[] {
  const names: Record<SystemId, string> = { direct: 'direct', floor: 'empty proxy', design: 'design floor', ours: 'this project', portkey: 'Portkey' };
  const lines = [
    '| run | system | c1 p50 / p99 (ms) | req/s at 32 | CPU ms / req | errors | TTFB messages p50 / p99 | first token messages p50 / p99 | TTFB chat p50 / p99 | first token chat p50 / p99 | concurrent streams | RSS start / after / at rest (MB) | start (s) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  runs.forEach((run, i) => {
    for (const sys of ['direct', 'floor', 'design', 'ours', 'portkey'] as SystemId[]) {
      const s = run.systems[sys];
      if (!s) continue;
      const opt = (v: number | undefined) => (v === undefined ? '' : num(v));
      const rss = s.rssStartMb === undefined && s.rssAfterMb === undefined ? '' : `${opt(s.rssStartMb)} / ${opt(s.rssAfterMb)} / ${opt(s.rssRestMb)}`;
      lines.push(
        `| ${i + 1} | ${names[sys]} | ${lat(s.c1)} | ${opt(s.rps)} | ${opt(s.cpuMsPerRequest)} | ${s.errors ?? ''} | ${lat(s.ttfbMessages) || (s.streamErrors?.messages ?? '')} | ${lat(s.firstTokenMessages)} | ${lat(s.ttfbChat) || (s.streamErrors?.chat ?? '')} | ${lat(s.firstTokenChat)} | ${s.streams ? s.streams.outcome : ''} | ${rss} | ${s.startMs === undefined ? '' : num(s.startMs / 1000)} |`,
      );
    }
  });
  return lines;
}

/** Benign sentences: no names, numbers, addresses, links, secrets or anything a detector looks for. */
const SENTENCES = [
  'Please review the following function and suggest clearer names for its variables.',
  'Explain how crop rotation helps a small vegetable garden stay healthy over several seasons.',
  'Summarise the main ideas of the paragraph below in plain language for a new team member.',
  'What are good habits for writing unit tests that stay readable as a project grows?',
  'Suggest a gentle weekly routine for watering tomatoes during a dry summer.',
  'Rewrite this paragraph so that it sounds friendlier and a little shorter.',
  'Which spices go well with roasted carrots, and how long should they bake?',
  'Describe the difference between a list and a set in everyday programming terms.',
  'Give three tips for keeping meeting notes short and useful.',
  'How do I explain the water cycle to a curious child in a few sentences?',
  'Compare walking and cycling as ways to get some light exercise after work.',
  'Draft a polite reminder that the shared kitchen should be tidied on Fridays.',
  'What is a sensible way to organise recipes so they are easy to find later?',
  'List some questions to ask before choosing a new houseplant for a shady room.',
  'Explain why caching can make a web page load faster, using a simple analogy.',
  'Help me plan a relaxed afternoon at the park with a picnic and a short walk.',
  'Share a few easy ideas for a vegetarian lunch that keeps well until the afternoon.',
  'Why do leaves change colour in autumn? Keep the answer short and friendly.',
  'Suggest a clear structure for a short report about improving team onboarding.',
  'Which small changes make a long function easier to read for the next person?',
];

/**
 * A benign prompt of 100–600 characters, different for every `i` (and seed): sentences drawn at random,
 * prefixed by a greeting and the request number so no two prompts are equal, cut at a word boundary to a random length.
 */
export function benignPrompt(i: number, seed = 17): string {
  const rand = prng(seed * 1_000_003 + i);
  const length = 100 + Math.floor(rand() * 501);
  const words = ['Hello', 'Hi there', 'Good morning', 'A quick question', 'Thanks in advance', 'One more thing'];
  // The request number in decimal: a base-36 id spells words now and then ("kys", request 27172, which the
  // harassment detector rightly flags).
  let text = `${words[i % words.length]} (request ${i}).`;
  while (text.length < length) text += ` ${SENTENCES[Math.floor(rand() * SENTENCES.length)]}`;
  if (text.length > length) {
    const cut = text.lastIndexOf(' ', length);
    text = text.slice(0, cut >= 100 ? cut : length);
  }
  return text;
}

/** 1 MB of benign prose (1,000,000 characters: the most `/v1/detect` takes), different for every `i`. */
export const MB = 1_000_000;
export function benignMegabyte(i: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let k = 0; size < MB; k++) {
    const p = benignPrompt(i * 100_000 + k);
    parts.push(p);
    size += p.length + 1;
  }
  return parts.join('\n').slice(0, MB);
}

/** The request bodies bench:perf and bench:memory send (benign prompt `i`). */
export const chatBody = (i: number, stream = false) => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: benignPrompt(i) }], temperature: 0.2, ...(stream ? { stream: true } : {}) });
export const messagesBody = (i: number) => JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 64, stream: true, messages: [{ role: 'user', content: benignPrompt(i) }] });
/** A chat stream of 50 text events 20 ms apart (~1 s; the fake upstream reads max_tokens and metadata.gap_ms). */
export const longStreamBody = (i: number) => JSON.stringify({ model: 'gpt-4o-mini', stream: true, max_tokens: 50, metadata: { gap_ms: '20' }, messages: [{ role: 'user', content: benignPrompt(i) }] });

/** BENCH_OURS_ENV as an object: `A=1 B=two` → { A: '1', B: 'two' }. */
export function envPairs(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (text ?? '').split(/\s+/).filter(Boolean)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`BENCH_OURS_ENV: "${pair}" is not KEY=value`);
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}
