import type { DetectionPolicy } from '../../../src/shared/policy';

/** A detection policy with nothing configured, overridden field by field. */
export function policyFixture(overrides: Partial<DetectionPolicy> = {}): DetectionPolicy {
  return {
    cacheKey: '',
    policyMode: 'IO',
    inputDetectors: [],
    outputDetectors: [],
    allowList: { entries: [], match_type: 'contains' },
    denyList: { entries: [], match_type: 'contains' },
    customDetectors: [],
    ...overrides,
  };
}
