import type { ClassifierBackend, ClassifierType } from '../../../../src/detection/classifiers/backend';
import { createKeepAliveAgent } from '../../../../src/detection/classifiers/backends/http-json';
import { OpenAiModerationBackend } from '../../../../src/detection/classifiers/backends/openai-moderation-backend';
import { ResilientBackend } from '../../../../src/detection/classifiers/backends/resilient-backend';
import type { Detector } from '../../../../src/detection/detector';
import { createDetectionEngine } from '../../../../src/detection/engine';
import { DetectorRegistry } from '../../../../src/detection/registry';
import type { DetectorEntry } from '../../../../src/shared/policy';
import { startFakeModeration, type FakeModeration } from '../../../fakes/fake-moderation';
import { policyFixture } from '../../../unit/detection/policy-fixture';

/**
 * What the engine makes of a backend failure: the detector's outcome is `error` with the backend's
 * reason, and the request's fail mode decides (closed + block action → blocked; open → reported, passed).
 * The detector here is the thinnest adapter (one finding spanning the text, confidence = score); the
 * real classifier detectors add windows and per-content caching on top of the same backend contract.
 */
function adapter(type: ClassifierType, backend: ClassifierBackend): Detector {
  return {
    type,
    detect: async (input, signal) => {
      const score = (await backend.classify(input.text, signal))[type];
      if (score === undefined) throw new Error(`${backend.name} returned no score for ${type}`);
      return [{ confidence: score, start: 0, end: input.text.length }];
    },
  };
}

describe('engine result when an external backend fails (fail open vs closed)', () => {
  let fake: FakeModeration;
  const agent = createKeepAliveAgent({ connections: 4 });
  const VIOLENCE: ClassifierType = 'moderated_content/violence';

  beforeAll(async () => {
    fake = await startFakeModeration();
  });
  afterAll(async () => {
    await fake.close();
    await agent.close();
  });
  beforeEach(() => {
    fake.mode = 'ok';
    fake.received.length = 0;
    fake.scores = (input) => (input.includes('kill') ? { violence: 0.93 } : {});
  });

  // The per-call budget: generous by default, so a prompt answer on a loaded machine (CI) never reads as a timeout
  // (150 ms did once: "no answer within 150 ms" in the malformed-answer case); the hang case sets its own.
  const engineWith = (timeoutMs = 10_000) => {
    const backend = new ResilientBackend(
      new OpenAiModerationBackend({ baseUrl: fake.url, model: 'omni-moderation-latest', types: [VIOLENCE], dispatcher: agent }),
      { timeoutMs, maxConcurrency: 4, maxQueue: 4, cacheSize: 0, cacheTtlMs: 1000, breakerFailures: 50, breakerCooldownMs: 1000 },
    );
    const registry = new DetectorRegistry(new Map([[VIOLENCE, () => adapter(VIOLENCE, backend)]]));
    return createDetectionEngine({ registry });
  };
  const config = (action: DetectorEntry['action']) =>
    policyFixture({ inputDetectors: [{ detector_type: VIOLENCE, threshold: 'L2', action }] });

  it('healthy backend: the score becomes the category confidence and blocks at L2', async () => {
    const result = await engineWith().evaluate({ text: 'I will kill you', direction: 'input', config: config('block'), failMode: 'open' });
    expect(result.blocked).toBe(true);
    expect(result.categories).toEqual([{ type: VIOLENCE, confidence: 0.93, action: 'block' }]);
    expect(result.outcomes).toEqual([expect.objectContaining({ type: VIOLENCE, status: 'ok', failMode: 'open' })]);
  });

  it('healthy backend, benign text: not blocked', async () => {
    const result = await engineWith().evaluate({ text: 'I like gardening', direction: 'input', config: config('block'), failMode: 'closed' });
    expect(result.blocked).toBe(false);
    expect(result.categories).toEqual([]);
  });

  it('backend down, fail closed, action block: blocked with a clear reason', async () => {
    fake.mode = 'http-500';
    const result = await engineWith().evaluate({ text: 'I like gardening', direction: 'input', config: config('block'), failMode: 'closed' });
    expect(result.blocked).toBe(true);
    expect(result.outcomes).toEqual([
      expect.objectContaining({ type: VIOLENCE, status: 'error', failMode: 'closed', message: 'openai-moderation: HTTP 500 (server_error)' }),
    ]);
    expect(result.blockReason).toBe(`Detector ${VIOLENCE} failed and fail mode is closed`);
    expect(result.categories).toEqual([]);
  });

  it('backend down, fail open: reported as an error outcome (unscanned), not blocked', async () => {
    fake.mode = 'http-500';
    const result = await engineWith().evaluate({ text: 'I will kill you', direction: 'input', config: config('block'), failMode: 'open' });
    expect(result.blocked).toBe(false);
    expect(result.blockReason).toBe('');
    expect(result.outcomes).toEqual([expect.objectContaining({ type: VIOLENCE, status: 'error', failMode: 'open' })]);
  });

  it('backend hangs: the per-call timeout fires inside the detector budget → error outcome; closed blocks', async () => {
    fake.mode = 'hang';
    const result = await engineWith(100).evaluate({
      text: 'hello',
      direction: 'input',
      config: config('block'),
      failMode: 'closed',
      detectorTimeoutMs: 2000,
    });
    // The backend's own 100 ms timeout answered, not the 2,000 ms detector budget (whose message names the budget).
    expect(result.outcomes[0]).toMatchObject({ status: 'error', message: 'openai-moderation: no answer within 100 ms' });
    expect(result.blocked).toBe(true);
  });

  it('malformed answer is an error, not a pass: fail closed blocks even a violent text the model "scored"', async () => {
    fake.mode = 'out-of-range';
    const result = await engineWith().evaluate({ text: 'I will kill you', direction: 'input', config: config('block'), failMode: 'closed' });
    expect(result.outcomes[0]).toMatchObject({ status: 'error', message: expect.stringContaining('category_scores["violence"]') });
    expect(result.blocked).toBe(true);
    expect(result.categories).toEqual([]);
  });

  it('fail closed does not block when the failing detector only logs', async () => {
    fake.mode = 'http-500';
    const result = await engineWith().evaluate({ text: 'x', direction: 'input', config: config('log'), failMode: 'closed' });
    expect(result.outcomes[0]).toMatchObject({ status: 'error', failMode: 'closed' });
    expect(result.blocked).toBe(false);
  });
});
