import type { EntityManager } from 'typeorm';
import { apiKeyDisplayPrefix, generateApiKey, hashApiKey } from '../../shared/api-key';
import { AppError, invalidRequest, notFound } from '../../shared/errors';
import type { Storage } from '../../storage/data-source';
import { ProjectEntity } from '../../storage/entities';
import type { ManagementAction } from '../../storage/entities/management-event.entity';
import type { Actor, ManagementTrail } from '../audit-trail/management-trail';
import type { ChangeBus, ChangeEvent } from '../change-bus';
import { assertId } from '../policies/policy.service';
import { likeContains, SqlFilter } from '../query-helpers';
import { projectView, type CreatedProjectView, type Page, type ProjectRow, type ProjectView } from '../views';
import type { CreateProjectInput, ListProjectsQuery, UpdateProjectInput } from './project.schemas';

/** Projects with their effective policy (assigned, else the organization default). */
const SELECT_PROJECTS = `
  SELECT p.id, p.name, p.key_prefix, p.environment, p.policy_id AS assigned_policy_id, p.key_scope, p.is_active,
         p.created_at, p.last_used_at, pol.id AS effective_policy_id, pol.name AS effective_policy_name
    FROM projects p
    JOIN policies pol
      ON pol.organization_id = p.organization_id
     AND ((p.policy_id IS NOT NULL AND pol.id = p.policy_id) OR (p.policy_id IS NULL AND pol.is_default))`;

/**
 * Projects of one organization. Writes run in a transaction that also records them in the management
 * audit trail (who, what, before → after, never a key or its hash) and publishes the change.
 */
export class ProjectService {
  constructor(
    private readonly storage: Storage,
    private readonly bus: ChangeBus,
    private readonly trail: ManagementTrail,
  ) {}

  async list(organizationId: string, q: ListProjectsQuery): Promise<Page<ProjectView>> {
    const w = new SqlFilter('p.organization_id', organizationId);
    if (q.name) w.add(`p.name ILIKE ? ESCAPE '\\'`, likeContains(q.name));
    if (q.environment) w.add('p.environment = ?', q.environment);
    if (q.is_active !== undefined) w.add('p.is_active = ?', q.is_active);
    if (q.policy_id) w.add('pol.id = ?', q.policy_id);
    const { sql: filter, params } = w;
    const [total] = await this.storage.query<{ n: number }>(`SELECT count(*)::int AS n FROM (${SELECT_PROJECTS} WHERE ${filter}) t`, params);
    const rows = await this.storage.query<ProjectRow>(
      `${SELECT_PROJECTS} WHERE ${filter} ORDER BY p.created_at ASC, p.id ASC LIMIT ${q.limit} OFFSET ${q.offset}`,
      params,
    );
    return { count: total?.n ?? 0, results: rows.map(projectView) };
  }

  async get(organizationId: string, id: string): Promise<ProjectView> {
    return projectView(await this.row(this.storage.dataSource.manager, organizationId, id));
  }

  /** Many projects by id in one query (GraphQL's DataLoader). */
  async getMany(organizationId: string, ids: readonly string[]): Promise<Map<string, ProjectView>> {
    const rows = await this.storage.query<ProjectRow>(`${SELECT_PROJECTS} WHERE p.organization_id = $1 AND p.id = ANY($2::uuid[])`, [
      organizationId,
      ids.filter((id) => /^[0-9a-f-]{36}$/i.test(id)),
    ]);
    return new Map(rows.map((r) => [r.id, projectView(r)]));
  }

  async create(actor: Actor, input: CreateProjectInput): Promise<CreatedProjectView> {
    const organizationId = actor.organizationId;
    const rawKey = generateApiKey();
    const view = await this.write(actor, { action: 'create' }, async (m) => {
      if (input.policy_id) await assertPolicyInOrganization(m, organizationId, input.policy_id);
      const saved = await m.save(
        m.create(ProjectEntity, {
          organizationId,
          name: input.name,
          environment: input.environment,
          policyId: input.policy_id ?? null,
          keyHash: hashApiKey(rawKey),
          keyPrefix: apiKeyDisplayPrefix(rawKey),
          keyScope: input.key_scope,
          isActive: true,
          lastUsedAt: null,
        }),
      );
      return saved.id;
    });
    return { ...view, raw_key: rawKey };
  }

