import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** Where a finding matched: a span of one content field and the signal that fired (never the text). */
export interface RecordedMatch {
  /** JSON path of the content field, e.g. `messages[2].content`. */
  path: string;
  /** UTF-16 offsets inside the field, end exclusive. */
  start: number;
  end: number;
  signal: string;
  score: number;
}

/** A detector result as recorded in the audit trail: never the matched text. */
export interface RecordedFinding {
  type: string;
  confidence: number;
  action: string;
  /** At most MAX_MATCHES_PER_CATEGORY, highest scores first; absent on events written before matches existed. */
  matches?: RecordedMatch[];
}

/** One attempt of a request at an upstream provider (retries and fallbacks each add one). */
export interface RecordedAttempt {
  /** The provider's name (PROVIDERS_FILE), `openai` for the single OPENAI_BASE_URL upstream. */
  provider: string;
  /** The model asked of that provider (a route target may name another than the caller's). */
  model: string | null;
  /** The answer's status; null when none came (see error). */
  status: number | null;
  /** A transport failure: connect_error, connect_timeout, connection_reset, timeout, transport_error, aborted. */
  error: string | null;
  duration_ms: number;
}

export type SecurityEventKind = 'request' | 'auth_failed';

@Entity({ name: 'security_events' })
export class SecurityEventEntity {
  @PrimaryColumn({ type: 'uuid', default: () => 'gen_random_uuid()' })
  id!: string;

  /** Null for failed authentication (no organization is known). */
  @Column({ name: 'organization_id', type: 'uuid', nullable: true })
  organizationId!: string | null;

  @Column({ name: 'project_id', type: 'uuid', nullable: true })
  projectId!: string | null;

  @Column({ type: 'varchar', length: 32 })
  kind!: SecurityEventKind;

  @Column({ type: 'varchar', length: 512 })
  path!: string;

  @Column({ name: 'session_id', type: 'varchar', length: 128, nullable: true })
  sessionId!: string | null;

  @Column({ type: 'varchar', length: 200, nullable: true })
  model!: string | null;

  @Column({ name: 'input_tokens', type: 'integer', nullable: true })
  inputTokens!: number | null;

  @Column({ type: 'jsonb' })
  findings!: RecordedFinding[];

  @Column({ type: 'boolean', default: false })
  blocked!: boolean;

  @Column({ name: 'response_status', type: 'integer' })
  responseStatus!: number;

  @Column({ name: 'latency_ms', type: 'double precision' })
  latencyMs!: number;

  @Column({ name: 'client_ip', type: 'varchar', length: 64, nullable: true })
  clientIp!: string | null;

  /** Why the request failed closed: `detection_unavailable` or `detection_timeout`; null otherwise. */
  @Column({ name: 'fail_reason', type: 'varchar', length: 32, nullable: true })
  failReason!: string | null;

  /** JSON paths of request content no detector could read (images, audio, PDFs, file references); null when none. */
  @Column({ name: 'unscanned_content', type: 'jsonb', nullable: true })
  unscannedContent!: string[] | null;

  /** The request's X-Request-Id (the client's valid one, else generated); null on events before it was recorded. */
  @Column({ name: 'request_id', type: 'varchar', length: 128, nullable: true })
  requestId!: string | null;

  /** The upstream provider that gave the answer (the last one tried); null when nothing went upstream. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  provider!: string | null;

  /** Every attempt at an upstream provider, in order; null when nothing went upstream. */
  @Column({ name: 'upstream_attempts', type: 'jsonb', nullable: true })
  upstreamAttempts!: RecordedAttempt[] | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
