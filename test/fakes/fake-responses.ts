import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake OpenAI Responses upstream speaking the real wire format: POST /v1/responses answers a
 * `response` object, or with `stream: true` the `response.*` SSE events the API sends (created,
 * in_progress, output_item.added, content_part.added, output_text.delta ..., output_text.done,
 * content_part.done, output_item.done, completed), every event named (`event:`) and numbered
 * (`sequence_number`). Reasoning summaries and function calls are streamed the same way. Every
 * response is stored: GET /v1/responses/{id} and /input_items read it back, DELETE removes it.
 */
export interface ResponsesScript {
  /** The answer's text, as stream deltas (joined in a JSON answer); [] for no message item. */
  text: string[];
  /** A reasoning item first, its summary streamed in these deltas. */
  reasoning?: string[];
  /** A function call after the message, its arguments streamed in these deltas. */
  call?: { name: string; args: string[] };
  /** Rewrites the stream's events before they are sent (a smuggling upstream). */
  mutate?: (events: Array<Record<string, any>>) => Array<Record<string, any>>;
}

export interface FakeResponses {
  url: string;
  received: Array<{ method: string; url: string; headers: IncomingHttpHeaders; body: string }>;
  script: ResponsesScript;
  /** Stored responses by id (and the input each was created with). */
  stored: Map<string, { response: Record<string, any>; input: unknown[] }>;
  /** The bytes of the last answer, exactly as sent. */
  lastSent: string;
  close(): Promise<void>;
}

const CREATED_AT = 1_764_300_000;

/** The output items of a finished response (what response.completed and a JSON answer carry). */
function outputItems(script: ResponsesScript): Array<Record<string, any>> {
  const items: Array<Record<string, any>> = [];
  if (script.reasoning) items.push({ id: 'rs_fake1', type: 'reasoning', summary: [{ type: 'summary_text', text: script.reasoning.join('') }] });
  if (script.text.length > 0) {
    items.push({
      id: 'msg_fake1',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: script.text.join(''), annotations: [], logprobs: [] }],
    });
  }
  if (script.call) items.push({ id: 'fc_fake1', type: 'function_call', status: 'completed', call_id: 'call_fake1', name: script.call.name, arguments: script.call.args.join('') });
  return items;
}

function responseObject(id: string, body: Record<string, any>, status: string, output: unknown[]): Record<string, any> {
  const done = status === 'completed';
  return {
    id,
    object: 'response',
    created_at: CREATED_AT,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: body.model ?? 'gpt-4.1-mini',
    output,
    parallel_tool_calls: true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    store: true,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: body.tools ?? [],
    top_p: 1,
    truncation: 'disabled',
    usage: done ? { input_tokens: 12, input_tokens_details: { cached_tokens: 0 }, output_tokens: 9, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 21 } : null,
    user: null,
    metadata: {},
  };
}

/** The events of a streamed response, in the API's order. */
function streamEvents(id: string, body: Record<string, any>, script: ResponsesScript): Array<Record<string, any>> {
  const events: Array<Record<string, any>> = [];
  const push = (e: Record<string, any>) => events.push(e);
  push({ type: 'response.created', response: responseObject(id, body, 'in_progress', []) });
  push({ type: 'response.in_progress', response: responseObject(id, body, 'in_progress', []) });
  const items = outputItems(script);
  items.forEach((item, output_index) => {
    const item_id = item.id;
    if (item.type === 'reasoning') {
      push({ type: 'response.output_item.added', output_index, item: { id: item_id, type: 'reasoning', summary: [] } });
      push({ type: 'response.reasoning_summary_part.added', item_id, output_index, summary_index: 0, part: { type: 'summary_text', text: '' } });
      for (const delta of script.reasoning!) push({ type: 'response.reasoning_summary_text.delta', item_id, output_index, summary_index: 0, delta });
      const text = item.summary[0].text;
      push({ type: 'response.reasoning_summary_text.done', item_id, output_index, summary_index: 0, text });
      push({ type: 'response.reasoning_summary_part.done', item_id, output_index, summary_index: 0, part: { type: 'summary_text', text } });
    } else if (item.type === 'message') {
      push({ type: 'response.output_item.added', output_index, item: { id: item_id, type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
      push({ type: 'response.content_part.added', item_id, output_index, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } });
      for (const delta of script.text) push({ type: 'response.output_text.delta', item_id, output_index, content_index: 0, delta, logprobs: [] });
      const text = item.content[0].text;
      push({ type: 'response.output_text.done', item_id, output_index, content_index: 0, text, logprobs: [] });
      push({ type: 'response.content_part.done', item_id, output_index, content_index: 0, part: { type: 'output_text', text, annotations: [], logprobs: [] } });
    } else {
      push({ type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      for (const delta of script.call!.args) push({ type: 'response.function_call_arguments.delta', item_id, output_index, delta });
      push({ type: 'response.function_call_arguments.done', item_id, output_index, arguments: item.arguments });
    }
    push({ type: 'response.output_item.done', output_index, item });
  });
  push({ type: 'response.completed', response: responseObject(id, body, 'completed', items) });
  return events;
}

export async function startFakeResponses(): Promise<FakeResponses> {
  const fake = { received: [], script: { text: ['Hello', ' from', ' Responses.'] }, stored: new Map(), lastSent: '' } as unknown as FakeResponses;
  let next = 1;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      fake.received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: raw });
      const path = (req.url ?? '').split('?')[0]!;
      const json = (status: number, value: unknown) => {
        fake.lastSent = JSON.stringify(value);
        res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req_fake_responses' });
        res.end(fake.lastSent);
      };
      const match = /^\/v1\/responses\/([^/]+)(\/input_items)?$/.exec(path);
      if (match) {
        const found = fake.stored.get(decodeURIComponent(match[1]!));
        if (!found) return json(404, { error: { message: `Response with id '${match[1]}' not found.`, type: 'invalid_request_error', param: null, code: null } });
        if (req.method === 'DELETE') {
          fake.stored.delete(found.response.id);
          return json(200, { id: found.response.id, object: 'response', deleted: true });
        }
        if (match[2]) return json(200, { object: 'list', data: found.input, first_id: 'msg_in1', last_id: 'msg_in1', has_more: false });
        return json(200, found.response);
      }
      if (req.method !== 'POST' || path !== '/v1/responses') return json(404, { error: { message: 'not found', type: 'invalid_request_error', code: null } });
      const body = JSON.parse(raw) as Record<string, any>;
      const id = `resp_fake${next++}`;
      const input = typeof body.input === 'string' ? [{ id: 'msg_in1', type: 'message', role: 'user', content: [{ type: 'input_text', text: body.input }] }] : (body.input ?? []);
      const response = responseObject(id, body, 'completed', outputItems(fake.script));
      fake.stored.set(id, { response, input });
      if (body.stream !== true) return json(200, response);
      let events: Array<Record<string, any>> = streamEvents(id, body, fake.script).map((e, i) => ({ ...e, sequence_number: i }));
      if (fake.script.mutate) events = fake.script.mutate(events);
      fake.lastSent = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
      res.end(fake.lastSent);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return fake;
}
