import { In, type EntityManager } from 'typeorm';
import { DETECTOR_CATALOG, THRESHOLD_LEVELS } from '../../shared/detector-catalog';
import { AppError, invalidRequest, notFound } from '../../shared/errors';
import { DEFAULT_RATE_LIMITS, rateLimitsSchema, type RateLimits } from '../../shared/policy';
import type { Storage } from '../../storage/data-source';
import { PolicyEntity } from '../../storage/entities';
import type { Actor, ManagementChange, ManagementTrail } from '../audit-trail/management-trail';
import type { ChangeBus, ChangeEvent } from '../change-bus';
import { likeContains } from '../query-helpers';
import { policyView, type Page, type PolicyView } from '../views';
import type { CreatePolicyInput, ListPoliciesQuery, UpdatePolicyInput } from './policy.schemas';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An id that is not a UUID cannot exist: answer exactly as for a missing one. */
export function assertId(id: string, what: string): void {
  if (!UUID.test(id)) throw notFound(`${what} not found`);
}

/**
 * Policies of one organization. Every method is scoped by organizationId: another organization's id
 * answers 404 exactly like a missing one. Writes publish a change so every instance drops cached
 * key → policy resolutions, and record themselves in the management audit trail in the same transaction.
 */
export interface PolicyServiceOptions {
  /** Whether the alert action can deliver (ALERT_WEBHOOK_URL and ALERT_WEBHOOK_SECRET are set). */
  alertsConfigured: boolean;
}

export class PolicyService {
  constructor(
    private readonly storage: Storage,
    private readonly bus: ChangeBus,
    private readonly options: PolicyServiceOptions,
    private readonly trail: ManagementTrail,
  ) {}

  detectorTypes(): { detector_types: Array<{ value: string; label: string; category: string }> } {
    return { detector_types: DETECTOR_CATALOG.map(({ value, label, category }) => ({ value, label, category })) };
  }

  thresholdLevels(): { threshold_levels: Array<{ value: string; label: string }> } {
    return { threshold_levels: THRESHOLD_LEVELS.map(({ value, label }) => ({ value, label })) };
  }

  async list(organizationId: string, q: ListPoliciesQuery): Promise<Page<PolicyView>> {
    const qb = this.storage.dataSource
      .getRepository(PolicyEntity)
      .createQueryBuilder('p')
      .where('p.organization_id = :org', { org: organizationId });
    if (q.name) qb.andWhere('p.name ILIKE :name', { name: likeContains(q.name) });
    if (q.is_default !== undefined) qb.andWhere('p.is_default = :d', { d: q.is_default });
    if (q.policy_mode) qb.andWhere('p.policy_mode = :m', { m: q.policy_mode });
    const [rows, count] = await qb.orderBy('p.created_at', 'ASC').addOrderBy('p.id', 'ASC').skip(q.offset).take(q.limit).getManyAndCount();
    return { count, results: rows.map(policyView) };
  }

  async get(organizationId: string, id: string): Promise<PolicyView> {
    return policyView(await this.find(this.storage.dataSource.manager, organizationId, id));
  }

  /** Many policies by id in one query (GraphQL's DataLoader); ids of other organizations are simply absent. */
  async getMany(organizationId: string, ids: readonly string[]): Promise<Map<string, PolicyView>> {
    const valid = [...new Set(ids.filter((id) => UUID.test(id)))];
    if (valid.length === 0) return new Map();
    const rows = await this.storage.dataSource.getRepository(PolicyEntity).findBy({ organizationId, id: In(valid) });
    return new Map(rows.map((p) => [p.id, policyView(p)]));
  }

