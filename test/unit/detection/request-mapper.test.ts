import { fromProtoRequest, MAX_TEXT_BYTES } from '../../../src/detection/request-mapper';
import { AppError } from '../../../src/shared/errors';
import type { ProtoDetectorConfig, ProtoDetectRequest } from '../../../src/shared/proto';

function request(overrides: Partial<ProtoDetectRequest> = {}): ProtoDetectRequest {
  return { text: 'hello', direction: 'DIRECTION_INPUT', config: null, fail_mode: 'FAIL_MODE_UNSPECIFIED', detector_timeout_ms: 0, ...overrides };
}

function config(overrides: Partial<ProtoDetectorConfig> = {}): ProtoDetectorConfig {
  return {
    cache_key: 'k',
    policy_mode: 'POLICY_MODE_UNSPECIFIED',
    input_detectors: [],
    output_detectors: [],
    allow_list: null,
    deny_list: null,
    custom_detectors: [],
    pii_regions: [],
    ...overrides,
  };
}

function rejection(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected an AppError');
}

describe('fromProtoRequest', () => {
  it('applies the documented defaults for UNSPECIFIED values and an absent config', () => {
    const input = fromProtoRequest(request());
    expect(input).toMatchObject({ text: 'hello', direction: 'input', failMode: 'closed', detectorTimeoutMs: undefined });
    expect(input.config).toMatchObject({ policyMode: 'IO', inputDetectors: [], customDetectors: [] });
    const withConfig = fromProtoRequest(
      request({
        detector_timeout_ms: 250,
        config: config({
          input_detectors: [{ detector_type: 'pii/email', threshold: 'THRESHOLD_UNSPECIFIED', action: 'ACTION_UNSPECIFIED' }],
          deny_list: { entries: ['x'], match_type: 'MATCH_TYPE_UNSPECIFIED' },
          custom_detectors: [{ name: 'tick', pattern: 'T-\\d', action: 'ACTION_LOG' }],
        }),
      }),
    );
    expect(withConfig.detectorTimeoutMs).toBe(250);
    expect(withConfig.config).toMatchObject({
      cacheKey: 'k',
      policyMode: 'IO',
      inputDetectors: [{ detector_type: 'pii/email', threshold: 'L2', action: 'block' }],
      denyList: { entries: ['x'], match_type: 'contains' },
      customDetectors: [{ name: 'tick', pattern: 'T-\\d', action: 'log' }],
    });
  });

  it('rejects an unspecified direction', () => {
    const err = rejection(() => fromProtoRequest(request({ direction: 'DIRECTION_UNSPECIFIED' })));
    expect(err).toMatchObject({ type: 'invalid_request', code: 'invalid_direction' });
  });

  it('rejects text over 10 MiB (UTF-8 bytes)', () => {
    expect(() => fromProtoRequest(request({ text: 'a'.repeat(MAX_TEXT_BYTES) }))).not.toThrow();
    const err = rejection(() => fromProtoRequest(request({ text: 'é'.repeat(MAX_TEXT_BYTES / 2 + 1) })));
    expect(err).toMatchObject({ type: 'invalid_request', code: 'text_too_large' });
  });

  it('rejects unknown detector types and enum values a newer peer might send', () => {
    const unknownType = rejection(() =>
      fromProtoRequest(request({ config: config({ output_detectors: [{ detector_type: 'pii/dna', threshold: 'THRESHOLD_L1', action: 'ACTION_LOG' }] }) })),
    );
    expect(unknownType.message).toContain('config.output_detectors[0].detector_type "pii/dna"');
    const unknownEnum = rejection(() =>
      fromProtoRequest(request({ config: config({ policy_mode: 7 as unknown as ProtoDetectorConfig['policy_mode'] }) })),
    );
    expect(unknownEnum.message).toContain('config.policy_mode');
  });

  it('validates custom detectors and match lists with the shared policy schemas', () => {
    const badName = rejection(() =>
      fromProtoRequest(request({ config: config({ custom_detectors: [{ name: 'Bad Name', pattern: 'x', action: 'ACTION_BLOCK' }] }) })),
    );
    expect(badName.message).toMatch(/^config\.custom_detectors\[0\]\.name: /);
    const emptyEntry = rejection(() =>
      fromProtoRequest(request({ config: config({ allow_list: { entries: [''], match_type: 'MATCH_TYPE_EXACT' } }) })),
    );
    expect(emptyEntry.message).toMatch(/^config\.allow_list\.entries\[0\]: /);
  });
});
