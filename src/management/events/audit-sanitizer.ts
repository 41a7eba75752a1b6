import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { RecordedAttempt, RecordedFinding, SecurityEventKind } from '../../storage/entities/security-event.entity';

/** Why a request failed closed: detection could not be reached / errored, or overran its deadline. */
export type FailReason = 'detection_unavailable' | 'detection_timeout';
export const FAIL_REASONS: readonly FailReason[] = ['detection_unavailable', 'detection_timeout'];

/** One audit record (a SecurityEvent). Never carries matched text, credentials or bodies. */
export interface AuditEvent {
  /**
   * The row's primary key, given when the event is recorded (AuditWriter.record) so that a batch whose
   * commit reached the database but whose answer did not (a connection cut mid-write) is not stored twice
   * when it is retried or replayed from the spool: rows are inserted ON CONFLICT (id) DO NOTHING.
   */
  id?: string;
  organizationId: string | null;
  projectId: string | null;
  kind: SecurityEventKind;
  path: string;
  sessionId: string | null;
  model: string | null;
  inputTokens: number | null;
  findings: RecordedFinding[];
  blocked: boolean;
  responseStatus: number;
  latencyMs: number;
  clientIp: string | null;
  /** Set when the request failed closed (detection unavailable or timed out). */
  failReason?: FailReason | null;
  /** JSON paths of request content no detector could read (bounded: boundedPaths); null or absent when none. */
  unscannedContent?: string[] | null;
  /** The request's X-Request-Id; null or absent when unknown (events spooled before it was recorded). */
  requestId?: string | null;
  /** The upstream provider of the answer; null or absent when nothing went upstream. */
  provider?: string | null;
  /** Every attempt at an upstream provider (bounded: MAX_ATTEMPTS); null or absent when none. */
  upstreamAttempts?: RecordedAttempt[] | null;
  createdAt: Date;
}

/** Column limits of security_events (the migration's varchar lengths). */
export const COLUMN_LIMITS = { kind: 32, path: 512, sessionId: 128, model: 200, clientIp: 64, requestId: 128, provider: 64 } as const;
/** upstream_attempts: at most this many entries are kept (retries × targets is bounded by the providers file anyway). */
const MAX_ATTEMPTS = 100;
/** unscanned_content: at most this many paths of at most this many characters (the writer bounds them already). */
const UNSCANNED_LIMITS = { paths: 200, chars: 512 } as const;
const INT4_MAX = 2_147_483_647;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Removes NUL (PostgreSQL text and jsonb reject U+0000) and cuts to `max` UTF-16 units without splitting a pair. */
export function cleanText(value: string, max: number): string {
  let s = value.includes('\u0000') ? value.replace(/\u0000/g, '') : value;
  if (s.length > max) {
    s = s.slice(0, max);
    const last = s.charCodeAt(s.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) s = s.slice(0, -1);
  }
  return s;
}

const cleanNullable = (v: string | null | undefined, max: number) => (typeof v === 'string' ? cleanText(v, max) : null);
const uuidOrNull = (v: string | null) => (typeof v === 'string' && UUID.test(v) ? v.toLowerCase() : null);
const int4 = (n: number) => (Number.isFinite(n) ? Math.max(-INT4_MAX, Math.min(INT4_MAX, Math.round(n))) : 0);

/** Deep copy of a JSON value with NUL removed from every string (keys included). */
function stripNulDeep(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(/\u0000/g, '');
  if (Array.isArray(value)) return value.map(stripNulDeep);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k.replace(/\u0000/g, '')] = stripNulDeep(v);
    return out;
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return 0;
  return value;
}

function cleanPaths(paths: unknown): string[] | null {
  if (!Array.isArray(paths) || paths.length === 0) return null;
  return paths.slice(0, UNSCANNED_LIMITS.paths).map((p) => cleanText(String(p), UNSCANNED_LIMITS.chars));
}

function cleanAttempts(attempts: unknown): RecordedAttempt[] | null {
  if (!Array.isArray(attempts) || attempts.length === 0) return null;
  const text = (v: unknown, max: number) => (typeof v === 'string' ? cleanText(v, max) : null);
  return attempts.slice(0, MAX_ATTEMPTS).map((a: Partial<RecordedAttempt>) => ({
    provider: text(a?.provider, COLUMN_LIMITS.provider) ?? '',
    model: text(a?.model, COLUMN_LIMITS.model),
    status: typeof a?.status === 'number' ? int4(a.status) : null,
    error: text(a?.error, 64),
    duration_ms: typeof a?.duration_ms === 'number' && Number.isFinite(a.duration_ms) ? a.duration_ms : 0,
  }));
}

