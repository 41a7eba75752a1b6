import { benignPrompt, judge, num, range, renderTable, rows, stats, type PerfRun, type SystemRun } from '../../../tools/bench-perf-lib';
import { replaceSection } from '../../../tools/results-sections';
import { blockPolicy } from '../../../tools/bench-procs';
import { createDetectionEngine } from '../../../src/detection/engine';
import { DETECTOR_TYPES } from '../../../src/shared/detector-catalog';

/** The pure logic of npm run bench:perf: ranges, verdicts, the table's ratios and the prompts. No timing. */
describe('bench:perf ranges and verdicts', () => {
  it('summarises N values as min–max (median), and one value as itself', () => {
    expect(stats([3, 1, 2])).toEqual({ min: 1, max: 3, median: 2 });
    expect(stats([4, 1, 2, 3])).toEqual({ min: 1, max: 4, median: 2.5 });
    expect(stats([NaN])).toBeUndefined();
    expect(range([2.3, 4.7, 2.9], { unit: ' ms', signed: true })).toBe('+2.3–4.7 ms (median 2.9)');
    expect(range([-0.1, 0.2, 0.05], { unit: ' ms', signed: true })).toBe('-0.10–+0.20 ms (median +0.05)');
    expect(range([41, 41], { unit: '%' })).toBe('41.0%');
    expect(range([])).toBe('');
    expect([num(0.123), num(2.345), num(1024.4)]).toEqual(['0.12', '2.3', '1,024']);
  });

  it('decides on the median and counts the runs that met the target alone', () => {
    expect(judge(true, [true, false, true])).toBe('met (2/3 runs)');
    expect(judge(false, [false, undefined, true])).toBe('not met (1/2 runs)');
    expect(judge(undefined, [])).toBe('n/a');
  });
});

