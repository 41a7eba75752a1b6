import { defaultRegistry, DetectorRegistry, listDetectorTypes } from '../../../src/detection/registry';
import { DETECTOR_CATALOG } from '../../../src/shared/detector-catalog';

describe('detector registry', () => {
  it('lists the whole catalog, with only pii/email implemented in this version', () => {
    const types = listDetectorTypes();
    expect(types).toHaveLength(24);
    expect(types.map((t) => t.value)).toEqual(DETECTOR_CATALOG.map((d) => d.value));
    expect(types.filter((t) => t.implemented).map((t) => t.value)).toEqual(['pii/email']);
    expect(types.find((t) => t.value === 'jailbreak')).toEqual({
      value: 'jailbreak',
      label: 'Jailbreak Detection',
      category: 'prompt_defense',
      implemented: false,
    });
  });

  it('creates each detector once and returns nothing for unimplemented types', () => {
    const email = defaultRegistry.get('pii/email');
    expect(email?.type).toBe('pii/email');
    expect(defaultRegistry.get('pii/email')).toBe(email);
    expect(defaultRegistry.get('pii/credit_card')).toBeUndefined();
  });

  it('reflects an injected registry in the listing', () => {
    const registry = new DetectorRegistry(new Map([['jailbreak', () => ({ type: 'jailbreak' as const, detect: () => [] })]]));
    expect(registry.listDetectorTypes().filter((t) => t.implemented).map((t) => t.value)).toEqual(['jailbreak']);
  });
});
