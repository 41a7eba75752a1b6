import type { EntityManager } from 'typeorm';
import { recordProvisioning } from '../management/audit-trail/provisioning';
import { apiKeyDisplayPrefix, generateApiKey, hashApiKey } from '../shared/api-key';
import {
  DEFAULT_PII_REGIONS,
  DEFAULT_RATE_LIMITS,
  EMPTY_MATCH_LIST,
  STARTER_INPUT_DETECTORS,
  STARTER_OUTPUT_DETECTORS,
} from '../shared/policy';
import { OrganizationEntity, PolicyEntity, ProjectEntity } from './entities';
import type { Environment } from './entities/project.entity';

export interface ProvisionOptions {
  organizationName: string;
  projectName: string;
  environment: Environment;
  /** Use this key instead of generating one (BOOTSTRAP_API_KEY). */
  apiKey?: string;
}

export interface ProvisionResult {
  organizationId: string;
  policyId: string;
  projectId: string;
  keyPrefix: string;
  /** The raw key: shown once by the caller, never stored. */
  rawKey: string;
}

/**
 * Creates an organization with its default policy (the starter detector set) and a first project
 * that uses it, both recorded in the management audit trail. Runs inside the caller's transaction.
 */
export async function provisionOrganization(m: EntityManager, o: ProvisionOptions): Promise<ProvisionResult> {
  const org = await m.save(m.create(OrganizationEntity, { name: o.organizationName }));
  const policy = await m.save(
    m.create(PolicyEntity, {
      organizationId: org.id,
      name: 'Default policy',
      policyMode: 'IO',
      isDefault: true,
      inputDetectors: STARTER_INPUT_DETECTORS,
      outputDetectors: STARTER_OUTPUT_DETECTORS,
      allowList: EMPTY_MATCH_LIST,
      denyList: EMPTY_MATCH_LIST,
      customDetectors: [],
      piiRegions: [...DEFAULT_PII_REGIONS],
      unscannable: null,
      rateLimits: DEFAULT_RATE_LIMITS,
    }),
  );
  const rawKey = o.apiKey ?? generateApiKey();
  const project = await m.save(
    m.create(ProjectEntity, {
      organizationId: org.id,
      name: o.projectName,
      environment: o.environment,
      policyId: null,
      keyHash: hashApiKey(rawKey),
      keyPrefix: apiKeyDisplayPrefix(rawKey),
      isActive: true,
      lastUsedAt: null,
    }),
  );
  // The management audit trail starts with them (no key acted: via "provision").
  await recordProvisioning(m, policy, project.id);
  return { organizationId: org.id, policyId: policy.id, projectId: project.id, keyPrefix: project.keyPrefix, rawKey };
}
