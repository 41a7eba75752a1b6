import type { EntityManager } from 'typeorm';
import type { PolicyEntity } from '../../storage/entities';
import { projectRow } from '../projects/project.service';
import { policyView, projectView } from '../views';
import { recordManagementChange, type Actor } from './management-trail';

/**
 * Records a freshly provisioned organization's default policy and first project (bootstrap, the
 * create-org command) in the management audit trail, on the provisioning transaction. No key acted:
 * the actor is empty and `via` is `provision`.
 */
export async function recordProvisioning(m: EntityManager, policy: PolicyEntity, projectId: string): Promise<void> {
  const actor: Actor = { organizationId: policy.organizationId, projectId: null, keyPrefix: null, via: 'provision' };
  await recordManagementChange(m, actor, { entityType: 'policy', entityId: policy.id, action: 'create', before: null, after: policyView(policy) });
  const project = projectView(await projectRow(m, policy.organizationId, projectId));
  await recordManagementChange(m, actor, { entityType: 'project', entityId: projectId, action: 'create', before: null, after: project });
}
