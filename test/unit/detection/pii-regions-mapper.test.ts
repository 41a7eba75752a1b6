import { fromProtoRequest } from '../../../src/detection/request-mapper';
import { serializeDetectRequest, toProtoConfig } from '../../../src/shared/detection-client';
import { AppError } from '../../../src/shared/errors';
import { DEFAULT_PII_REGIONS, piiRegionsSchema, type DetectionPolicy } from '../../../src/shared/policy';
import { detectionPackageDefinition, type ProtoDetectRequest } from '../../../src/shared/proto';

const POLICY: DetectionPolicy = {
  cacheKey: 'k',
  policyMode: 'IO',
  inputDetectors: [{ detector_type: 'pii/phone_number', threshold: 'L2', action: 'block' }],
  outputDetectors: [],
  allowList: { entries: [], match_type: 'contains' },
  denyList: { entries: [], match_type: 'contains' },
  customDetectors: [],
};

/** The request as the detection service decodes it from the wire. */
function decoded(policy: DetectionPolicy): ProtoDetectRequest {
  const service = detectionPackageDefinition['detection.v1.DetectionService'] as Record<string, { requestDeserialize(b: Buffer): unknown }>;
  const detect = service.Detect as { requestDeserialize(b: Buffer): unknown };
  return detect.requestDeserialize(serializeDetectRequest({ text: 'x', direction: 'input', policy })) as ProtoDetectRequest;
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

describe('pii_regions across the gRPC edge', () => {
  it('travels in DetectorConfig field 8 and comes back as the policy regions', () => {
    const req = decoded({ ...POLICY, piiRegions: ['FR', 'GB'] });
    expect(req.config?.pii_regions).toEqual(['FR', 'GB']);
    expect(fromProtoRequest(req).config.piiRegions).toEqual(['FR', 'GB']);
  });

  it('is absent (the default list applies) when the policy has none', () => {
    const req = decoded(POLICY);
    expect(req.config?.pii_regions).toEqual([]);
    expect(fromProtoRequest(req).config.piiRegions).toBeUndefined();
    expect(toProtoConfig(POLICY).pii_regions).toEqual([]);
  });

  it('rejects an invalid code with invalid_request naming the field', () => {
    const req = decoded({ ...POLICY, piiRegions: ['GB', 'gb'] });
    const err = rejection(() => fromProtoRequest(req));
    expect(err.type).toBe('invalid_request');
    expect(err.message).toBe('config.pii_regions[1]: "gb" is not an ISO 3166-1 alpha-2 region code (codes are upper case: "GB")');
  });
});

describe('piiRegionsSchema', () => {
  it('accepts the default list and any supported upper-case code', () => {
    expect(piiRegionsSchema.parse([...DEFAULT_PII_REGIONS])).toEqual([...DEFAULT_PII_REGIONS]);
    expect(piiRegionsSchema.parse(['NZ', 'ZA', 'KR'])).toEqual(['NZ', 'ZA', 'KR']);
  });

  it.each([
    [['fr'], '"fr" is not an ISO 3166-1 alpha-2 region code (codes are upper case: "FR")'],
    [['XX'], '"XX" is not an ISO 3166-1 alpha-2 region code with a telephone numbering plan'],
    [['FRA'], '"FRA" is not an ISO 3166-1 alpha-2 region code'],
    [['FR', 'FR'], '"FR" is listed twice'],
    [[], 'must list at least one region'],
  ])('rejects %j', (regions, message) => {
    const result = piiRegionsSchema.safeParse(regions);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe(message);
  });

  it('bounds the list', () => {
    expect(piiRegionsSchema.safeParse(Array.from({ length: 51 }, () => 'FR')).success).toBe(false);
  });
});
