import type { EntityManager } from 'typeorm';
import { ManagementTrail, type Actor, type ManagementChange } from '../../../src/management/audit-trail/management-trail';
import { ChangeBus } from '../../../src/management/change-bus';
import { PolicyService } from '../../../src/management/policies/policy.service';
import { ProjectService } from '../../../src/management/projects/project.service';
import { prepareStorage, type BootstrapOutcome } from '../../../src/storage/startup';
import { STORAGE_TARGETS, freshStorage } from '../../helpers/databases';

/** A trail whose writes fail (as a full disk or a broken constraint would): the change must not commit either. */
class FailingTrail extends ManagementTrail {
  override async record(_m: EntityManager, _actor: Actor, _change: ManagementChange): Promise<void> {
    throw new Error('trail write failed');
  }
}

describe.each(STORAGE_TARGETS.map((t) => [t.name, t] as const))('management trail and its change share one transaction on %s', (_name, target) => {
  let db: Awaited<ReturnType<typeof freshStorage>>;
  let actor: Actor;
  let policyId: string;
  let projectId: string;

  beforeEach(async () => {
    db = await freshStorage(target);
    const boot: BootstrapOutcome = await prepareStorage(db.storage);
    if (!boot.created) throw new Error('expected a bootstrap');
    ({ policyId, projectId } = boot.result);
    actor = { organizationId: boot.result.organizationId, projectId, keyPrefix: boot.result.keyPrefix, via: 'rest' };
  });
  afterEach(async () => {
    await db?.dispose();
  });

  const snapshot = async () => ({
    policies: await db.storage.query('SELECT id, name, is_default, updated_at FROM policies ORDER BY id'),
    projects: await db.storage.query('SELECT id, name, key_hash, key_prefix, policy_id, updated_at FROM projects ORDER BY id'),
    trail: await db.storage.query('SELECT id FROM management_events ORDER BY id'),
  });

  it('a change whose record cannot be written does not happen', async () => {
    const trail = new FailingTrail(db.storage);
    const policies = new PolicyService(db.storage, new ChangeBus(), { alertsConfigured: false }, trail);
    const projects = new ProjectService(db.storage, new ChangeBus(), trail);
    const before = await snapshot();
    const other = (await db.storage.query<{ id: string }>(
      `INSERT INTO policies (organization_id, name, policy_mode, input_detectors, output_detectors, allow_list, deny_list, custom_detectors, rate_limits)
       VALUES ($1, 'Other', 'IO', '[]', '[]', '{"entries":[],"match_type":"contains"}', '{"entries":[],"match_type":"contains"}', '[]', '{}') RETURNING id`,
      [actor.organizationId],
    ))[0]!.id;
    const withOther = await snapshot();
    expect(withOther.policies).toHaveLength(before.policies.length + 1);

    const attempts: Array<() => Promise<unknown>> = [
      () => policies.create(actor, { name: 'x', policy_mode: 'IO', input_detectors: [], output_detectors: [], allow_list: { entries: [], match_type: 'contains' }, deny_list: { entries: [], match_type: 'contains' }, custom_detectors: [], pii_regions: ['US'], rate_limits: {} } as never),
      () => policies.update(actor, policyId, { name: 'renamed' } as never),
      () => policies.setDefault(actor, other),
      () => policies.duplicate(actor, policyId),
      () => policies.delete(actor, other),
      () => projects.create(actor, { name: 'p', environment: 'production' } as never),
      () => projects.update(actor, projectId, { name: 'renamed' } as never),
      () => projects.rotateKey(actor, projectId),
    ];
    for (const attempt of attempts) await expect(attempt()).rejects.toThrow('trail write failed');
    expect(await snapshot()).toEqual(withOther);
  });
});