  async create(actor: Actor, input: CreatePolicyInput): Promise<PolicyView> {
    assertAlertsUsable(input, this.options.alertsConfigured);
    const organizationId = actor.organizationId;
    return this.write(actor, async (m, record) => {
      const entity = m.create(PolicyEntity, {
        organizationId,
        name: input.name,
        policyMode: input.policy_mode,
        isDefault: false,
        inputDetectors: input.input_detectors,
        outputDetectors: input.output_detectors,
        allowList: input.allow_list,
        denyList: input.deny_list,
        customDetectors: input.custom_detectors,
        piiRegions: input.pii_regions,
        unscannable: input.unscannable,
        rateLimits: mergeRateLimits(DEFAULT_RATE_LIMITS, input.rate_limits),
      });
      const saved = await m.save(entity);
      await record({ entityId: saved.id, action: 'create', before: null, after: policyView(saved) });
      return saved;
    });
  }

  async update(actor: Actor, id: string, input: UpdatePolicyInput): Promise<PolicyView> {
    assertAlertsUsable(input, this.options.alertsConfigured);
    return this.write(actor, async (m, record) => {
      const p = await this.find(m, actor.organizationId, id, true);
      const before = policyView(p);
      if (input.name !== undefined) p.name = input.name;
      if (input.policy_mode !== undefined) p.policyMode = input.policy_mode;
      if (input.input_detectors !== undefined) p.inputDetectors = input.input_detectors;
      if (input.output_detectors !== undefined) p.outputDetectors = input.output_detectors;
      if (input.allow_list !== undefined) p.allowList = input.allow_list;
      if (input.deny_list !== undefined) p.denyList = input.deny_list;
      if (input.custom_detectors !== undefined) p.customDetectors = input.custom_detectors;
      if (input.pii_regions !== undefined) p.piiRegions = input.pii_regions;
      if (input.unscannable !== undefined) p.unscannable = input.unscannable;
      if (input.rate_limits !== undefined) p.rateLimits = mergeRateLimits(p.rateLimits, input.rate_limits);
      p.updatedAt = new Date(); // changes the policy version even when only JSON columns changed
      const saved = await m.save(p);
      await record({ entityId: saved.id, action: 'update', before, after: policyView(saved) });
      return saved;
    });
  }

  async delete(actor: Actor, id: string): Promise<void> {
    const organizationId = actor.organizationId;
    await this.write(actor, async (m, record) => {
      const p = await this.find(m, organizationId, id, true);
      if (p.isDefault) {
        throw new AppError(
          'invalid_request',
          'The organization default policy cannot be deleted: make another policy the default first (POST /v1/policies/{id}/set_default/)',
          { code: 'default_policy_undeletable' },
        );
      }
      // Projects assigned to it are unassigned by the foreign key (ON DELETE SET NULL) and fall back to the default.
      await m.delete(PolicyEntity, { id: p.id, organizationId });
      await record({ entityId: p.id, action: 'delete', before: policyView(p), after: null });
      return p;
    });
  }

  /** Moves the default atomically: the organization row is locked, so concurrent calls serialise. */
  async setDefault(actor: Actor, id: string): Promise<PolicyView> {
    const organizationId = actor.organizationId;
    return this.write(actor, async (m, record) => {
      await m.query('SELECT id FROM organizations WHERE id = $1 FOR UPDATE', [organizationId]);
      const p = await this.find(m, organizationId, id);
      if (p.isDefault) return p; // already the default: nothing changes, nothing is recorded
      const previous = await m.findOne(PolicyEntity, { where: { organizationId, isDefault: true } });
      await m.query('UPDATE policies SET is_default = false, updated_at = now() WHERE organization_id = $1 AND is_default', [organizationId]);
      await m.query('UPDATE policies SET is_default = true, updated_at = now() WHERE id = $1 AND organization_id = $2', [id, organizationId]);
      const updated = await this.find(m, organizationId, id);
      await record({
        entityId: id,
        action: 'set_default',
        before: policyView(p),
        after: policyView(updated),
        details: previous ? { previous_default_policy_id: previous.id } : undefined,
      });
      if (previous) {
        const demoted = await this.find(m, organizationId, previous.id);
        await record({ entityId: previous.id, action: 'unset_default', before: policyView(previous), after: policyView(demoted), details: { new_default_policy_id: id } });
      }
      return updated;
    });
  }

