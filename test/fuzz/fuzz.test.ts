import { randomInt } from 'node:crypto';
import { formatFailure, runFuzz } from '../../tools/fuzz/runner';
import { startFuzzStack, type FuzzStack } from '../../tools/fuzz/stack';
import { FUZZ_TARGETS } from '../../tools/fuzz/targets';

/**
 * The fast variant of `npm run fuzz` (tools/fuzz/): a few hundred seeded, mutated requests per
 * public endpoint (bodies, heads, and the fake upstream's JSON answers and SSE framing), judged by the
 * fuzz oracle: no status ≥ 500 but the documented ones, no hang, every error in the envelope, services
 * healthy after. The seed is random unless FUZZ_SEED is set; a failure prints it with the command that
 * replays the failing case.
 */
const SEED = Number(process.env.FUZZ_SEED ?? randomInt(2 ** 31));
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 200);

describe(`fuzz (seed ${SEED}, ${REQUESTS} requests per endpoint)`, () => {
  let stack: FuzzStack;
  beforeAll(async () => {
    stack = await startFuzzStack();
  }, 60000);
  afterAll(async () => {
    await stack?.close();
  });

  it('answers every mutated request within its deadline, never an undocumented 5xx, always in the envelope; stays healthy', async () => {
    const report = await runFuzz(stack, { seed: SEED, requests: REQUESTS, concurrency: 6, timeoutMs: 20000 });
    const failures = report.failures.map((f) => formatFailure(SEED, f));
    expect({ seed: SEED, failures }).toEqual({ seed: SEED, failures: [] });
    expect(report.total).toBe(REQUESTS * FUZZ_TARGETS.length);
    for (const target of FUZZ_TARGETS) {
      const answers = Object.values(report.histogram[target.name] ?? {}).reduce((a, b) => a + b, 0);
      expect(answers).toBe(REQUESTS);
    }
    // The valid baseline got through: each traffic endpoint answered 200 at least once (not only errors).
    for (const name of ['chat_json', 'chat_stream', 'detect', 'sensor_json', 'sensor_stream', 'management', 'graphql']) {
      expect(report.histogram[name]?.['200'] ?? 0).toBeGreaterThan(0);
    }
    expect(await stack.health()).toEqual({ gateway: 200, sensor: 200 });
    expect(stack.upstream.requests).toBeGreaterThan(0);
  }, 240000);
});
