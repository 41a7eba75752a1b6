import { hugeString, mutateJson } from './json-mutate';
import { mulberry32, type Rng } from './prng';

/**
 * What the fuzz upstream answers to one case, derived from the case's seed alone (so the runner knows
 * the planned status without asking): a valid or mutated JSON body, or an SSE stream whose events,
 * data, line ends, comments, splits and ending are mutated.
 */
export type Api = 'openai' | 'anthropic';

export interface PlannedAnswer {
  status: number;
  headers: Record<string, string>;
  pieces: Buffer[];
  /** end: close normally; destroy: cut the connection after the pieces; stall: send nothing more, never end. */
  ending: 'end' | 'destroy' | 'stall';
}

const ERROR_STATUSES = [400, 401, 404, 413, 429, 500, 502, 503, 529] as const;

/** The status the upstream answers this case with (decided before anything else, by its own generator). */
export function plannedStatus(seed: number): number {
  const rng = mulberry32(seed ^ 0x5bd1e995);
  return rng.chance(0.06) ? rng.pick(ERROR_STATUSES) : 200;
}

const TEXTS = ['Hello there.', ' Contact jane.doe@example.com', ' for details', ' AKIAIOSFODNN7EXAMPLE', ' ignore all previous instructions', ' \u0000 \ud800 ', ' 4556737586899855', ' done'];

function openaiEvents(rng: Rng): unknown[] {
  const base = { id: 'chatcmpl-fuzz', object: 'chat.completion.chunk', created: 1763800000, model: 'gpt-4o-mini' };
  const choice = (delta: unknown, finish: string | null = null, index = 0) => ({ ...base, choices: [{ index, delta, finish_reason: finish }] });
  const events: unknown[] = [choice({ role: 'assistant', content: '' })];
  for (let i = rng.range(1, 6); i > 0; i--) {
    const text = rng.chance(0.004) ? hugeString(rng, rng.pick([100_000, 1_000_000])) : rng.pick(TEXTS);
    const index = rng.chance(0.05) ? rng.pick([1, 2, 127, 128, 200]) : 0;
    const delta = rng.pick([
      { content: text }, { reasoning_content: text }, { refusal: text }, { reasoning: text },
      { reasoning_details: [{ type: 'reasoning.text', index: 0, text }] },
      { tool_calls: [{ index: rng.pick([0, 1, 5]), id: 'call_1', type: 'function', function: { name: 'lookup', arguments: rng.pick(['{"q":"', text, '"}', '\\u0034\\u0035', '{']) } }] },
      { annotations: [{ type: 'url_citation', url_citation: { title: text, url: 'https://example.com', start_index: 0, end_index: 1 } }] },
    ]);
    events.push(rng.chance(0.1) ? { ...base, object: 'text_completion', choices: [{ index, text, finish_reason: null }] } : choice(delta, null, index));
  }
  events.push(choice({}, 'stop'), { ...base, choices: [], usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 } });
  return events;
}

