import type { EntityManager } from 'typeorm';
import type { Storage } from '../../storage/data-source';
import type { ManagementAction, ManagementEntityType, ManagementVia } from '../../storage/entities/management-event.entity';
import { isoString, SqlFilter } from '../query-helpers';
import type { Page } from '../views';
import type { ListManagementEventsQuery } from './management-trail.schemas';
import { redactSecrets } from './redact';

/**
 * Who makes a management change: the calling key's organization, project and display prefix, the
 * request id, and the interface. Every mutating method of the policy and project services takes one.
 */
export interface Actor {
  organizationId: string;
  /** Null when no key acted (provisioning). */
  projectId: string | null;
  /** `svc_sk_` + 6 characters: never the key, never its hash. Null when no key acted. */
  keyPrefix: string | null;
  requestId?: string;
  via: ManagementVia;
}

/** One change as recorded: the entity, the action, and the resource before and after (API views). */
export interface ManagementChange {
  entityType: ManagementEntityType;
  entityId: string;
  action: ManagementAction;
  before: object | null;
  after: object | null;
  details?: Record<string, unknown>;
}

export interface ManagementEventView {
  id: string;
  actor: { project_id: string | null; key_prefix: string | null };
  entity_type: ManagementEntityType;
  entity_id: string;
  action: ManagementAction;
  /** The resource as the API showed it before the change; null for create and duplicate. */
  before: Record<string, unknown> | null;
  /** The resource as the API shows it after the change; null for delete. */
  after: Record<string, unknown> | null;
  /** Top-level fields whose value differs between before and after, sorted. */
  changed_fields: string[];
  details: Record<string, unknown> | null;
  request_id: string | null;
  via: ManagementVia;
  created_at: string;
}

const INSERT_SQL = `INSERT INTO management_events
  (organization_id, actor_project_id, actor_key_prefix, entity_type, entity_id, action, before, after, details, request_id, via)
  VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9::jsonb, $10, $11)`;

/** Writes one record on the change's transaction (`m`): see ManagementTrail. */
export async function recordManagementChange(m: EntityManager, actor: Actor, change: ManagementChange): Promise<void> {
  await m.query(INSERT_SQL, [
    actor.organizationId,
    actor.projectId,
    actor.keyPrefix,
    change.entityType,
    change.entityId,
    change.action,
    json(change.before),
    json(change.after),
    json(change.details),
    actor.requestId ?? null,
    actor.via,
  ]);
}

const json = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(redactSecrets(value)));

/** Top-level keys whose JSON differs between two snapshots (all keys of the one present for create/delete). */
export function changedFields(before: Record<string, unknown> | null, after: Record<string, unknown> | null): string[] {
  const keys = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  return [...keys].filter((k) => JSON.stringify(before?.[k]) !== JSON.stringify(after?.[k])).sort();
}

/**
 * The management audit trail: every change to a policy or project, recorded by the services inside the
 * transaction of the change (so a change never commits without its record, and a failed change leaves
 * none), and read back per organization only.
 */
export class ManagementTrail {
  constructor(private readonly storage: Storage) {}

  /** Writes one record on the change's transaction. */
  record(m: EntityManager, actor: Actor, change: ManagementChange): Promise<void> {
    return recordManagementChange(m, actor, change);
  }

  /** The organization's records, newest first, filtered by entity, action, actor, request id and time. */
  async list(organizationId: string, q: ListManagementEventsQuery): Promise<Page<ManagementEventView>> {
    const w = new SqlFilter('organization_id', organizationId);
    if (q.entity_type) w.add('entity_type = ?', q.entity_type);
    if (q.entity_id) w.add('entity_id = ?', q.entity_id);
    if (q.action) w.add('action = ?', q.action);
    if (q.actor_project_id) w.add('actor_project_id = ?', q.actor_project_id);
    if (q.request_id) w.add('request_id = ?', q.request_id);
    if (q.since) w.add('created_at >= ?', q.since);
    if (q.until) w.add('created_at < ?', q.until);
    const { sql: where, params } = w;
    const [total] = await this.storage.query<{ n: number }>(`SELECT count(*)::int AS n FROM management_events WHERE ${where}`, params);
    const rows = await this.storage.query<Record<string, any>>(
      `SELECT id, actor_project_id, actor_key_prefix, entity_type, entity_id, action, before, after, details, request_id, via, created_at
         FROM management_events WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ${q.limit} OFFSET ${q.offset}`,
      params,
    );
    return {
      count: total?.n ?? 0,
      results: rows.map((r) => ({
        id: r.id,
        actor: { project_id: r.actor_project_id, key_prefix: r.actor_key_prefix },
        entity_type: r.entity_type,
        entity_id: r.entity_id,
        action: r.action,
        before: r.before ?? null,
        after: r.after ?? null,
        changed_fields: changedFields(r.before ?? null, r.after ?? null),
        details: r.details ?? null,
        request_id: r.request_id ?? null,
        via: r.via,
        created_at: isoString(r.created_at),
      })),
    };
  }
}
