import { defaultRegistry, DetectorRegistry, listDetectorTypes } from '../../../src/detection/registry';
import { DETECTOR_CATALOG } from '../../../src/shared/detector-catalog';

describe('detector registry', () => {
  it('lists the whole catalog, every type implemented', () => {
    const types = listDetectorTypes();
    // The spec's 24 types plus one addition, secrets/credential (docs/detectors-contextual.md).
    expect(types).toHaveLength(25);
    expect(types.filter((t) => t.value !== 'secrets/credential')).toHaveLength(24);
    expect(types.map((t) => t.value)).toEqual(DETECTOR_CATALOG.map((d) => d.value));
    expect(types.filter((t) => !t.implemented)).toEqual([]);
    expect(types.find((t) => t.value === 'jailbreak')).toEqual({
      value: 'jailbreak',
      label: 'Jailbreak Detection',
      category: 'prompt_defense',
      implemented: true,
    });
  });

  it('creates each detector once, and each detector reports its own type', () => {
    for (const { value } of DETECTOR_CATALOG) {
      const detector = defaultRegistry.get(value);
      expect(detector?.type).toBe(value);
      expect(defaultRegistry.get(value)).toBe(detector);
    }
  });

  it('reflects an injected registry in the listing and returns nothing for types it lacks', () => {
    const registry = new DetectorRegistry(new Map([['jailbreak', () => ({ type: 'jailbreak' as const, detect: () => [] })]]));
    expect(registry.listDetectorTypes().filter((t) => t.implemented).map((t) => t.value)).toEqual(['jailbreak']);
    expect(registry.get('pii/email')).toBeUndefined();
  });
});
