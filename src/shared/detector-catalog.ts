/**
 * The spec's detector types (value, label, category): the single list every layer reads. The detection
 * registry is keyed by it (a missing implementation is a compile error there), the management
 * `detector_types` endpoint lists it, and policy validation accepts exactly these values.
 */
export const DETECTOR_CATALOG = [
  { value: 'prompt_attack', label: 'Prompt Attack', category: 'prompt_defense' },
  { value: 'jailbreak', label: 'Jailbreak Detection', category: 'prompt_defense' },
  { value: 'pii/email', label: 'Email Address', category: 'data_leakage_prevention' },
  { value: 'pii/credit_card', label: 'Credit Card', category: 'data_leakage_prevention' },
  { value: 'pii/us_social_security_number', label: 'US Social Security Number', category: 'data_leakage_prevention' },
  { value: 'pii/phone_number', label: 'Phone Number', category: 'data_leakage_prevention' },
  { value: 'pii/ip_address', label: 'IP Address', category: 'data_leakage_prevention' },
  { value: 'pii/iban_code', label: 'IBAN Code', category: 'data_leakage_prevention' },
  { value: 'pii/address', label: 'Physical Address', category: 'data_leakage_prevention' },
  { value: 'pii/name', label: 'Personal Name', category: 'data_leakage_prevention' },
  { value: 'moderated_content/harassment', label: 'Harassment', category: 'content_moderation' },
  { value: 'moderated_content/harassment_threatening', label: 'Threatening Harassment', category: 'content_moderation' },
  { value: 'moderated_content/hate', label: 'Hate Speech', category: 'content_moderation' },
  { value: 'moderated_content/hate_threatening', label: 'Threatening Hate Speech', category: 'content_moderation' },
  { value: 'moderated_content/sexual', label: 'Sexual Content', category: 'content_moderation' },
  { value: 'moderated_content/sexual_minors', label: 'Sexual Content (Minors)', category: 'content_moderation' },
  { value: 'moderated_content/violence', label: 'Violence', category: 'content_moderation' },
  { value: 'moderated_content/violence_graphic', label: 'Graphic Violence', category: 'content_moderation' },
  { value: 'moderated_content/self_harm', label: 'Self Harm', category: 'content_moderation' },
  { value: 'moderated_content/self_harm_intent', label: 'Self Harm Intent', category: 'content_moderation' },
  { value: 'moderated_content/self_harm_instructions', label: 'Self Harm Instructions', category: 'content_moderation' },
  { value: 'moderated_content/illicit', label: 'Illicit Activities', category: 'content_moderation' },
  { value: 'moderated_content/illicit_violent', label: 'Violent Illicit Activities', category: 'content_moderation' },
  { value: 'unknown_links', label: 'Unknown Links', category: 'malicious_links' },
  // Addition to the spec's 24 types (issue 4: "Secrets are worth adding as an extra detector family"):
  // API keys, tokens, private keys, passwords. See docs/detectors-contextual.md.
  { value: 'secrets/credential', label: 'Credential or Secret', category: 'secrets' },
] as const;

export type DetectorType = (typeof DETECTOR_CATALOG)[number]['value'];
export type DetectorCategory = (typeof DETECTOR_CATALOG)[number]['category'];

export const DETECTOR_TYPES = DETECTOR_CATALOG.map((d) => d.value) as [DetectorType, ...DetectorType[]];

const KNOWN = new Set<string>(DETECTOR_TYPES);
export function isDetectorType(value: string): value is DetectorType {
  return KNOWN.has(value);
}

/** Threshold levels, least sensitive first. */
export const THRESHOLD_LEVELS = [
  { value: 'L1', label: 'Confident' },
  { value: 'L2', label: 'Very Likely' },
  { value: 'L3', label: 'Likely' },
  { value: 'L4', label: 'Less Likely' },
] as const;
