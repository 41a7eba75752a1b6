import { UnknownLinksDetector } from '../../../src/detection/detectors/links/unknown-links-detector';
import { AddressDetector } from '../../../src/detection/detectors/pii/address-detector';
import { PersonNameDetector } from '../../../src/detection/detectors/pii/person-name-detector';
import { CredentialDetector } from '../../../src/detection/detectors/secrets/credential-detector';
import { describeLabeledCorpora } from './labeled-corpus';

/** The labeled corpora of the contextual detectors (see labeled-corpus.ts). */
describeLabeledCorpora(
  [
    { slug: 'address', type: 'pii/address', detector: new AddressDetector(), floor: 0.85 },
    { slug: 'person_name', type: 'pii/name', detector: new PersonNameDetector(), floor: 0.85 },
    { slug: 'unknown_links', type: 'unknown_links', detector: new UnknownLinksDetector(), floor: 0.95 },
    { slug: 'credential', type: 'secrets/credential', detector: new CredentialDetector(), floor: 0.95 },
  ],
  { minPerLabel: 40, nfkc: false },
);
