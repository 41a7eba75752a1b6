import { CLASSIFIER_TYPES } from '../../../src/detection/classifiers/backend';
import { startDetectionServer, type StartedDetectionServer } from '../../../src/detection/server';
import { createDetectionClient, type DetectionClient } from '../../../src/shared/detection-client';
import type { DetectionPolicy } from '../../../src/shared/policy';
import { ATTACKS, LONG_CODING_QUESTION } from '../../unit/detection/classifiers/examples';

/** End to end over real gRPC: the builtin classifier detectors registered in the default registry. */

const policy: DetectionPolicy = {
  cacheKey: 'classifiers-e2e:v1',
  policyMode: 'IO',
  inputDetectors: [
    { detector_type: 'prompt_attack', threshold: 'L2', action: 'block' },
    { detector_type: 'moderated_content/hate', threshold: 'L2', action: 'block' },
  ],
  outputDetectors: [],
  allowList: { entries: [], match_type: 'contains' },
  denyList: { entries: [], match_type: 'contains' },
  customDetectors: [],
};

describe('classifier detectors through the detection gRPC server', () => {
  let started: StartedDetectionServer;
  let client: DetectionClient;

  beforeAll(async () => {
    started = await startDetectionServer({ address: '127.0.0.1:0' });
    client = createDetectionClient({ address: `127.0.0.1:${started.port}`, timeoutMs: 10_000 });
  });

  afterAll(async () => {
    client.close();
    await started.close(1000);
  });

  it('lists the 15 classifier types as implemented', async () => {
    const types = await client.listDetectorTypes();
    for (const t of CLASSIFIER_TYPES) expect(types.find((x) => x.value === t)?.implemented).toBe(true);
  });

  it('blocks a known jailbreak (prompt_attack), with per-detector timing', async () => {
    const result = await client.detect({ text: ATTACKS.persona, direction: 'input', policy });
    expect(result.blocked).toBe(true);
    expect(result.categories.map((c) => c.type)).toContain('prompt_attack');
    expect(result.categories.find((c) => c.type === 'prompt_attack')?.confidence).toBeGreaterThanOrEqual(0.75);
    expect(result.outcomes).toEqual([
      { type: 'prompt_attack', status: 'ok', message: '', elapsedMs: expect.any(Number), failMode: 'closed' },
      { type: 'moderated_content/hate', status: 'ok', message: '', elapsedMs: expect.any(Number), failMode: 'closed' },
    ]);
    expect(result.blockReason).toContain('prompt_attack');
  });

  it('passes an ordinary long coding question', async () => {
    const result = await client.detect({ text: LONG_CODING_QUESTION, direction: 'input', policy });
    expect(result).toMatchObject({ blocked: false, categories: [], blockReason: '' });
    expect(result.outcomes.map((o) => o.status)).toEqual(['ok', 'ok']);
  });
});
