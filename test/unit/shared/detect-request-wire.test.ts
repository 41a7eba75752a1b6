import { serializeDetectRequest, toProtoConfig, type DetectRequest } from '../../../src/shared/detection-client';
import { detectionMethod, type ProtoDetectRequest } from '../../../src/shared/proto';
import type { DetectionPolicy } from '../../../src/shared/policy';

/**
 * The client encodes a policy's `config` once and appends it to the per-call fields: the bytes must
 * decode to exactly what encoding the whole request at once gives.
 */
const method = detectionMethod<ProtoDetectRequest, unknown>('Detect');

const policy = (cacheKey: string): DetectionPolicy => ({
  cacheKey,
  policyMode: 'IO',
  inputDetectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'log' }],
  outputDetectors: [{ detector_type: 'pii/name', threshold: 'L3', action: 'block' }],
  allowList: { entries: ['ok.example'], match_type: 'contains' },
  denyList: { entries: ['forbidden', 'also'], match_type: 'exact' },
  customDetectors: [{ name: 'ticket', pattern: 'TCK-[0-9]+', action: 'alert' }],
});

function wholeRequest(req: DetectRequest): ProtoDetectRequest {
  return method.requestDeserialize(
    method.requestSerialize({
      text: req.text,
      direction: req.direction === 'input' ? 'DIRECTION_INPUT' : 'DIRECTION_OUTPUT',
      config: toProtoConfig(req.policy),
      fail_mode: req.failMode === 'open' ? 'FAIL_MODE_OPEN' : 'FAIL_MODE_CLOSED',
      detector_timeout_ms: req.detectorTimeoutMs ?? 0,
    }),
  );
}

describe('serializeDetectRequest', () => {
  it.each([
    ['a cached policy', { text: 'héllo wörld 👋', direction: 'output', policy: policy('p1:2026'), failMode: 'open', detectorTimeoutMs: 7 }],
    ['an ad-hoc policy (no cache key)', { text: '', direction: 'input', policy: policy('') }],
  ] as Array<[string, DetectRequest]>)('encodes %s exactly as the whole message', (_name, req) => {
    const decoded = method.requestDeserialize(serializeDetectRequest(req));
    expect(decoded).toEqual(wholeRequest(req));
    // A second call (config from the cache) gives the same bytes.
    expect(serializeDetectRequest(req).equals(serializeDetectRequest(req))).toBe(true);
  });

  it('re-encodes the config when the policy object carries a new cache key', () => {
    const p = policy('p1:v1');
    const first = method.requestDeserialize(serializeDetectRequest({ text: 'x', direction: 'input', policy: p }));
    p.cacheKey = 'p1:v2';
    p.denyList = { entries: ['changed'], match_type: 'contains' };
    const second = method.requestDeserialize(serializeDetectRequest({ text: 'x', direction: 'input', policy: p }));
    expect(first.config?.cache_key).toBe('p1:v1');
    expect(second.config?.cache_key).toBe('p1:v2');
    expect(second.config?.deny_list?.entries).toEqual(['changed']);
  });
});
