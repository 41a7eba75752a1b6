/**
 * The documented accuracy floors of the signature detectors: the minimum F1 each must reach at the
 * default threshold (L2) on its labelled corpus in test/fixtures/detection/. `npm run eval` fails when a
 * detector falls below its floor. One table, read by the eval and by the documentation.
 */
export const EVAL_FLOOR_THRESHOLD = 'L2' as const;

export const EVAL_FLOORS: Readonly<Record<string, number>> = Object.freeze({
  'pii/email': 0.98,
  'pii/credit_card': 0.98,
  'pii/us_social_security_number': 0.98,
  'pii/iban_code': 0.98,
  'pii/ip_address': 0.98,
  'pii/phone_number': 0.95,
  'pii/address': 0.85,
  'pii/name': 0.85,
  unknown_links: 0.9,
  'secrets/credential': 0.9,
});

/** Floor of any further secrets detector type (`secrets/...`), should the family grow. */
const SECRETS_FAMILY_FLOOR = 0.9;

/** The floor of a detector type, or undefined when none is documented (reported, never failing). */
export function floorFor(type: string): number | undefined {
  if (Object.prototype.hasOwnProperty.call(EVAL_FLOORS, type)) return EVAL_FLOORS[type];
  if (type.startsWith('secrets/')) return SECRETS_FAMILY_FLOOR;
  return undefined;
}
