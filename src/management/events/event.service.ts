import type { Storage } from '../../storage/data-source';
import type { RecordedAttempt, RecordedFinding, RecordedMatch } from '../../storage/entities/security-event.entity';
import { isoString, SqlFilter } from '../query-helpers';
import type { Page } from '../views';
import type { Decision, EventStatsQuery, ListEventsQuery, ListSessionsQuery } from './event.schemas';

/** A finding as the API shows it: `matches` always present (empty for events recorded before matches existed). */
export type FindingView = RecordedFinding & { matches: RecordedMatch[] };

function findingView(f: RecordedFinding): FindingView {
  return { type: f.type, confidence: f.confidence, action: f.action, matches: f.matches ?? [] };
}

export interface EventView {
  id: string;
  project_id: string | null;
  path: string;
  session_id: string | null;
  model: string | null;
  input_tokens: number | null;
  findings: FindingView[];
  blocked: boolean;
  /** blocked; flagged (not blocked, a detector fired); allowed (nothing fired). */
  decision: Decision;
  response_status: number;
  latency_ms: number;
  /** `detection_unavailable` / `detection_timeout` when the request failed closed; null otherwise. */
  fail_reason: string | null;
  /** JSON paths of request content no detector could read (allowed by the policy, or the reason of the block); [] when none. */
  unscanned_content: string[];
  /** The request's X-Request-Id (echoed to the client); null on events recorded before it was stored. */
  request_id: string | null;
  /** The upstream provider of the answer (the last one tried); null when nothing went upstream. */
  provider: string | null;
  /** Every attempt at an upstream provider, in order: provider, model, status or error, duration_ms; [] when none. */
  upstream_attempts: RecordedAttempt[];
  created_at: string;
}

export interface SessionSummaryView {
  session_id: string;
  count: number;
  blocked_count: number;
  first_seen: string;
  last_seen: string;
  models: string[];
}

/** Counts of one time bucket (or of the whole range) by decision. */
export interface DecisionCounts {
  total: number;
  blocked: number;
  flagged: number;
  allowed: number;
}

export interface EventStatsView {
  /** The width of a bucket, seconds. */
  bucket_seconds: number;
  totals: DecisionCounts;
  /** Non-empty buckets, oldest first (at most MAX_STAT_BUCKETS, the newest). */
  buckets: Array<DecisionCounts & { start: string }>;
  /** The finding types that fired most often: events with the type, and of those the blocked ones. */
  top_detectors: Array<{ type: string; count: number; blocked: number }>;
}

/** Most buckets event_stats returns (the newest). */
export const MAX_STAT_BUCKETS = 500;

interface Filter {
  sql: string;
  params: unknown[];
}

/** The decision of an event as SQL (see decisionSchema). */
const DECISION_SQL: Record<Decision, string> = {
  blocked: 'blocked',
  flagged: 'NOT blocked AND jsonb_array_length(findings) > 0',
  allowed: 'NOT blocked AND jsonb_array_length(findings) = 0',
};

const COUNTS_SQL = `count(*)::int AS total, count(*) FILTER (WHERE ${DECISION_SQL.blocked})::int AS blocked,
  count(*) FILTER (WHERE ${DECISION_SQL.flagged})::int AS flagged, count(*) FILTER (WHERE ${DECISION_SQL.allowed})::int AS allowed`;

const counts = (r: Record<string, any> | undefined): DecisionCounts => ({
  total: r?.total ?? 0,
  blocked: r?.blocked ?? 0,
  flagged: r?.flagged ?? 0,
  allowed: r?.allowed ?? 0,
});

export function decisionOf(blocked: boolean, findings: readonly unknown[]): Decision {
  return blocked ? 'blocked' : findings.length > 0 ? 'flagged' : 'allowed';
}


/** Builds `WHERE organization_id = $1 AND …` from optional filters (values are always bound parameters). */
function where(organizationId: string, f: Partial<ListEventsQuery>): Filter {
  const w = new SqlFilter('organization_id', organizationId);
  if (f.path) w.add('path = ?', f.path);
  if (f.session_id) w.add('session_id = ?', f.session_id);
  if (f.request_id) w.add('request_id = ?', f.request_id);
  if (f.project_id) w.add('project_id = ?', f.project_id);
  if (f.blocked !== undefined) w.add('blocked = ?', f.blocked);
  if (f.decision) w.addCondition(`(${DECISION_SQL[f.decision]})`);
  // jsonb containment: some finding has this type (bound as a JSON document, never spliced).
  if (f.detector) w.add('findings @> ?::jsonb', JSON.stringify([{ type: f.detector }]));
  if (f.since) w.add('created_at >= ?', f.since);
  if (f.until) w.add('created_at < ?', f.until);
  return { sql: w.sql, params: w.params };
}

