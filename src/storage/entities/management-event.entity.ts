import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export type ManagementEntityType = 'policy' | 'project';

/**
 * What was done: `create`, `update`, `delete` (policies and projects), `duplicate`, `set_default`,
 * `unset_default` (policies), `rotate_key` (projects).
 */
export type ManagementAction = 'create' | 'update' | 'delete' | 'duplicate' | 'set_default' | 'unset_default' | 'rotate_key';

/**
 * Which interface the change came through: the REST or GraphQL management API, or `provision` (an
 * organization created with its default policy and first project, at bootstrap or by an operator; no key
 * acted, so the actor is empty).
 */
export type ManagementVia = 'rest' | 'graphql' | 'provision';

/** One change to a policy or project (the management audit trail; migration 1764600000000). */
@Entity({ name: 'management_events' })
export class ManagementEventEntity {
  @PrimaryColumn({ type: 'uuid', default: () => 'gen_random_uuid()' })
  id!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  /** The project whose key made the change (no foreign key: the record outlives the project); null for `provision`. */
  @Column({ name: 'actor_project_id', type: 'uuid', nullable: true })
  actorProjectId!: string | null;

  /** The display prefix of that key (`svc_sk_` + 6): never the key, never its hash. */
  @Column({ name: 'actor_key_prefix', type: 'varchar', length: 32, nullable: true })
  actorKeyPrefix!: string | null;

  @Column({ name: 'entity_type', type: 'varchar', length: 16 })
  entityType!: ManagementEntityType;

  @Column({ name: 'entity_id', type: 'uuid' })
  entityId!: string;

  @Column({ type: 'varchar', length: 32 })
  action!: ManagementAction;

  /** The resource as the API showed it before the change (secrets redacted); null for a create. */
  @Column({ type: 'jsonb', nullable: true })
  before!: Record<string, unknown> | null;

  /** The resource as the API shows it after the change (secrets redacted); null for a delete. */
  @Column({ type: 'jsonb', nullable: true })
  after!: Record<string, unknown> | null;

  /** Related ids, e.g. `source_policy_id` of a duplicate, `previous_default_policy_id` of a set_default. */
  @Column({ type: 'jsonb', nullable: true })
  details!: Record<string, unknown> | null;

  @Column({ name: 'request_id', type: 'varchar', length: 128, nullable: true })
  requestId!: string | null;

  @Column({ type: 'varchar', length: 16 })
  via!: ManagementVia;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
