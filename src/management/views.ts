import type { PolicyEntity } from '../storage/entities';
import type { KeyScope } from '../storage/entities/project.entity';
import type { CustomDetector, DetectorEntry, MatchList, PolicyMode, RateLimits, Unscannable } from '../shared/policy';
import { DEFAULT_RATE_LIMITS, effectiveUnscannable } from '../shared/policy';
import { isoString } from './query-helpers';

/** A policy as the API shows it (REST and GraphQL alike). */
export interface PolicyView {
  id: string;
  name: string;
  policy_mode: PolicyMode;
  is_default: boolean;
  input_detectors: DetectorEntry[];
  output_detectors: DetectorEntry[];
  allow_list: MatchList;
  deny_list: MatchList;
  custom_detectors: CustomDetector[];
  /** ISO 3166-1 alpha-2 regions whose national phone formats pii/phone_number reads. */
  pii_regions: string[];
  /** As set: `block`, `allow`, or null (automatic). */
  unscannable: Unscannable | null;
  /** What applies: the setting, or for null `block` when any detector blocks, else `allow`. */
  effective_unscannable: Unscannable;
  rate_limits: RateLimits;
  created_at: string;
  updated_at: string;
}

/** A project as the API shows it. policy_id / policy_name are the EFFECTIVE policy. */
export interface ProjectView {
  id: string;
  name: string;
  key_prefix: string;
  environment: string;
  policy_id: string;
  policy_name: string;
  /** True when no policy is assigned and the organization default applies. */
  uses_default_policy: boolean;
  /** `full`: traffic and management; `traffic`: proxy, detect and sensor only. */
  key_scope: KeyScope;
  is_active: boolean;
  created_at: string;
  last_used_at: string | null;
}

export interface CreatedProjectView extends ProjectView {
  /** The full API key: in this response only, never again. */
  raw_key: string;
}

export interface Page<T> {
  count: number;
  results: T[];
}


export function policyView(p: PolicyEntity): PolicyView {
  return {
    id: p.id,
    name: p.name,
    policy_mode: p.policyMode,
    is_default: p.isDefault,
    input_detectors: p.inputDetectors,
    output_detectors: p.outputDetectors,
    allow_list: p.allowList,
    deny_list: p.denyList,
    custom_detectors: p.customDetectors,
    pii_regions: p.piiRegions,
    unscannable: p.unscannable ?? null,
    effective_unscannable: effectiveUnscannable(p),
    rate_limits: { ...DEFAULT_RATE_LIMITS, ...p.rateLimits },
    created_at: isoString(p.createdAt),
    updated_at: isoString(p.updatedAt),
  };
}

export interface ProjectRow {
  id: string;
  name: string;
  key_prefix: string;
  environment: string;
  assigned_policy_id: string | null;
  effective_policy_id: string;
  effective_policy_name: string;
  key_scope: KeyScope;
  is_active: boolean;
  created_at: Date | string;
  last_used_at: Date | string | null;
}

export function projectView(r: ProjectRow): ProjectView {
  return {
    id: r.id,
    name: r.name,
    key_prefix: r.key_prefix,
    environment: r.environment,
    policy_id: r.effective_policy_id,
    policy_name: r.effective_policy_name,
    uses_default_policy: r.assigned_policy_id === null,
    key_scope: r.key_scope,
    is_active: r.is_active,
    created_at: isoString(r.created_at),
    last_used_at: r.last_used_at === null ? null : isoString(r.last_used_at),
  };
}