  async duplicate(actor: Actor, id: string): Promise<PolicyView> {
    const organizationId = actor.organizationId;
    return this.write(actor, async (m, record) => {
      const p = await this.find(m, organizationId, id);
      const copy = m.create(PolicyEntity, {
        organizationId,
        name: copyName(p.name),
        policyMode: p.policyMode,
        isDefault: false,
        inputDetectors: p.inputDetectors,
        outputDetectors: p.outputDetectors,
        allowList: p.allowList,
        denyList: p.denyList,
        customDetectors: p.customDetectors,
        piiRegions: p.piiRegions,
        unscannable: p.unscannable,
        rateLimits: p.rateLimits,
      });
      const saved = await m.save(copy);
      await record({ entityId: saved.id, action: 'duplicate', before: null, after: policyView(saved), details: { source_policy_id: p.id } });
      return saved;
    }, false);
  }

  private async find(m: EntityManager, organizationId: string, id: string, lock = false): Promise<PolicyEntity> {
    assertId(id, 'Policy');
    const p = await m.findOne(PolicyEntity, {
      where: { id, organizationId },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (!p) throw notFound('Policy not found');
    return p;
  }

  /**
   * Runs a write in a transaction with its audit record(s), publishes the change, and returns the policy
   * view. A write that throws rolls back with its records: a failed change leaves no trace in the trail.
   */
  private async write(actor: Actor, fn: (m: EntityManager, record: RecordFn) => Promise<PolicyEntity>, changesTraffic = true): Promise<PolicyView> {
    const event: ChangeEvent = { organizationId: actor.organizationId, kind: 'policy' };
    const saved = await this.storage.dataSource.transaction(async (m) => {
      const out = await fn(m, (change) => this.trail.record(m, actor, { entityType: 'policy', ...change }));
      if (changesTraffic) await this.bus.publishInTransaction(m, event);
      return out;
    });
    if (changesTraffic) this.bus.emitLocal(event);
    return policyView(saved);
  }
}

type RecordFn = (change: Omit<ManagementChange, 'entityType'>) => Promise<void>;

type DetectorLists = Pick<UpdatePolicyInput, 'input_detectors' | 'output_detectors' | 'custom_detectors'>;

/**
 * The alert action delivers through the signed webhook only: without it configured an `alert` entry
 * would silently do nothing, so a create or update that sets one is refused (400 alerts_not_configured).
 */
function assertAlertsUsable(input: DetectorLists, alertsConfigured: boolean): void {
  if (alertsConfigured) return;
  for (const field of ['input_detectors', 'output_detectors', 'custom_detectors'] as const) {
    const index = (input[field] ?? []).findIndex((entry) => entry.action === 'alert');
    if (index < 0) continue;
    throw invalidRequest(
      `${field}[${index}].action is "alert" but alerts are not configured on this deployment: set ALERT_WEBHOOK_URL and ALERT_WEBHOOK_SECRET, or use "block" or "log"`,
      'alerts_not_configured',
      { fields: [{ path: `${field}.${index}.action`, message: 'alerts are not configured (ALERT_WEBHOOK_URL, ALERT_WEBHOOK_SECRET)' }] },
    );
  }
}

function mergeRateLimits(current: Partial<RateLimits>, patch: Partial<RateLimits>): RateLimits {
  const merged = rateLimitsSchema.safeParse({ ...DEFAULT_RATE_LIMITS, ...current, ...patch });
  if (!merged.success) throw invalidRequest(`rate_limits: ${merged.error.issues[0]?.message ?? 'invalid'}`);
  return merged.data;
}

function copyName(name: string): string {
  const suffix = ' (copy)';
  return (name.length + suffix.length > 200 ? name.slice(0, 200 - suffix.length) : name) + suffix;
}
