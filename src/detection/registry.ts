import { DETECTOR_CATALOG, type DetectorType } from '../shared/detector-catalog';
import { classifierDetectorFactory } from './classifiers/classifier-detector';
import type { Detector, DetectorFactory } from './detector';
import { CreditCardDetector } from './detectors/pii/credit-card-detector';
import { AddressDetector } from './detectors/pii/address-detector';
import { EmailDetector } from './detectors/pii/email-detector';
import { IbanDetector } from './detectors/pii/iban-detector';
import { IpAddressDetector } from './detectors/pii/ip-address-detector';
import { PersonNameDetector } from './detectors/pii/person-name-detector';
import { PhoneNumberDetector } from './detectors/pii/phone-number-detector';
import { UsSsnDetector } from './detectors/pii/us-ssn-detector';
import { UnknownLinksDetector } from './detectors/links/unknown-links-detector';
import { CredentialDetector } from './detectors/secrets/credential-detector';

/**
 * The explicit detector registry. IMPLEMENTATIONS is keyed by every catalog type, so adding a type to
 * the catalog without deciding here is a compile error. `null` means "known but not implemented in
 * this version": when such a type is configured the engine reports OUTCOME_STATUS_UNAVAILABLE for it
 * (never passed silently, never a reason to block).
 */
const IMPLEMENTATIONS: Readonly<Record<DetectorType, DetectorFactory | null>> = {
  prompt_attack: classifierDetectorFactory('prompt_attack'),
  jailbreak: classifierDetectorFactory('jailbreak'),
  'pii/email': () => new EmailDetector(),
  'pii/credit_card': () => new CreditCardDetector(),
  'pii/us_social_security_number': () => new UsSsnDetector(),
  'pii/phone_number': () => new PhoneNumberDetector(),
  'pii/ip_address': () => new IpAddressDetector(),
  'pii/iban_code': () => new IbanDetector(),
  'pii/address': () => new AddressDetector(),
  'pii/name': () => new PersonNameDetector(),
  'moderated_content/harassment': classifierDetectorFactory('moderated_content/harassment'),
  'moderated_content/harassment_threatening': classifierDetectorFactory('moderated_content/harassment_threatening'),
  'moderated_content/hate': classifierDetectorFactory('moderated_content/hate'),
  'moderated_content/hate_threatening': classifierDetectorFactory('moderated_content/hate_threatening'),
  'moderated_content/sexual': classifierDetectorFactory('moderated_content/sexual'),
  'moderated_content/sexual_minors': classifierDetectorFactory('moderated_content/sexual_minors'),
  'moderated_content/violence': classifierDetectorFactory('moderated_content/violence'),
  'moderated_content/violence_graphic': classifierDetectorFactory('moderated_content/violence_graphic'),
  'moderated_content/self_harm': classifierDetectorFactory('moderated_content/self_harm'),
  'moderated_content/self_harm_intent': classifierDetectorFactory('moderated_content/self_harm_intent'),
  'moderated_content/self_harm_instructions': classifierDetectorFactory('moderated_content/self_harm_instructions'),
  'moderated_content/illicit': classifierDetectorFactory('moderated_content/illicit'),
  'moderated_content/illicit_violent': classifierDetectorFactory('moderated_content/illicit_violent'),
  unknown_links: () => new UnknownLinksDetector(),
  'secrets/credential': () => new CredentialDetector(),
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
