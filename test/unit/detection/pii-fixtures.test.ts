import { CreditCardDetector } from '../../../src/detection/detectors/pii/credit-card-detector';
import { IbanDetector } from '../../../src/detection/detectors/pii/iban-detector';
import { IpAddressDetector } from '../../../src/detection/detectors/pii/ip-address-detector';
import { PhoneNumberDetector } from '../../../src/detection/detectors/pii/phone-number-detector';
import { UsSsnDetector } from '../../../src/detection/detectors/pii/us-ssn-detector';
import { describeLabeledCorpora } from './labeled-corpus';

/**
 * The labeled corpora of the numeric PII detectors (see labeled-corpus.ts). Texts are NFKC-normalised
 * first, as the engine does before any detector runs: some cases are full-width or no-break-space evasions.
 */
describeLabeledCorpora(
  [
    { slug: 'credit_card', type: 'pii/credit_card', detector: new CreditCardDetector(), floor: 0.98 },
    { slug: 'us_ssn', type: 'pii/us_social_security_number', detector: new UsSsnDetector(), floor: 0.98 },
    { slug: 'iban_code', type: 'pii/iban_code', detector: new IbanDetector(), floor: 0.98 },
    { slug: 'ip_address', type: 'pii/ip_address', detector: new IpAddressDetector(), floor: 0.98 },
    { slug: 'phone_number', type: 'pii/phone_number', detector: new PhoneNumberDetector(), floor: 0.95 },
  ],
  { minPerLabel: 45, nfkc: true },
);