describe('bench:perf table', () => {
  /** One run: direct, the empty proxy, this project and (optionally) Portkey. */
  const run = (ours: SystemRun, portkey?: SystemRun): PerfRun => ({
    systems: {
      direct: { c1: { p50: 0.3, p99: 1 }, rps: 10_000, ttfbChat: { p50: 0.5, p99: 1 }, ttfbMessages: { p50: 0.4, p99: 1 } },
      floor: { c1: { p50: 0.5, p99: 2 }, rps: 5_000, cpuMsPerRequest: 0.1, rssAfterMb: 60 },
      ours,
      ...(portkey ? { portkey } : {}),
    },
  });
  const good: SystemRun = {
    c1: { p50: 1.1, p99: 3 }, rps: 1_500, cpuMsPerRequest: 0.4, ttfbChat: { p50: 1.2, p99: 3 }, ttfbMessages: { p50: 1.6, p99: 3 },
    streams: { n: 1024, complete: 1024, outcome: '1024 complete' }, detect1mb: { p50: 80, max: 90 }, rssAfterMb: 200, rssStartMb: 150, startMs: 3000,
  };
  const byFigure = (r: PerfRun[]) => new Map(rows(r, 1024).map((x) => [x.figure.split(' (')[0]!, x]));

  it('writes each figure as a ratio against the floors of the same run, with met / not met', () => {
    const pk: SystemRun = { c1: { p50: 2, p99: 4 }, rps: 500, cpuMsPerRequest: 1.2 };
    const t = byFigure([run(good, pk), run({ ...good, c1: { p50: 2.3, p99: 9 }, rps: 900, cpuMsPerRequest: 0.8 }, pk), run(good, pk)]);
    const p50 = t.get('added p50 at concurrency 1')!;
    expect(p50.ours).toBe('+0.80–2.0 ms (median 0.80)');
    expect(p50.floor).toBe('+0.20 ms');
    expect(p50.portkey).toBe('+1.7 ms');
    expect(p50.verdict).toBe('met (2/3 runs)');
    expect(t.get('added p99 at concurrency 1')!.verdict).toBe('met (2/3 runs)');
    const tp = t.get('throughput at concurrency 32')!;
    expect(tp.ours).toBe('18.0–30.0% of the empty proxy (median 30.0); 9.0–15.0% of direct (median 15.0); 1.8–3.0× Portkey (median 3.0)');
    expect(tp.verdict).toBe('met (2/3 runs)');
    const cpu = t.get('CPU per request, all processes')!;
    expect(cpu.ours).toBe('0.40–0.80 ms (median 0.40) = 4.0–8.0× the empty proxy (median 4.0)');
    expect(cpu.verdict).toBe('met (2/3 runs)');
    expect(t.get('stream time to first byte, gateway chat completions')!.ours).toBe('+0.70 ms');
    expect(t.get('stream time to first byte, sensor `/v1/messages`')!.verdict).toBe('not met (0/3 runs)');
    expect(t.get('1,024 concurrent streams')!.ours).toBe('1,024 of 1,024 complete');
    expect(t.get('1 MB `/v1/detect`')!.verdict).toBe('met (3/3 runs)');
    expect(t.get('resident memory after the benchmark')!.ours).toBe('200 MB; right after start 150 MB');
    expect(t.get('start to healthy')!.ours).toBe('3.0 s');
  });

  it('judges throughput on the empty proxy alone when Portkey is skipped, and names a broken stream', () => {
    const t = byFigure([run({ ...good, streams: { n: 1024, complete: 801, outcome: '801 complete, 223 status 503' }, streamErrors: { chat: '500 broken' } })]);
    const tp = t.get('throughput at concurrency 32')!;
    expect(tp.portkey).toBe('skipped');
    expect(tp.target).toContain('Portkey not measured');
    expect(tp.verdict).toBe('met (1/1 runs)');
    expect(t.get('1,024 concurrent streams')!.ours).toBe('801 of 1,024 complete (worst run: 801 complete, 223 status 503)');
    expect(t.get('1,024 concurrent streams')!.verdict).toBe('not met (0/1 runs)');
    const broken = byFigure([run({ ...good, ttfbChat: undefined, streamErrors: { chat: '500 broken' } })]);
    expect(broken.get('stream time to first byte, gateway chat completions')!.ours).toBe('not measured: 500 broken');
    expect(broken.get('stream time to first byte, gateway chat completions')!.verdict).toBe('n/a');
    const slow = byFigure([run({ ...good, detect1mb: { p50: 80, max: 90, failed: 1 } }), run({ ...good, detect1mb: { p50: NaN, max: NaN, failed: 5 } })]).get('1 MB `/v1/detect`')!;
    expect(slow.ours).toBe('80.0 ms; 6 call(s) failed');
    expect(slow.verdict).toBe('not met (0/2 runs)');
    expect(renderTable(rows([run(good)], 1024))[0]).toContain('| figure | this project | Portkey OSS 1.15.2 (Node) | empty Node proxy | target | verdict |');
  });

  it('reports the detectors alone, the hop alone, and the floor of the design they make with the empty proxy', () => {
    const plain = byFigure([run(good)]);
    expect(plain.has('detectors alone, in-process')).toBe(false);
    expect(plain.has('floor of this design')).toBe(false);
    const t = byFigure([run({ ...good, detectorsAlone: { cpuMs: 0.6, p50: 0.7, p99: 1.5, inputP50: 0.5 }, hopAlone: { clientMs: 0.2, serverMs: 0.3, p50: 0.4 } })]);
    expect(t.get('detectors alone, in-process')!.ours).toBe('CPU 0.60 ms per request = 6.0× the empty proxy\'s whole request; latency p50 0.70 ms, p99 1.5 ms');
    expect(t.get('the internal hop alone')!.ours).toBe('CPU 0.50 ms per call (caller 0.20 ms, detection service 0.30 ms); wall p50 0.40 ms');
    // CPU: 0.1 (empty proxy) + 0.6 + 2 × 0.5 = 1.7 ms = 17×; added p50 ≥ (0.5 − 0.3) + 0.7 + 2 × 0.4 = 1.7 ms;
    // first byte: the empty proxy's added first byte (no stream figures for it here) → not written.
    const floor = t.get('floor of this design')!;
    expect(floor.ours).toBe('CPU 1.7 ms per request = 17.0× the empty proxy\'s whole request; added p50 ≥ +1.7 ms');
    // With the empty proxy's stream: (0.9 − 0.5) + 0.5 (input scan) + 0.4 (one hop) = 1.3 ms.
    const withStream: PerfRun = run({ ...good, detectorsAlone: { cpuMs: 0.6, p50: 0.7, p99: 1.5, inputP50: 0.5 }, hopAlone: { clientMs: 0.2, serverMs: 0.3, p50: 0.4 } });
    withStream.systems.floor!.ttfbChat = { p50: 0.9, p99: 2 };
    expect(byFigure([withStream]).get('floor of this design')!.ours).toContain('added stream time to first byte (chat) ≥ +1.3 ms');
    expect(floor.verdict).toBe('—');
  });

  it('reports the measured floor of the design (a system of its own) and what this project adds beyond it', () => {
    expect(byFigure([run(good)]).has('floor of this design, measured')).toBe(false);
    const design: SystemRun = { c1: { p50: 0.9, p99: 2.5 }, rps: 2_000, cpuMsPerRequest: 0.25, ttfbChat: { p50: 0.8, p99: 2 } };
    const withDesign = (d: SystemRun, o = good): PerfRun => { const r = run(o, { rps: 500 }); r.systems.design = d; return r; };
    const row = byFigure([withDesign(design)]).get('floor of this design, measured')!;
    // p50: 0.9 − 0.3 = +0.60, this project 1.1 − 0.9 = +0.20 beyond; p99: 2.5 − 1 = +1.5, 3 − 2.5 = +0.50 beyond;
    // CPU 0.25 / 0.1 = 2.5×, this project 0.4 / 0.25 = 1.6×; throughput 2000 / 5000 = 40%, 2000 / 500 = 4×;
    // first byte (chat) 0.8 − 0.5 = +0.30, this project 1.2 − 0.8 = +0.40 beyond; no messages stream measured.
    expect(row.ours).toBe(
      'added p50 +0.60 ms (this project +0.20 ms beyond it); added p99 +1.5 ms (this project +0.50 ms beyond it); ' +
        'CPU 0.25 ms per request = 2.5× the empty proxy (this project 1.6× of it); throughput 40.0% of the empty proxy, 4.0× Portkey; ' +
        'added stream time to first byte (chat) +0.30 ms (this project +0.40 ms beyond it)',
    );
    expect(row.verdict).toBe('—');
    // Over runs: ranges; the verdicts of the target lines are unchanged by it.
    const two = byFigure([withDesign(design), withDesign({ ...design, c1: { p50: 1.3, p99: 4 } })]);
    expect(two.get('floor of this design, measured')!.ours).toContain('added p50 +0.60–1.0 ms (median 0.80) (this project -0.20–+0.20 ms (median +0.00) beyond it)');
    expect(two.get('added p50 at concurrency 1')!.verdict).toBe('met (2/2 runs)');
  });
});

