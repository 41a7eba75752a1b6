import { useMemo, useState } from 'preact/hooks';
import type { Json } from '../api';
import { DecisionChart, TopDetectors } from '../charts';
import { DecisionBadge, ErrorBanner, Section } from '../components';
import { directionsOf, formatMs, formatTime, limitsState, localToIso } from '../format';
import { useQuery } from '../hooks';

const EVENT_FIELDS = `id project_id path session_id model input_tokens blocked decision response_status latency_ms fail_reason
  unscanned_content request_id provider upstream_attempts { provider status error } created_at findings { type confidence action matches { path start end signal score } }`;

const EVENTS_Q = `query Events($limit: Int, $offset: Int, $project_id: ID, $decision: Decision, $detector: String, $session_id: String, $since: String, $until: String) {
  events(limit: $limit, offset: $offset, project_id: $project_id, decision: $decision, detector: $detector, session_id: $session_id, since: $since, until: $until) {
    count results { ${EVENT_FIELDS} } } }`;

const STATS_Q = `query Stats($project_id: ID, $decision: Decision, $detector: String, $session_id: String, $since: String, $until: String, $bucket_seconds: Int) {
  event_stats(project_id: $project_id, decision: $decision, detector: $detector, session_id: $session_id, since: $since, until: $until, bucket_seconds: $bucket_seconds) {
    bucket_seconds totals { total blocked flagged allowed } buckets { start total blocked flagged allowed } top_detectors { type count blocked } } }`;

export const LOOKUPS_Q = `{ projects(limit: 100) { results { id name } } detector_types { value label } }`;

const PAGE = 25;
/** How often the list and the charts refresh (live updates without a reload). */
const POLL_MS = 3000;

const RANGES: Array<{ value: string; label: string; seconds: number | null; bucket: number }> = [
  { value: '1h', label: 'Last hour', seconds: 3600, bucket: 60 },
  { value: '24h', label: 'Last 24 hours', seconds: 86400, bucket: 3600 },
  { value: '7d', label: 'Last 7 days', seconds: 7 * 86400, bucket: 6 * 3600 },
  { value: 'all', label: 'All time', seconds: null, bucket: 86400 },
  { value: 'custom', label: 'Custom…', seconds: null, bucket: 3600 },
];

interface Filters {
  project_id: string;
  decision: string;
  detector: string;
  session_id: string;
  range: string;
  since: string;
  until: string;
}

const EMPTY: Filters = { project_id: '', decision: '', detector: '', session_id: '', range: '24h', since: '', until: '' };

function variablesOf(f: Filters, now: number): Json {
  const range = RANGES.find((r) => r.value === f.range)!;
  const v: Json = {};
  if (f.project_id) v.project_id = f.project_id;
  if (f.decision) v.decision = f.decision;
  if (f.detector) v.detector = f.detector;
  if (f.session_id.trim()) v.session_id = f.session_id.trim();
  if (range.seconds) v.since = new Date(now - range.seconds * 1000).toISOString();
  if (f.range === 'custom') {
    if (f.since) v.since = localToIso(f.since);
    if (f.until) v.until = localToIso(f.until);
  }
  return v;
}

