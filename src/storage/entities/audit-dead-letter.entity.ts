import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** An audit event the database rejected even after sanitising (written by AuditBatchInserter). */
@Entity({ name: 'audit_dead_letters' })
export class AuditDeadLetterEntity {
  @PrimaryColumn({ type: 'uuid', default: () => 'gen_random_uuid()' })
  id!: string;

  /** The sanitised event (camelCase fields of AuditEvent, createdAt as ISO 8601). */
  @Column({ type: 'jsonb' })
  event!: Record<string, unknown>;

  /** SQLSTATE of the rejection (e.g. 23503 foreign_key_violation). */
  @Column({ name: 'error_code', type: 'varchar', length: 32 })
  errorCode!: string;

  @Column({ name: 'constraint_name', type: 'varchar', length: 128, nullable: true })
  constraintName!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