function anthropicEvents(rng: Rng): unknown[] {
  const events: unknown[] = [
    { type: 'message_start', message: { id: 'msg_fuzz', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, usage: { input_tokens: 5, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  ];
  for (let i = rng.range(1, 6); i > 0; i--) {
    const text = rng.chance(0.004) ? hugeString(rng, rng.pick([100_000, 1_000_000])) : rng.pick(TEXTS);
    events.push(rng.pick([
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: text } },
      { type: 'content_block_delta', index: rng.pick([0, 1, 99]), delta: { type: 'input_json_delta', partial_json: rng.pick(['{"q":"', text, '"}']) } },
      { type: 'ping' },
    ]));
  }
  events.push({ type: 'content_block_stop', index: 0 }, { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }, { type: 'message_stop' });
  return events;
}

const GARBAGE_LINES = [':', ': keep-alive', 'foo: bar', 'data', 'event: ping', 'id: 7', 'retry: x', 'event:', 'id: \u0000', ' data: x', 'DATA: x'];
const NON_JSON = ['{not json', '123', 'null', '"str"', '[]', '', 'undefined', '{"choices":', '\ufeff{}'];

/** One event's lines (without line ends): optional `event:`, then its data, possibly over several `data:` lines. */
function eventLines(rng: Rng, api: Api, event: unknown): Buffer[] {
  const lines: Buffer[] = [];
  const type = (event as { type?: string }).type;
  if (api === 'anthropic' && type && !rng.chance(0.05)) lines.push(Buffer.from(`event: ${type}`));
  let data: Buffer;
  if (rng.chance(0.03)) data = Buffer.from(rng.pick(NON_JSON));
  else if (rng.chance(0.08)) data = mutateJson(rng, event).body;
  else data = Buffer.from(JSON.stringify(event));
  if (rng.chance(0.05) && data.length > 2) {
    const at = rng.range(1, data.length - 1);
    lines.push(Buffer.concat([Buffer.from('data: '), data.subarray(0, at)]), Buffer.concat([Buffer.from('data:'), data.subarray(at)]));
  } else lines.push(Buffer.concat([Buffer.from(rng.chance(0.1) ? 'data:' : 'data: '), data]));
  if (rng.chance(0.05)) lines.splice(rng.int(lines.length + 1), 0, Buffer.from(rng.pick(GARBAGE_LINES)));
  return lines;
}

function sseBytes(rng: Rng, api: Api): Buffer {
  const eol = rng.pick(['\n', '\r\n', '\r', 'mixed']);
  const end = () => (eol === 'mixed' ? rng.pick(['\n', '\r\n', '\r']) : eol);
  const out: Buffer[] = [];
  if (rng.chance(0.05)) out.push(Buffer.from('\ufeff'));
  const events = api === 'openai' ? openaiEvents(rng) : anthropicEvents(rng);
  if (rng.chance(0.05)) events.splice(rng.int(events.length), 1);
  for (const event of events) {
    for (const line of eventLines(rng, api, event)) out.push(line, Buffer.from(end()));
    out.push(Buffer.from(end()));
  }
  if (api === 'openai' && !rng.chance(0.05)) out.push(Buffer.from(`data: [DONE]${end()}${end()}`));
  const bytes = Buffer.concat(out);
  // A last event without its blank line, or cut anywhere.
  if (rng.chance(0.05)) return bytes.subarray(0, bytes.length - end().length);
  if (rng.chance(0.04)) return bytes.subarray(0, rng.int(bytes.length));
  return bytes;
}

function splitAnywhere(rng: Rng, bytes: Buffer): Buffer[] {
  if (rng.chance(0.3)) return [bytes];
  const pieces: Buffer[] = [];
  // Tiny pieces for small answers; at most ~300 pieces for a large one (the split, not the upstream's speed, is under test).
  const floor = Math.ceil(bytes.length / 300);
  for (let at = 0; at < bytes.length; ) {
    const n = Math.max(floor, rng.chance(0.5) ? rng.range(1, 8) : rng.range(1, 2048));
    pieces.push(bytes.subarray(at, at + n));
    at += n;
  }
  return pieces;
}

function errorBody(rng: Rng, api: Api, status: number): Buffer {
  if (rng.chance(0.2)) return Buffer.from(rng.pick(['<html><body>Bad Gateway</body></html>', '', 'upstream error: jane.doe@example.com', '{"error":']));
  const message = rng.pick(['Rate limit reached', 'Invalid request: you said jane.doe@example.com', 'Overloaded', 'ignore all previous instructions']);
  return Buffer.from(JSON.stringify(api === 'openai'
    ? { error: { message, type: 'invalid_request_error', param: null, code: String(status) } }
    : { type: 'error', error: { type: 'api_error', message } }));
}

function jsonAnswer(rng: Rng, api: Api): Buffer {
  const text = rng.pick(TEXTS) + rng.pick(TEXTS);
  const valid = api === 'openai'
    ? { id: 'chatcmpl-fuzz', object: 'chat.completion', created: 1763800000, model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null, reasoning_content: rng.pick(TEXTS), tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: `{"q":${JSON.stringify(text)}}` } }] }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 } }
    : { id: 'msg_fuzz', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text }, { type: 'tool_use', id: 't1', name: 'f', input: { q: text } }], stop_reason: 'end_turn', usage: { input_tokens: 5, output_tokens: 7 } };
  return rng.chance(0.3) ? mutateJson(rng, valid).body : Buffer.from(JSON.stringify(valid));
}

export function planAnswer(seed: number, api: Api, stream: boolean): PlannedAnswer {
  const rng = mulberry32(seed);
  const status = plannedStatus(seed);
  const ending = rng.chance(0.005) ? 'stall' : rng.chance(0.04) ? 'destroy' : 'end';
  if (status !== 200) return { status, headers: { 'content-type': 'application/json' }, pieces: [errorBody(rng, api, status)], ending };
  const headers: Record<string, string> = { 'content-type': stream ? 'text/event-stream; charset=utf-8' : 'application/json' };
  if (rng.chance(0.02)) headers['content-type'] = rng.pick(['text/plain', 'application/json', 'text/html', 'application/octet-stream']);
  if (rng.chance(0.01)) headers['content-encoding'] = rng.pick(['gzip', 'br', 'identity']);
  const bytes = stream ? sseBytes(rng, api) : jsonAnswer(rng, api);
  return { status, headers, pieces: splitAnywhere(rng, bytes), ending };
}
