import { DETECTOR_CATALOG, type DetectorType } from '../shared/detector-catalog';
import type { Detector, DetectorFactory } from './detector';
import { EmailDetector } from './detectors/pii/email-detector';

/**
 * The explicit detector registry. IMPLEMENTATIONS is keyed by every catalog type, so adding a type to
 * the catalog without deciding here is a compile error. `null` means "known but not implemented in
 * this version": when such a type is configured the engine reports OUTCOME_STATUS_UNAVAILABLE for it
 * (never passed silently, never a reason to block).
 */
const IMPLEMENTATIONS: Readonly<Record<DetectorType, DetectorFactory | null>> = {
  prompt_attack: null,
  jailbreak: null,
  'pii/email': () => new EmailDetector(),
  'pii/credit_card': null,
  'pii/us_social_security_number': null,
  'pii/phone_number': null,
  'pii/ip_address': null,
  'pii/iban_code': null,
  'pii/address': null,
  'pii/name': null,
  'moderated_content/harassment': null,
  'moderated_content/harassment_threatening': null,
  'moderated_content/hate': null,
  'moderated_content/hate_threatening': null,
  'moderated_content/sexual': null,
  'moderated_content/sexual_minors': null,
  'moderated_content/violence': null,
  'moderated_content/violence_graphic': null,
  'moderated_content/self_harm': null,
  'moderated_content/self_harm_intent': null,
  'moderated_content/self_harm_instructions': null,
  'moderated_content/illicit': null,
  'moderated_content/illicit_violent': null,
  unknown_links: null,
};

export interface DetectorTypeListing {
  value: DetectorType;
  label: string;
  category: string;
  implemented: boolean;
}

/** Detector instances by type. Factories run once, on first use; detectors are stateless. */
export class DetectorRegistry {
  private readonly instances = new Map<DetectorType, Detector>();

  constructor(private readonly factories: ReadonlyMap<DetectorType, DetectorFactory>) {}

  has(type: DetectorType): boolean {
    return this.factories.has(type);
  }

  get(type: DetectorType): Detector | undefined {
    const existing = this.instances.get(type);
    if (existing) return existing;
    const factory = this.factories.get(type);
    if (!factory) return undefined;
    const detector = factory();
    this.instances.set(type, detector);
    return detector;
  }

  /** The whole catalog, each entry flagged with whether this registry implements it. */
  listDetectorTypes(): DetectorTypeListing[] {
    return DETECTOR_CATALOG.map((d) => ({
      value: d.value,
      label: d.label,
      category: d.category,
      implemented: this.has(d.value),
    }));
  }
}

function implementedFactories(): Map<DetectorType, DetectorFactory> {
  const map = new Map<DetectorType, DetectorFactory>();
  for (const { value } of DETECTOR_CATALOG) {
    const factory = IMPLEMENTATIONS[value];
    if (factory) map.set(value, factory);
  }
  return map;
}

/** The registry of this build: only detectors that are really implemented. */
export const defaultRegistry = new DetectorRegistry(implementedFactories());

export function listDetectorTypes(registry: DetectorRegistry = defaultRegistry): DetectorTypeListing[] {
  return registry.listDetectorTypes();
}
