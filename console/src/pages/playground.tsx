import { useState } from 'preact/hooks';
import { ApiError, gql, type Json } from '../api';
import { DecisionBadge, ErrorBanner, Section } from '../components';
import { useQuery } from '../hooks';

const POLICIES_Q = '{ policies(limit: 100) { results { id name is_default } } }';
const DETECT_Q = `query Detect($policy_id: ID!, $content: String!, $direction: Direction) {
  detect(policy_id: $policy_id, content: $content, direction: $direction) {
    blocked unscanned categories { type confidence action matches { start end signal score } } } }`;

interface Span {
  start: number;
  end: number;
  type: string;
  action: string;
  signal: string;
  score: number;
}

/** Cuts the text at every span boundary: each piece with the spans that cover it (overlaps shown as one mark). */
function segments(text: string, spans: Span[]): Array<{ text: string; covering: Span[] }> {
  const cuts = new Set([0, text.length]);
  for (const s of spans) {
    cuts.add(Math.max(0, Math.min(text.length, s.start)));
    cuts.add(Math.max(0, Math.min(text.length, s.end)));
  }
  const points = [...cuts].sort((a, b) => a - b);
  const out: Array<{ text: string; covering: Span[] }> = [];
  for (let i = 0; i < points.length - 1; i++) {
    const [a, b] = [points[i]!, points[i + 1]!];
    out.push({ text: text.slice(a, b), covering: spans.filter((s) => s.start <= a && s.end >= b) });
  }
  return out;
}

export function PlaygroundPage() {
  const policies = useQuery(POLICIES_Q, {});
  const [policyId, setPolicyId] = useState('');
  const [direction, setDirection] = useState('input');
  const [text, setText] = useState('');
  const [result, setResult] = useState<{ text: string; verdict: Json } | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const list: Json[] = policies.data?.policies.results ?? [];
  const chosen = policyId || list.find((p) => p.is_default)?.id || '';

  const run = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const d = await gql(DETECT_Q, { policy_id: chosen, content: text, direction });
      setResult({ text, verdict: d.detect });
    } catch (err) {
      setError(err as ApiError);
      setResult(null);
    } finally {
      setBusy(false);
    }
  };

  const verdict: Json = result?.verdict ?? {};
  const spans: Span[] = (verdict.categories ?? []).flatMap((c: Json) => c.matches.map((m: Json) => ({ ...m, type: c.type, action: c.action })));
  const decision = result ? (verdict.blocked ? 'blocked' : verdict.categories.length ? 'flagged' : 'allowed') : null;

  return (
    <div class="split">
      <Section title="Playground: would this pass my policy?">
        <form onSubmit={run} class="stack">
          <div class="row">
            <label>
              Policy
              <select name="policy" value={chosen} onChange={(e) => setPolicyId(e.currentTarget.value)}>
                {list.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name}
                    {p.is_default ? ' (default)' : ''}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Direction
              <select name="direction" value={direction} onChange={(e) => setDirection(e.currentTarget.value)}>
                <option value="input">input (prompt to the model)</option>
                <option value="output">output (model answer)</option>
              </select>
            </label>
          </div>
          <label for="playground-input">Text to scan (nothing is stored: no event is recorded)</label>
          <textarea id="playground-input" data-testid="playground-input" rows={8} value={text} onInput={(e) => setText(e.currentTarget.value)} />
          <button type="submit" data-testid="playground-run" disabled={busy || !chosen}>
            {busy ? 'Scanning…' : 'Run detection'}
          </button>
        </form>
        <ErrorBanner error={error ?? policies.error} />
      </Section>
      <section class="card" data-testid="playground-result" aria-live="polite">
        <h2>Result {decision && <DecisionBadge decision={decision} />}</h2>
        {!result && <p class="muted">Run a detection to see which spans fire and why.</p>}
        {result && (
          <>
            <p>
              {verdict.blocked ? 'Blocked: at least one detector with the block action fired.' : decision === 'flagged' ? 'Allowed, but flagged: detectors fired with a log or alert action.' : 'Allowed: nothing fired.'}
            </p>
            <pre class="highlighted" aria-label="The text with the spans that fired highlighted">
              {segments(result.text, spans).map((s, i) =>
                s.covering.length ? (
                  <mark key={i} class={s.covering.some((c) => c.action === 'block') ? 'block' : 'log'} title={s.covering.map((c) => `${c.type} (${c.signal}, ${c.score.toFixed(2)})`).join('; ')}>
                    {s.text}
                  </mark>
                ) : (
                  s.text
                ),
              )}
            </pre>
            {verdict.categories.length > 0 && (
              <table class="matches">
                <thead>
                  <tr>
                    <th scope="col">Detector</th>
                    <th scope="col">Action</th>
                    <th scope="col">Span</th>
                    <th scope="col">Matched text</th>
                    <th scope="col">Why (signal)</th>
                    <th scope="col" class="num">Score</th>
                  </tr>
                </thead>
                <tbody>
                  {spans.map((s, i) => (
                    <tr key={i} data-testid="playground-span">
                      <td>{s.type}</td>
                      <td>{s.action}</td>
                      <td>
                        {s.start}–{s.end}
                      </td>
                      <td>
                        <code>{result.text.slice(s.start, s.end)}</code>
                      </td>
                      <td>{s.signal}</td>
                      <td class="num">{s.score.toFixed(2)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            {verdict.unscanned.length > 0 && <p class="muted">Not scanned (detector unavailable): {verdict.unscanned.join(', ')}</p>}
          </>
        )}
      </section>
    </div>
  );
}