function cleanFindings(findings: unknown): RecordedFinding[] {
  try {
    // A JSON round trip drops what jsonb cannot hold (functions, undefined) and fails on cycles/bigints.
    const plain = JSON.parse(JSON.stringify(findings ?? [])) as unknown;
    return Array.isArray(plain) ? (stripNulDeep(plain) as RecordedFinding[]) : [];
  } catch {
    return [];
  }
}

/**
 * What the database accepts: no NUL anywhere, strings cut to the column limits, integers in int4 range,
 * malformed ids nulled, a valid timestamp. Applied before every write, so only constraint violations
 * (a project deleted meanwhile) can still reject a row.
 */
export function sanitizeEvent(e: AuditEvent): AuditEvent {
  const created = e.createdAt instanceof Date && !Number.isNaN(e.createdAt.getTime()) ? e.createdAt : new Date();
  return {
    id: uuidOrNull(e.id ?? null) ?? randomUUID(),
    organizationId: uuidOrNull(e.organizationId),
    projectId: uuidOrNull(e.projectId),
    kind: cleanText(String(e.kind), COLUMN_LIMITS.kind) as SecurityEventKind,
    path: cleanText(String(e.path ?? ''), COLUMN_LIMITS.path),
    sessionId: cleanNullable(e.sessionId, COLUMN_LIMITS.sessionId),
    model: cleanNullable(e.model, COLUMN_LIMITS.model),
    inputTokens: e.inputTokens === null || e.inputTokens === undefined ? null : Math.max(0, int4(e.inputTokens)),
    findings: cleanFindings(e.findings),
    blocked: e.blocked === true,
    responseStatus: int4(e.responseStatus),
    latencyMs: Number.isFinite(e.latencyMs) ? e.latencyMs : 0,
    clientIp: cleanNullable(e.clientIp, COLUMN_LIMITS.clientIp),
    failReason: e.failReason && FAIL_REASONS.includes(e.failReason) ? e.failReason : null,
    unscannedContent: cleanPaths(e.unscannedContent),
    requestId: cleanNullable(e.requestId, COLUMN_LIMITS.requestId),
    provider: cleanNullable(e.provider, COLUMN_LIMITS.provider),
    upstreamAttempts: cleanAttempts(e.upstreamAttempts),
    createdAt: created,
  };
}

/** A sanitised event as JSON (spool lines and dead-letter rows). */
export function eventToJson(e: AuditEvent): Record<string, unknown> {
  return { ...e, createdAt: e.createdAt.toISOString() };
}

const spooledEventSchema = z.object({
  id: z.string().optional(),
  organizationId: z.string().nullable(),
  projectId: z.string().nullable(),
  kind: z.enum(['request', 'auth_failed']),
  path: z.string(),
  sessionId: z.string().nullable(),
  model: z.string().nullable(),
  inputTokens: z.number().nullable(),
  findings: z.array(z.any()),
  blocked: z.boolean(),
  responseStatus: z.number(),
  latencyMs: z.number(),
  clientIp: z.string().nullable(),
  failReason: z.enum(['detection_unavailable', 'detection_timeout']).nullable().optional(),
  unscannedContent: z.array(z.string()).nullable().optional(),
  requestId: z.string().nullable().optional(),
  provider: z.string().nullable().optional(),
  upstreamAttempts: z
    .array(z.object({ provider: z.string(), model: z.string().nullable(), status: z.number().nullable(), error: z.string().nullable(), duration_ms: z.number() }))
    .nullable()
    .optional(),
  createdAt: z.iso.datetime({ offset: true }),
});

/** Parses one spooled line back into an event; null when the line is not a valid event (a torn write). */
export function eventFromJson(line: string): AuditEvent | null {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return null;
  }
  const parsed = spooledEventSchema.safeParse(raw);
  if (!parsed.success) return null;
  return { ...parsed.data, findings: parsed.data.findings as RecordedFinding[], createdAt: new Date(parsed.data.createdAt) };
}