  async update(caller: Actor, id: string, input: UpdateProjectInput): Promise<ProjectView> {
    return this.write(caller, { action: 'update', id }, async (m, p) => {
      if (input.is_active === false && p.id === caller.projectId) {
        throw new AppError('permission_denied', 'A key cannot deactivate its own project: use another project\'s key', {
          code: 'cannot_modify_own_project',
        });
      }
      if (input.key_scope === 'traffic' && p.id === caller.projectId) {
        throw new AppError('permission_denied', 'A key cannot give its own project the traffic scope (it would lose management): use another project\'s key', {
          code: 'cannot_modify_own_project',
        });
      }
      if (input.policy_id) await assertPolicyInOrganization(m, caller.organizationId, input.policy_id);
      if (input.name !== undefined) p.name = input.name;
      if (input.environment !== undefined) p.environment = input.environment;
      if (input.policy_id !== undefined) p.policyId = input.policy_id;
      if (input.is_active !== undefined) p.isActive = input.is_active;
      if (input.key_scope !== undefined) p.keyScope = input.key_scope;
      await m.save(p);
      return p.id;
    });
  }

  async delete(caller: Actor, id: string): Promise<void> {
    await this.write(caller, { action: 'delete', id }, async (m, p) => {
      if (p.id === caller.projectId) {
        throw new AppError('permission_denied', 'A key cannot delete its own project: use another project\'s key', {
          code: 'cannot_modify_own_project',
        });
      }
      await m.delete(ProjectEntity, { id: p.id, organizationId: caller.organizationId });
      return null;
    });
  }

  /** Issues a new key; the old one fails authentication on the very next request. */
  async rotateKey(actor: Actor, id: string): Promise<CreatedProjectView> {
    const rawKey = generateApiKey();
    const view = await this.write(actor, { action: 'rotate_key', id }, async (m, p) => {
      p.keyHash = hashApiKey(rawKey);
      p.keyPrefix = apiKeyDisplayPrefix(rawKey);
      await m.save(p);
      return p.id;
    });
    return { ...view, raw_key: rawKey };
  }

  private async entity(m: EntityManager, organizationId: string, id: string): Promise<ProjectEntity> {
    assertId(id, 'Project');
    const p = await m.findOne(ProjectEntity, { where: { id, organizationId }, lock: { mode: 'pessimistic_write' } });
    if (!p) throw notFound('Project not found');
    return p;
  }

  private row(m: EntityManager, organizationId: string, id: string): Promise<ProjectRow> {
    return projectRow(m, organizationId, id);
  }

  /**
   * Transaction + audit record + change notification; returns the fresh view (null for deletes). With
   * `change.id` the project is locked and read (404 when absent) before `fn` runs, so the record's
   * "before" is exactly what the change replaced; a throw rolls back the change and its record alike.
   */
  private async write(actor: Actor, change: { action: 'create' }, fn: (m: EntityManager) => Promise<string>): Promise<ProjectView>;
  private async write(
    actor: Actor,
    change: { action: Exclude<ManagementAction, 'create'>; id: string },
    fn: (m: EntityManager, locked: ProjectEntity) => Promise<string | null>,
  ): Promise<ProjectView>;
  private async write(
    actor: Actor,
    change: { action: ManagementAction; id?: string },
    fn: (m: EntityManager, locked: ProjectEntity) => Promise<string | null>,
  ): Promise<ProjectView> {
    const organizationId = actor.organizationId;
    const event: ChangeEvent = { organizationId, kind: 'project' };
    const view = await this.storage.dataSource.transaction(async (m) => {
      const locked = change.id === undefined ? undefined : await this.entity(m, organizationId, change.id);
      const before = locked ? projectView(await this.row(m, organizationId, locked.id)) : null;
      const id = await fn(m, locked!);
      const after = id === null ? null : projectView(await this.row(m, organizationId, id));
      const entityId = id ?? locked?.id;
      if (entityId) await this.trail.record(m, actor, { entityType: 'project', entityId, action: change.action, before, after });
      await this.bus.publishInTransaction(m, event);
      return after;
    });
    this.bus.emitLocal(event);
    return view as ProjectView;
  }
}

/** One project with its effective policy, read on `m` (a transaction's manager); 404 when absent. */
export async function projectRow(m: EntityManager, organizationId: string, id: string): Promise<ProjectRow> {
  assertId(id, 'Project');
  const [row] = (await m.query(`${SELECT_PROJECTS} WHERE p.organization_id = $1 AND p.id = $2`, [organizationId, id])) as ProjectRow[];
  if (!row) throw notFound('Project not found');
  return row;
}

async function assertPolicyInOrganization(m: EntityManager, organizationId: string, policyId: string): Promise<void> {
  const [row] = (await m.query('SELECT 1 FROM policies WHERE id = $1 AND organization_id = $2', [policyId, organizationId])) as unknown[];
  if (!row) throw invalidRequest('policy_id: no policy with this id in your organization', 'invalid_policy_id');
}
