import { useState } from 'preact/hooks';
import type { Json } from '../api';
import { DecisionBadge, ErrorBanner, Section } from '../components';
import { formatMs, formatTime } from '../format';
import { useQuery } from '../hooks';

const SESSIONS_Q = `query Sessions($offset: Int) { sessions(limit: 50, offset: $offset) { count results { session_id count blocked_count first_seen last_seen models } } }`;
const TIMELINE_Q = `query Timeline($session_id: String!) { events(session_id: $session_id, limit: 100) { count results {
  id created_at path model decision latency_ms response_status request_id findings { type action } } } }`;

const POLL_MS = 5000;

/** Agent sessions: events grouped by X-Agent-Session-Id, and one session's events as a timeline. */
export function SessionsPage() {
  const [offset, setOffset] = useState(0);
  const [selected, setSelected] = useState<string | null>(null);
  const q = useQuery(SESSIONS_Q, { offset }, POLL_MS);
  const list: Json[] = q.data?.sessions.results ?? [];
  const count: number = q.data?.sessions.count ?? 0;
  return (
    <div class="split">
      <Section title={`Agent sessions (${count})`}>
        <table>
          <thead>
            <tr>
              <th scope="col">Session</th>
              <th scope="col" class="num">Events</th>
              <th scope="col" class="num">Blocked</th>
              <th scope="col">First</th>
              <th scope="col">Last</th>
              <th scope="col">Models</th>
            </tr>
          </thead>
          <tbody>
            {list.map((s) => (
              <tr key={s.session_id} data-testid="session-row" class={s.session_id === selected ? 'selected' : undefined}>
                <td>
                  <button class="link" onClick={() => setSelected(s.session_id)} aria-pressed={s.session_id === selected}>
                    {s.session_id}
                  </button>
                </td>
                <td class="num">{s.count}</td>
                <td class="num">{s.blocked_count}</td>
                <td>{formatTime(s.first_seen)}</td>
                <td>{formatTime(s.last_seen)}</td>
                <td>{s.models.join(', ') || '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {list.length === 0 && !q.loading && <p class="muted">No events carried an X-Agent-Session-Id header yet.</p>}
        <div class="pager">
          <button disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - 50))}>
            Newer
          </button>
          <button disabled={offset + 50 >= count} onClick={() => setOffset(offset + 50)}>
            Older
          </button>
        </div>
        <ErrorBanner error={q.error} />
      </Section>
      {selected ? <Timeline sessionId={selected} /> : <Section title="Timeline"><p class="muted">Choose a session to see its events in order.</p></Section>}
    </div>
  );
}

function Timeline({ sessionId }: { sessionId: string }) {
  const q = useQuery(TIMELINE_Q, { session_id: sessionId }, POLL_MS);
  // Oldest first: a session reads as a story.
  const events: Json[] = [...(q.data?.events.results ?? [])].reverse();
  return (
    <section class="card" data-testid="session-timeline">
      <h2>Session {sessionId}</h2>
      <ol class="timeline">
        {events.map((e) => (
          <li key={e.id} class={e.decision}>
            <time dateTime={e.created_at}>{formatTime(e.created_at)}</time> <DecisionBadge decision={e.decision} /> {e.path} {e.model ? `· ${e.model}` : ''} · {e.response_status} ·{' '}
            {formatMs(e.latency_ms)}
            {e.findings.length > 0 && <div class="muted">fired: {e.findings.map((f: Json) => `${f.type} (${f.action})`).join(', ')}</div>}
          </li>
        ))}
      </ol>
      <ErrorBanner error={q.error} />
    </section>
  );
}
