import type { Detector, DetectorFinding } from '../../../src/detection/detector';
import { EmailDetector } from '../../../src/detection/detectors/pii/email-detector';
import { createDetectionEngine } from '../../../src/detection/engine';
import { registryOf, spyDetector } from './detector-fixture';
import { policyFixture } from './policy-fixture';

describe('evaluate: detector isolation and fail mode', () => {
  const throwing: Detector = {
    type: 'prompt_attack',
    detect: () => {
      throw new Error('model exploded');
    },
  };
  let hangingSignal: AbortSignal | undefined;
  const hanging: Detector = {
    type: 'jailbreak',
    detect: (_input, signal) => {
      hangingSignal = signal;
      return new Promise<DetectorFinding[]>(() => undefined);
    },
  };
  const registry = registryOf([throwing, hanging, new EmailDetector()]);
  const engine = createDetectionEngine({ registry });
  const config = policyFixture({
    inputDetectors: [
      { detector_type: 'prompt_attack', threshold: 'L2', action: 'block' },
      { detector_type: 'jailbreak', threshold: 'L2', action: 'block' },
      { detector_type: 'pii/email', threshold: 'L2', action: 'log' },
    ],
  });

  it('fail closed: a throw and a timeout become outcomes, block, and other detectors still report', async () => {
    const started = Date.now();
    const result = await engine.evaluate({ text: 'hi bob@corp.io', direction: 'input', config, failMode: 'closed', detectorTimeoutMs: 50 });
    expect(Date.now() - started).toBeLessThan(5000); // the 50 ms budget, not a hang (room for a loaded machine)
    const byType = Object.fromEntries(result.outcomes.map((o) => [o.type, o]));
    expect(byType.prompt_attack).toMatchObject({ status: 'error', message: 'model exploded', failMode: 'closed' });
    expect(byType.jailbreak).toMatchObject({ status: 'timeout', failMode: 'closed', message: 'detector exceeded its 50 ms budget' });
    // Its own time runs from its start, the shared deadline from before the detectors ahead of it: on a loaded CI
    // machine those took 5.5 ms once (44.53 ms measured against a bound of 45). Not cut short: well past half the budget.
    expect(byType.jailbreak?.elapsedMs).toBeGreaterThanOrEqual(25);
    expect(byType['pii/email']).toMatchObject({ status: 'ok' });
    expect(hangingSignal?.aborted).toBe(true);
    expect(result.blocked).toBe(true);
    expect(result.blockReason).toContain('prompt_attack failed');
    expect(result.blockReason).toContain('jailbreak timed out');
    expect(result.categories).toEqual([{ type: 'pii/email', confidence: 0.95, action: 'log' }]);
  });

  it('fail open: the same failures are reported but do not block', async () => {
    const result = await engine.evaluate({ text: 'hi bob@corp.io', direction: 'input', config, failMode: 'open', detectorTimeoutMs: 50 });
    expect(result.blocked).toBe(false);
    expect(result.blockReason).toBe('');
    expect(result.outcomes.map((o) => [o.type, o.status, o.failMode])).toEqual([
      ['prompt_attack', 'error', 'open'],
      ['jailbreak', 'timeout', 'open'],
      ['pii/email', 'ok', 'open'],
    ]);
  });

  it('fail closed does not block when the failing detector only logs', async () => {
    const logOnly = policyFixture({ inputDetectors: [{ detector_type: 'prompt_attack', threshold: 'L2', action: 'log' }] });
    const result = await engine.evaluate({ text: 'x', direction: 'input', config: logOnly, failMode: 'closed' });
    expect(result.outcomes[0]?.status).toBe('error');
    expect(result.blocked).toBe(false);
  });

  it('a synchronous detector that completes after its budget keeps its findings (nothing found is thrown away)', async () => {
    const slow: Detector = {
      type: 'pii/address',
      detect: () => {
        const until = Date.now() + 40;
        while (Date.now() < until) {
          /* busy: cannot be interrupted */
        }
        return [{ confidence: 1, start: 0, end: 1 }];
      },
    };
    const e = createDetectionEngine({ registry: registryOf([slow]) });
    const cfg = policyFixture({ inputDetectors: [{ detector_type: 'pii/address', threshold: 'L2', action: 'log' }] });
    const result = await e.evaluate({ text: 'abc', direction: 'input', config: cfg, detectorTimeoutMs: 10 });
    expect(result.outcomes[0]).toMatchObject({ status: 'ok' });
    expect(result.outcomes[0]!.elapsedMs).toBeGreaterThan(10); // it overran its 10 ms budget
    expect(result.findings).toEqual([{ type: 'pii/address', confidence: 1, start: 0, end: 1, fired: true, signal: 'signature:pii/address' }]);
  });

  it('an invalid finding is an error outcome, not a crash', async () => {
    const bad: Detector = { type: 'pii/name', detect: () => [{ confidence: 2, start: 0, end: 99 }] };
    const e = createDetectionEngine({ registry: registryOf([bad]) });
    const cfg = policyFixture({ inputDetectors: [{ detector_type: 'pii/name', threshold: 'L2', action: 'block' }] });
    const result = await e.evaluate({ text: 'abc', direction: 'input', config: cfg, failMode: 'open' });
    expect(result.outcomes[0]).toMatchObject({ status: 'error', message: 'detector returned an invalid finding' });
  });

  it('keeps at most 1000 findings per detector, the most confident ones', async () => {
    const many: DetectorFinding[] = Array.from({ length: 1500 }, (_, i) => ({ confidence: i === 1400 ? 0.99 : 0.5, start: 2 * i, end: 2 * i + 1 }));
    const e = createDetectionEngine({ registry: registryOf([spyDetector('pii/name', many).detector]) });
    const cfg = policyFixture({ inputDetectors: [{ detector_type: 'pii/name', threshold: 'L1', action: 'log' }] });
    const result = await e.evaluate({ text: 'ab'.repeat(1500), direction: 'input', config: cfg });
    expect(result.findings).toHaveLength(1000);
    expect(result.categories).toEqual([{ type: 'pii/name', confidence: 0.99, action: 'log' }]);
  });
});

describe('evaluate: unimplemented detectors', () => {
  it('reports configured but unimplemented types as unavailable and never blocks for them', async () => {
    const config = policyFixture({
      inputDetectors: [
        { detector_type: 'pii/credit_card', threshold: 'L2', action: 'block' },
        { detector_type: 'pii/email', threshold: 'L2', action: 'block' },
      ],
    });
    const e = createDetectionEngine({ registry: registryOf([new EmailDetector()]) }); // credit_card not implemented here
    const result = await e.evaluate({ text: 'nothing here', direction: 'input', config, failMode: 'closed' });
    expect(result.blocked).toBe(false);
    expect(result.outcomes[0]).toEqual({
      type: 'pii/credit_card',
      status: 'unavailable',
      message: expect.stringContaining('not implemented in this version'),
      elapsedMs: 0,
      failMode: 'closed',
    });
    expect(result.outcomes[1]).toMatchObject({ type: 'pii/email', status: 'ok' });
  });
});