describe('bench:perf prompts and its RESULTS.md section', () => {
  it('gives benign prompts of 100–600 characters, different on every request', () => {
    const prompts = Array.from({ length: 2000 }, (_, i) => benignPrompt(i));
    for (const p of prompts) {
      expect(p.length).toBeGreaterThanOrEqual(100);
      expect(p.length).toBeLessThanOrEqual(600);
    }
    expect(new Set(prompts).size).toBe(prompts.length);
    const lengths = prompts.map((p) => p.length);
    expect(Math.min(...lengths)).toBeLessThan(150);
    expect(Math.max(...lengths)).toBeGreaterThan(550);
    expect(benignPrompt(7)).toBe(benignPrompt(7));
  });

  it('gives prompts every detector allows at L2 (the benchmark stops on a block)', async () => {
    // Request numbers are decimal: in base 36, request 27172 read "kys", which the harassment detector
    // rightly flags, and bench:memory stopped on that 403.
    expect(benignPrompt(27172)).toMatch(/\(request 27172\)\./);
    const engine = createDetectionEngine();
    const config = blockPolicy(DETECTOR_TYPES, 'bench prompts');
    const blocked: number[] = [];
    for (let i = 26_000; i < 29_000; i++) {
      const verdict = await engine.evaluate({ text: benignPrompt(i), direction: 'input', config });
      if (verdict.blocked) blocked.push(i);
    }
    expect(blocked).toEqual([]);
  }, 60_000);

  it('replaces its own section and keeps the text below its marker and the other sections', () => {
    const heading = '## Performance v2: side by side (npm run bench:perf)';
    const marker = '<!-- perf ends -->';
    const file = `# Results\n\n## Traffic path (npm run bench:gateway)\n\nT\n\n${heading}\n\nold\n\n${marker}\nkept note\n\n## Fuzzing\n\nF\n`;
    expect(replaceSection(file, heading, marker, `${heading}\n\nnew\n\n${marker}\n`)).toBe(
      `# Results\n\n## Traffic path (npm run bench:gateway)\n\nT\n\n${heading}\n\nnew\n\n${marker}\nkept note\n\n## Fuzzing\n\nF\n`,
    );
    expect(replaceSection('# Results\n', heading, marker, `${heading}\n\nx\n`)).toBe(`# Results\n\n${heading}\n\nx\n`);
  });
});
