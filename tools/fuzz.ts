import { randomInt } from 'node:crypto';
import { formatFailure, runFuzz } from './fuzz/runner';
import { startFuzzStack } from './fuzz/stack';

/**
 * npm run fuzz -- [--seed N] [--requests N] [--concurrency N] [--timeout-ms N] [--targets a,b] [--only target:index,...]
 * Seeded fuzzing of every public endpoint (see tools/fuzz/). Prints the seed, the status histogram
 * per endpoint and every failure with its reproduction command; exits 1 on any failure.
 */
function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const seed = Number(arg('seed') ?? randomInt(2 ** 31));
  const requests = Number(arg('requests') ?? 10_000);
  const concurrency = Number(arg('concurrency') ?? 8);
  const timeoutMs = Number(arg('timeout-ms') ?? 30_000);
  const split = (v: string | undefined) => (v ? v.split(',').filter(Boolean) : undefined);
  process.stdout.write(`fuzz: seed ${seed}, ${requests} requests per endpoint, concurrency ${concurrency}\n`);
  const stack = await startFuzzStack({ databaseUrl: process.env.DATABASE_URL, detectionThread: true });
  let failed = false;
  try {
    const report = await runFuzz(stack, { seed, requests, concurrency, timeoutMs, targets: split(arg('targets')), only: split(arg('only')), progress: (done, total) => {
      if (done % 5000 === 0) process.stderr.write(`fuzz: ${done}/${total} answered\n`);
    } });
    const health = await stack.health();
    process.stdout.write(`${JSON.stringify({ seed, total: report.total, seconds: +(report.ms / 1000).toFixed(1), health, histogram: report.histogram, slowestMs: report.slowestMs, upstreamRequests: stack.upstream.requests, errorLogLines: stack.errorLines.length }, null, 2)}\n`);
    for (const f of report.failures.slice(0, 50)) process.stdout.write(`${formatFailure(seed, f)}\n`);
    for (const line of stack.errorLines.slice(0, 20)) process.stdout.write(`error log: ${line}\n`);
    failed = report.failures.length > 0 || health.gateway !== 200 || health.sensor !== 200;
    process.stdout.write(`${report.failures.length} failures (seed ${seed})\n`);
  } finally {
    await stack.close();
  }
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
