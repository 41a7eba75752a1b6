import type { Json } from './api';

export type Decision = 'blocked' | 'flagged' | 'allowed';

export const formatTime = (iso: string) => {
  const d = new Date(iso);
  return `${d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })} ${d.toLocaleTimeString(undefined, { hour12: false })}`;
};

export const formatMs = (ms: number) => (ms < 10 ? ms.toFixed(1) : Math.round(ms).toString()) + ' ms';

/**
 * Which way the content that fired travelled, from the JSON paths of the matches: the upstream's answer
 * is `choices[…]` (chat completions) or `content[…]` (messages); everything else is the request.
 */
export function directionsOf(event: Json): string {
  const dirs = new Set<string>();
  for (const f of event.findings ?? []) {
    for (const m of f.matches ?? []) dirs.add(/^(choices\[|content\[)/.test(m.path) ? 'output' : 'input');
  }
  if (dirs.size === 0) return event.findings?.length ? 'input' : '—';
  return [...dirs].sort().join(' + ');
}

/** The limits side of an event: what the status says about rate limits, and the counted tokens. */
export function limitsState(event: Json): string {
  if (event.response_status === 429) return 'rate limited (429: a policy or platform limit was exceeded)';
  if (event.response_status === 400 && (event.findings ?? []).length === 0 && !event.blocked) return 'refused (400: over an input limit, or invalid)';
  return 'within limits';
}

/** `datetime-local` value → ISO 8601 with offset (the API's timestamp format), or undefined. */
export const localToIso = (v: string) => (v ? new Date(v).toISOString() : undefined);
