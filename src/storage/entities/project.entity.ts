import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

export type Environment = 'production' | 'staging' | 'development';

/** What a project's key may do: `full` = traffic and management, `traffic` = proxy, detect and sensor only. */
export type KeyScope = 'full' | 'traffic';

@Entity({ name: 'projects' })
export class ProjectEntity {
  @PrimaryColumn({ type: 'uuid', default: () => 'gen_random_uuid()' })
  id!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @Column({ type: 'varchar', length: 200 })
  name!: string;

  @Column({ type: 'varchar', length: 32 })
  environment!: Environment;

  /** Assigned policy; null means "use the organization default". */
  @Column({ name: 'policy_id', type: 'uuid', nullable: true })
  policyId!: string | null;

  /** SHA-256 (hex) of the API key. The raw key is never stored. */
  @Column({ name: 'key_hash', type: 'char', length: 64 })
  keyHash!: string;

  @Column({ name: 'key_prefix', type: 'varchar', length: 32 })
  keyPrefix!: string;

  @Column({ name: 'key_scope', type: 'varchar', length: 16, default: 'full' })
  keyScope!: KeyScope;

  @Column({ name: 'is_active', type: 'boolean', default: true })
  isActive!: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt!: Date | null;
}