/** Audit events of one organization: filterable by path, session, project, verdict and time; grouped by session. */
export class EventService {
  constructor(private readonly storage: Storage) {}

  async list(organizationId: string, q: ListEventsQuery): Promise<Page<EventView>> {
    const w = where(organizationId, q);
    const [total] = await this.storage.query<{ n: number }>(`SELECT count(*)::int AS n FROM security_events WHERE ${w.sql}`, w.params);
    const rows = await this.storage.query<Record<string, any>>(
      `SELECT id, project_id, path, session_id, model, input_tokens, findings, blocked, response_status, latency_ms, fail_reason, unscanned_content, request_id, provider, upstream_attempts, created_at
         FROM security_events WHERE ${w.sql} ORDER BY created_at DESC, id DESC LIMIT ${q.limit} OFFSET ${q.offset}`,
      w.params,
    );
    return {
      count: total?.n ?? 0,
      results: rows.map((r) => ({
        id: r.id,
        project_id: r.project_id,
        path: r.path,
        session_id: r.session_id,
        model: r.model,
        input_tokens: r.input_tokens,
        findings: (r.findings as RecordedFinding[]).map(findingView),
        blocked: r.blocked,
        decision: decisionOf(r.blocked, r.findings as RecordedFinding[]),
        response_status: r.response_status,
        latency_ms: Number(r.latency_ms),
        fail_reason: r.fail_reason ?? null,
        unscanned_content: Array.isArray(r.unscanned_content) ? r.unscanned_content : [],
        request_id: r.request_id ?? null,
        provider: r.provider ?? null,
        upstream_attempts: Array.isArray(r.upstream_attempts) ? r.upstream_attempts : [],
        created_at: isoString(r.created_at),
      })),
    };
  }

  /** Counts by decision over time buckets, and the detectors that fired most (the console's charts). */
  async stats(organizationId: string, q: EventStatsQuery): Promise<EventStatsView> {
    const w = where(organizationId, q);
    const b = q.bucket_seconds;
    const [totals] = await this.storage.query<Record<string, any>>(`SELECT ${COUNTS_SQL} FROM security_events WHERE ${w.sql}`, w.params);
    const buckets = await this.storage.query<Record<string, any>>(
      `SELECT to_timestamp(floor(extract(epoch FROM created_at) / ${b}) * ${b}) AS start, ${COUNTS_SQL}
         FROM security_events WHERE ${w.sql} GROUP BY 1 ORDER BY 1 DESC LIMIT ${MAX_STAT_BUCKETS}`,
      w.params,
    );
    const top = await this.storage.query<Record<string, any>>(
      `SELECT f.value->>'type' AS type, count(DISTINCT id)::int AS count, count(DISTINCT id) FILTER (WHERE blocked)::int AS blocked
         FROM security_events CROSS JOIN LATERAL jsonb_array_elements(findings) AS f(value)
        WHERE ${w.sql} GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT ${q.top}`,
      w.params,
    );
    return {
      bucket_seconds: b,
      totals: counts(totals),
      buckets: buckets.reverse().map((r) => ({ start: isoString(r.start), ...counts(r) })),
      top_detectors: top.map((r) => ({ type: r.type, count: r.count, blocked: r.blocked })),
    };
  }

  /** Per-session summaries (events grouped by session_id), most recently active first. */
  async sessions(organizationId: string, q: ListSessionsQuery): Promise<Page<SessionSummaryView>> {
    const w = where(organizationId, q);
    const filter = `${w.sql} AND session_id IS NOT NULL`;
    const [total] = await this.storage.query<{ n: number }>(
      `SELECT count(DISTINCT session_id)::int AS n FROM security_events WHERE ${filter}`,
      w.params,
    );
    const rows = await this.storage.query<Record<string, any>>(
      `SELECT session_id, count(*)::int AS count, count(*) FILTER (WHERE blocked)::int AS blocked_count,
              min(created_at) AS first_seen, max(created_at) AS last_seen,
              coalesce(array_agg(DISTINCT model) FILTER (WHERE model IS NOT NULL), '{}') AS models
         FROM security_events WHERE ${filter}
        GROUP BY session_id ORDER BY max(created_at) DESC, session_id LIMIT ${q.limit} OFFSET ${q.offset}`,
      w.params,
    );
    return {
      count: total?.n ?? 0,
      results: rows.map((r) => ({
        session_id: r.session_id,
        count: r.count,
        blocked_count: r.blocked_count,
        first_seen: isoString(r.first_seen),
        last_seen: isoString(r.last_seen),
        models: [...(r.models as string[])].sort(),
      })),
    };
  }
}
