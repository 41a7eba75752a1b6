import { InitialSchema1763800000000 } from './1763800000000-initial-schema';
import { PolicyPiiRegions1764100000000 } from './1764100000000-policy-pii-regions';
import { AuditDeadLetters1764200000000 } from './1764200000000-audit-dead-letters';
import { UnscannableContent1764350000000 } from './1764350000000-unscannable-content';
import { ProjectKeyScope1764400000000 } from './1764400000000-project-key-scope';
import { AuditRequestId1764500000000 } from './1764500000000-audit-request-id';
import { ManagementEvents1764600000000 } from './1764600000000-management-events';
import { UpstreamAttempts1764700000000 } from './1764700000000-upstream-attempts';
import { ResponseOwners1764800000000 } from './1764800000000-response-owners';

/** Every migration, in order. New migrations are appended here (no glob loading: works from src and dist alike). */
export const MIGRATIONS = [
  InitialSchema1763800000000,
  PolicyPiiRegions1764100000000,
  AuditDeadLetters1764200000000,
  UnscannableContent1764350000000,
  ProjectKeyScope1764400000000,
  AuditRequestId1764500000000,
  ManagementEvents1764600000000,
  UpstreamAttempts1764700000000,
  ResponseOwners1764800000000,
];
