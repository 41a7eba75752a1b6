import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { CustomDetector, DetectorEntry, MatchList, PolicyMode, RateLimits, Unscannable } from '../../shared/policy';

@Entity({ name: 'policies' })
export class PolicyEntity {
  @PrimaryColumn({ type: 'uuid', default: () => 'gen_random_uuid()' })
  id!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @Column({ type: 'varchar', length: 200 })
  name!: string;

  @Column({ name: 'policy_mode', type: 'varchar', length: 2 })
  policyMode!: PolicyMode;

  @Column({ name: 'is_default', type: 'boolean', default: false })
  isDefault!: boolean;

  @Column({ name: 'input_detectors', type: 'jsonb' })
  inputDetectors!: DetectorEntry[];

  @Column({ name: 'output_detectors', type: 'jsonb' })
  outputDetectors!: DetectorEntry[];

  @Column({ name: 'allow_list', type: 'jsonb' })
  allowList!: MatchList;

  @Column({ name: 'deny_list', type: 'jsonb' })
  denyList!: MatchList;

  @Column({ name: 'custom_detectors', type: 'jsonb' })
  customDetectors!: CustomDetector[];

  /** ISO 3166-1 alpha-2 codes (pii_regions); the column default is DEFAULT_PII_REGIONS (migration 1764100000000). */
  @Column({ name: 'pii_regions', type: 'jsonb' })
  piiRegions!: string[];

  /** `block` / `allow` for content no detector can read; null = automatic (block when any detector blocks). */
  @Column({ type: 'varchar', length: 8, nullable: true })
  unscannable!: Unscannable | null;

  @Column({ name: 'rate_limits', type: 'jsonb' })
  rateLimits!: RateLimits;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
