import { CASE_HEADER } from './fuzz-upstream';
import { finalizeHead, mutateHead } from './http-mutate';
import { mutateJson } from './json-mutate';
import { judge, outcomeKey } from './oracle';
import { caseSeed, mulberry32 } from './prng';
import { buildRequest, sendRaw, type RawOutcome } from './raw-http';
import type { FuzzStack } from './stack';
import { FUZZ_TARGETS, type FuzzTarget } from './targets';
import { planAnswer, plannedStatus } from './upstream-answers';

/**
 * Runs `requests` fuzzed cases per target against a running stack, `concurrency` at a time, targets
 * interleaved. Case i of target t is built from caseSeed(seed, t, i) alone, so `only` re-runs one case.
 */
export interface FuzzOptions {
  seed: number;
  requests: number;
  concurrency: number;
  timeoutMs: number;
  targets?: readonly string[];
  /** Re-run just these cases: `target:index`. */
  only?: readonly string[];
  /** Called after each answered case with the number answered so far. */
  progress?: (done: number, total: number) => void;
}

export interface FuzzFailure {
  target: string;
  index: number;
  caseSeed: number;
  reason: string;
  mutations: string[];
  request: string;
  answer: string;
}

export interface FuzzReport {
  seed: number;
  requestsPerTarget: number;
  total: number;
  ms: number;
  histogram: Record<string, Record<string, number>>;
  slowestMs: Record<string, number>;
  failures: FuzzFailure[];
}

interface Job {
  target: FuzzTarget;
  index: number;
}

function describeOutcome(o: RawOutcome): string {
  if (o.kind !== 'response') return o.kind;
  const head = [...o.response.headers].map(([k, v]) => `${k}: ${v.join(', ')}`).filter((l) => !l.startsWith('date')).join('; ');
  return `${o.response.status} {${head}} ${o.response.body.subarray(0, 400).toString('utf8')}`;
}

export async function runCase(stack: FuzzStack, target: FuzzTarget, seed: number, index: number, timeoutMs: number) {
  const cs = caseSeed(seed, target.name, index);
  const rng = mulberry32(cs);
  const shape = target.build(rng, stack.ctx);
  const body = shape.json === undefined ? { body: shape.body, names: [] } : mutateJson(rng, shape.json);
  const auth = target.service === 'sensor' ? { name: 'x-svc-key', value: stack.ctx.apiKey } : { name: 'authorization', value: `Bearer ${stack.ctx.apiKey}` };
  const headers: typeof shape.headers = [...shape.headers, [auth.name, auth.value], [CASE_HEADER, String(cs)]];
  const head = mutateHead(rng, { ...shape, headers, body: body.body, auth }, [shape.path]);
  const request = buildRequest(head.method, head.path, finalizeHead(head), head.body);
  const outcome = await sendRaw(target.service === 'sensor' ? stack.sensorPort : stack.gatewayPort, request, timeoutMs);
  const answers = target.upstream ? [planAnswer(cs, target.upstream, false), planAnswer(cs, target.upstream, true)] : [];
  const reason = judge(
    { target, method: head.method, upstreamStatuses: new Set(target.upstream ? [plannedStatus(cs)] : []), upstreamBreaks: answers.some((a) => a.ending !== 'end') },
    outcome,
  );
  const failure: FuzzFailure | null = reason
    ? { target: target.name, index, caseSeed: cs, reason, mutations: [...body.names, ...head.names], request: request.subarray(0, 600).toString('latin1'), answer: describeOutcome(outcome) }
    : null;
  return { outcome, failure, key: outcomeKey(target, outcome), ms: outcome.ms };
}

export async function runFuzz(stack: FuzzStack, options: FuzzOptions): Promise<FuzzReport> {
  const targets = FUZZ_TARGETS.filter((t) => !options.targets?.length || options.targets.includes(t.name));
  const jobs: Job[] = [];
  if (options.only?.length) {
    for (const spec of options.only) {
      const [name, index] = spec.split(':');
      const target = FUZZ_TARGETS.find((t) => t.name === name);
      if (!target) throw new Error(`unknown target ${name} (targets: ${FUZZ_TARGETS.map((t) => t.name).join(', ')})`);
      jobs.push({ target, index: Number(index) });
    }
  } else for (let i = 0; i < options.requests; i++) for (const target of targets) jobs.push({ target, index: i });
  const report: FuzzReport = { seed: options.seed, requestsPerTarget: options.requests, total: jobs.length, ms: 0, histogram: {}, slowestMs: {}, failures: [] };
  const started = performance.now();
  let next = 0;
  let answered = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      const { failure, key, ms } = await runCase(stack, job.target, options.seed, job.index, options.timeoutMs).catch((err: unknown) => ({
        // A bug of the fuzzer itself: reported like any failure (with its reproduction), the run goes on.
        failure: { target: job.target.name, index: job.index, caseSeed: caseSeed(options.seed, job.target.name, job.index), reason: `fuzzer error: ${String(err)}`, mutations: [], request: '', answer: '' },
        key: 'fuzzer_error',
        ms: 0,
      }));
      const h = (report.histogram[job.target.name] ??= {});
      h[key] = (h[key] ?? 0) + 1;
      report.slowestMs[job.target.name] = Math.max(report.slowestMs[job.target.name] ?? 0, Math.round(ms));
      if (failure) report.failures.push(failure);
      options.progress?.(++answered, jobs.length);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  report.ms = performance.now() - started;
  return report;
}

/** A failure as one readable block, with the command that re-runs it. */
export function formatFailure(seed: number, f: FuzzFailure): string {
  return [
    `[${f.target} #${f.index}] ${f.reason}`,
    `  reproduce: npm run fuzz -- --seed ${seed} --only ${f.target}:${f.index}`,
    `  mutations: ${f.mutations.join(', ') || '(none)'}`,
    `  request: ${JSON.stringify(f.request)}`,
    `  answer: ${JSON.stringify(f.answer)}`,
  ].join('\n');
}
