import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * Which organization (and project) created a stored response of the Responses API (POST /v1/responses
 * through the gateway; migration 1764800000000). Every tenant's responses live in the one provider
 * account of the gateway's credential: this record is what limits reading, deleting and continuing
 * (previous_response_id) a response to its organization (gateway/proxy/response-ownership.ts).
 */
@Entity({ name: 'response_owners' })
export class ResponseOwnerEntity {
  /** The provider's response id (`resp_...`), as the answer named it. */
  @PrimaryColumn({ name: 'response_id', type: 'varchar', length: 255 })
  responseId!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  /** The project whose key created it (no foreign key: the record outlives the project, the organization keeps access). */
  @Column({ name: 'project_id', type: 'uuid' })
  projectId!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
