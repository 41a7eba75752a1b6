import type { Json } from './api';

/**
 * The API returns only buckets with events; over a known range every bucket gets a bar (empty ones too),
 * so time reads left to right at an even pace.
 */
function filled(buckets: Json[], bucketSeconds: number, since?: string, until?: string): Json[] {
  if (!since) return buckets;
  const step = bucketSeconds * 1000;
  const first = Math.floor(Date.parse(since) / step) * step;
  const last = Math.floor((until ? Date.parse(until) - 1 : Date.now()) / step) * step;
  if (!(last >= first) || (last - first) / step > 500) return buckets;
  const byStart = new Map(buckets.map((b) => [Date.parse(b.start), b]));
  const out: Json[] = [];
  for (let t = first; t <= last; t += step) out.push(byStart.get(t) ?? { start: new Date(t).toISOString(), total: 0, blocked: 0, flagged: 0, allowed: 0 });
  return out;
}

/** Blocked, flagged and allowed events per time bucket: stacked bars in inline SVG (no chart library). */
export function DecisionChart({ stats, since, until }: { stats: Json; since?: string; until?: string }) {
  const buckets = filled(stats.buckets ?? [], stats.bucket_seconds, since, until);
  const W = 560;
  const H = 140;
  const pad = { l: 32, r: 8, t: 8, b: 22 };
  const max = Math.max(1, ...buckets.map((b) => b.total));
  const bw = buckets.length ? (W - pad.l - pad.r) / buckets.length : 0;
  const y = (n: number) => ((H - pad.t - pad.b) * n) / max;
  const label = (iso: string) => new Date(iso).toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hour12: false });
  const summary = `${stats.totals.blocked} blocked, ${stats.totals.flagged} flagged, ${stats.totals.allowed} allowed in ${buckets.length} buckets of ${stats.bucket_seconds / 60} minutes`;
  return (
    <figure class="chart" data-testid="decision-chart">
      <figcaption>Blocked vs allowed over time</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={summary} width="100%">
        <line x1={pad.l} x2={W - pad.r} y1={H - pad.b} y2={H - pad.b} class="axis" />
        <text x={pad.l - 4} y={pad.t + 8} class="tick" text-anchor="end">
          {max}
        </text>
        <text x={pad.l - 4} y={H - pad.b} class="tick" text-anchor="end">
          0
        </text>
        {buckets.map((b, i) => {
          const x = pad.l + i * bw + 1;
          const w = Math.max(1, bw - 2);
          let base = H - pad.b;
          return (
            <g key={b.start}>
              <title>{`${new Date(b.start).toLocaleString()}: ${b.blocked} blocked, ${b.flagged} flagged, ${b.allowed} allowed`}</title>
              {(['allowed', 'flagged', 'blocked'] as const).map((k) => {
                const h = y(b[k]);
                base -= h;
                return h > 0 ? <rect key={k} x={x} y={base} width={w} height={h} class={`bar ${k}`} /> : null;
              })}
            </g>
          );
        })}
        {buckets.length > 0 && (
          <>
            <text x={pad.l} y={H - 6} class="tick">
              {label(buckets[0]!.start)}
            </text>
            <text x={W - pad.r} y={H - 6} class="tick" text-anchor="end">
              {label(buckets[buckets.length - 1]!.start)}
            </text>
          </>
        )}
      </svg>
      <p class="legend">
        <span class="key blocked" /> blocked {stats.totals.blocked} <span class="key flagged" /> flagged {stats.totals.flagged} <span class="key allowed" /> allowed{' '}
        {stats.totals.allowed}
      </p>
    </figure>
  );
}

/** The detectors that fired most: horizontal bars, the blocked share darker. */
export function TopDetectors({ stats }: { stats: Json }) {
  const top: Json[] = stats.top_detectors ?? [];
  const max = Math.max(1, ...top.map((t) => t.count));
  return (
    <figure class="chart" data-testid="top-detectors">
      <figcaption>Top detectors</figcaption>
      {top.length === 0 ? (
        <p class="muted">Nothing fired in this range.</p>
      ) : (
        <ul class="hbars">
          {top.map((t) => (
            <li key={t.type}>
              <span class="hbar-label">{t.type}</span>
              <svg viewBox="0 0 100 10" preserveAspectRatio="none" class="hbar" aria-hidden="true">
                <rect x="0" y="0" width={(100 * t.count) / max} height="10" class="bar flagged" />
                <rect x="0" y="0" width={(100 * t.blocked) / max} height="10" class="bar blocked" />
              </svg>
              <span class="hbar-value">
                {t.count} ({t.blocked} blocked)
              </span>
            </li>
          ))}
        </ul>
      )}
    </figure>
  );
}