export function EventsPage() {
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [offset, setOffset] = useState(0);
  const [selected, setSelected] = useState<string | null>(null);
  const [live, setLive] = useState(true);
  // A relative range is anchored when the filters change (polling then shows what arrives after it).
  const [anchor, setAnchor] = useState(() => Date.now());
  const lookups = useQuery(LOOKUPS_Q, {});
  const vars = useMemo(() => variablesOf(filters, anchor), [filters, anchor]);
  const bucket = RANGES.find((r) => r.value === filters.range)!.bucket;
  const events = useQuery(EVENTS_Q, { ...vars, limit: PAGE, offset }, live ? POLL_MS : undefined);
  const stats = useQuery(STATS_Q, { ...vars, bucket_seconds: bucket }, live ? POLL_MS : undefined);
  const projects = new Map<string, string>((lookups.data?.projects.results ?? []).map((p: Json) => [p.id, p.name]));
  const set = (patch: Partial<Filters>) => {
    setFilters({ ...filters, ...patch });
    setOffset(0);
    setAnchor(Date.now());
  };
  // The registry's types, the deny list, and whatever else fired (custom/<name>, allow_list).
  const detectorOptions = [
    ...new Set<string>([
      'deny_list',
      ...(lookups.data?.detector_types ?? []).map((d: Json) => d.value as string),
      ...(stats.data?.event_stats.top_detectors ?? []).map((t: Json) => t.type as string),
      ...(filters.detector ? [filters.detector] : []),
    ]),
  ];
  const rows: Json[] = events.data?.events.results ?? [];
  const count: number = events.data?.events.count ?? 0;
  const detail = rows.find((e) => e.id === selected) ?? null;

  return (
    <>
      <Section
        title="Security events"
        actions={
          <label class="inline">
            <input type="checkbox" checked={live} onChange={(e) => setLive((e.currentTarget as HTMLInputElement).checked)} /> Live (every {POLL_MS / 1000} s)
          </label>
        }
      >
        <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Event filters">
          <label>
            Project
            <select name="project" value={filters.project_id} onChange={(e) => set({ project_id: e.currentTarget.value })}>
              <option value="">All projects</option>
              {[...projects].map(([id, name]) => (
                <option key={id} value={id}>
                  {name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Decision
            <select name="decision" value={filters.decision} onChange={(e) => set({ decision: e.currentTarget.value })}>
              <option value="">Any</option>
              <option value="blocked">Blocked</option>
              <option value="flagged">Flagged</option>
              <option value="allowed">Allowed</option>
            </select>
          </label>
          <label>
            Detector
            <select name="detector" value={filters.detector} onChange={(e) => set({ detector: e.currentTarget.value })}>
              <option value="">Any</option>
              {detectorOptions.map((d) => (
                <option key={d} value={d}>
                  {d}
                </option>
              ))}
            </select>
          </label>
          <label>
            Agent session
            <input name="session" value={filters.session_id} placeholder="X-Agent-Session-Id" onChange={(e) => set({ session_id: e.currentTarget.value })} />
          </label>
          <label>
            Time range
            <select name="range" value={filters.range} onChange={(e) => set({ range: e.currentTarget.value })}>
              {RANGES.map((r) => (
                <option key={r.value} value={r.value}>
                  {r.label}
                </option>
              ))}
            </select>
          </label>
          {filters.range === 'custom' && (
            <>
              <label>
                From
                <input type="datetime-local" name="since" value={filters.since} onChange={(e) => set({ since: e.currentTarget.value })} />
              </label>
              <label>
                To
                <input type="datetime-local" name="until" value={filters.until} onChange={(e) => set({ until: e.currentTarget.value })} />
              </label>
            </>
          )}
        </form>
        <ErrorBanner error={events.error ?? stats.error} />
        {stats.data && (
          <div class="charts">
            <DecisionChart stats={stats.data.event_stats} since={vars.since} until={vars.until} />
            <TopDetectors stats={stats.data.event_stats} />
          </div>
        )}
      </Section>
      <div class="split">
        <Section title={`Events (${count})`}>
          <table class="events">
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Project</th>
                <th scope="col">Decision</th>
                <th scope="col">Detectors</th>
                <th scope="col">Direction</th>
                <th scope="col">Model</th>
                <th scope="col" class="num">Latency</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => (
                <tr
                  key={e.id}
                  data-testid="event-row"
                  tabIndex={0}
                  aria-selected={e.id === selected}
                  class={e.id === selected ? 'selected' : undefined}
                  onClick={() => setSelected(e.id)}
                  onKeyDown={(k) => {
                    if (k.key === 'Enter' || k.key === ' ') {
                      k.preventDefault();
                      setSelected(e.id);
                    }
                  }}
                >
                  <td>{formatTime(e.created_at)}</td>
                  <td>{e.project_id ? (projects.get(e.project_id) ?? e.project_id.slice(0, 8)) : '—'}</td>
                  <td>
                    <DecisionBadge decision={e.decision} />
                  </td>
                  <td>{e.findings.map((f: Json) => f.type).join(', ') || '—'}</td>
                  <td>{directionsOf(e)}</td>
                  <td>{e.model ?? '—'}</td>
                  <td class="num">{formatMs(e.latency_ms)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {rows.length === 0 && !events.loading && <p class="muted">No events match these filters.</p>}
          <div class="pager">
            <button disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
              Newer
            </button>
            <span>
              {count === 0 ? 0 : offset + 1}–{Math.min(offset + PAGE, count)} of {count}
            </span>
            <button disabled={offset + PAGE >= count} onClick={() => setOffset(offset + PAGE)}>
              Older
            </button>
          </div>
        </Section>
        <EventDetail event={detail} projectName={detail?.project_id ? projects.get(detail.project_id) : undefined} />
      </div>
    </>
  );
}

function EventDetail({ event, projectName }: { event: Json | null; projectName?: string }) {
  if (!event) {
    return (
      <Section title="Event detail">
        <p class="muted">Select an event (click, or Enter on a focused row) to see what fired.</p>
      </Section>
    );
  }
  return (
    <section class="card detail" data-testid="event-detail" aria-live="polite">
      <h2>
        Event detail <DecisionBadge decision={event.decision} />
      </h2>
      <dl>
        <dt>Time</dt>
        <dd>{new Date(event.created_at).toISOString()}</dd>
        <dt>Request id</dt>
        <dd data-testid="detail-request-id">{event.request_id ?? '—'}</dd>
        <dt>Project</dt>
        <dd>{projectName ?? event.project_id ?? '— (failed authentication)'}</dd>
        <dt>Path</dt>
        <dd>{event.path}</dd>
        <dt>Agent session</dt>
        <dd>{event.session_id ?? '—'}</dd>
        <dt>Model</dt>
        <dd>{event.model ?? '—'}</dd>
        <dt>Status</dt>
        <dd>{event.response_status}</dd>
        <dt>Upstream</dt>
        <dd>
          {event.provider ?? '—'}
          {event.upstream_attempts.length > 1 && ` (${event.upstream_attempts.length} attempts: ${event.upstream_attempts.map((a: Json) => `${a.provider} ${a.status ?? a.error}`).join(', ')})`}
        </dd>
        <dt>Latency</dt>
        <dd>{formatMs(event.latency_ms)}</dd>
        <dt>Limits</dt>
        <dd data-testid="detail-limits">
          {limitsState(event)}; input tokens {event.input_tokens ?? '—'}
        </dd>
        {event.fail_reason && (
          <>
            <dt>Failed closed</dt>
            <dd>{event.fail_reason}</dd>
          </>
        )}
        {event.unscanned_content.length > 0 && (
          <>
            <dt>Not scanned</dt>
            <dd>{event.unscanned_content.join(', ')}</dd>
          </>
        )}
      </dl>
      <h3>What fired</h3>
      {event.findings.length === 0 ? (
        <p class="muted">No detector fired. Events never hold the content, only where a detector matched.</p>
      ) : (
        <table class="matches">
          <thead>
            <tr>
              <th scope="col">Detector</th>
              <th scope="col">Action</th>
              <th scope="col">Path</th>
              <th scope="col">Span</th>
              <th scope="col">Signal</th>
              <th scope="col" class="num">Score</th>
            </tr>
          </thead>
          <tbody>
            {event.findings.flatMap((f: Json) =>
              (f.matches.length ? f.matches : [null]).map((m: Json | null, i: number) => (
                <tr key={`${f.type}-${i}`} data-testid="detail-match">
                  <td>{f.type}</td>
                  <td>{f.action}</td>
                  <td>{m?.path ?? '—'}</td>
                  <td>{m ? `${m.start}–${m.end}` : '—'}</td>
                  <td>{m?.signal ?? '—'}</td>
                  <td class="num">{(m?.score ?? f.confidence).toFixed(2)}</td>
                </tr>
              )),
            )}
          </tbody>
        </table>
      )}
    </section>
  );
}
