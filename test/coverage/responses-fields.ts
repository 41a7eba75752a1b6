import { b64DataUrl, DECODED_ONLY, split3 } from './chat-fields';
import { DUPLICATE_KEY } from './payloads';
import type { FieldRow, Json } from './table';

/**
 * The Responses wire (OpenAI, POST /v1/responses): every content field the extractor
 * (src/gateway/proxy/openai-responses.schema.ts) reads, as a row that builds a valid request, response
 * object or stream (the events after response.created) with a text at that field.
 */

export const create = (input: unknown, extra: Json = {}): Json => ({ model: 'gpt-4.1-mini', input, ...extra });
const user = (content: unknown) => ({ role: 'user', content });
const row = (label: string, build: (t: string) => Json, extra: Partial<FieldRow> = {}): FieldRow => ({ label, build, ...extra });
const docRow = (label: string, withArgs: (args: string) => Json): FieldRow => ({ label, build: (t) => withArgs(JSON.stringify({ query: t })), withArgs });
const fnCall = (args: string, name = 'lookup') => ({ type: 'function_call', call_id: 'call_1', name, arguments: args });
const fnOutput = (output: unknown) => ({ type: 'function_call_output', call_id: 'call_1', output });
const fnTool = (fields: Json) => ({ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} }, strict: false, ...fields });
const schemaFormat = (fields: Json) => ({ text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, ...fields } } });

export const RESPONSES_REQUEST: FieldRow[] = [
  row('input (string)', (t) => create(`Tell me about ${t}`)),
  row('input message content (string)', (t) => create([user(`first: ${t}`), { role: 'assistant', content: 'noted' }, user('continue')])),
  row('input_text part (beside an image)', (t) =>
    create([user([{ type: 'input_text', text: 'Look at this' }, { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'auto' }, { type: 'input_text', text: t }])]),
  ),
  row('input_file file_data (a text file, base64 data URL, decoded)', (t) =>
    create([user([{ type: 'input_file', filename: 'notes.txt', file_data: b64DataUrl('text/plain', `Meeting notes: ${t}`) }, { type: 'input_text', text: 'Summarise' }])]),
    { excluded: { [DUPLICATE_KEY]: DECODED_ONLY } },
  ),
  row('input_file filename', (t) => create([user([{ type: 'input_file', filename: t, file_id: 'file-abc123' }, { type: 'input_text', text: 'Summarise' }])])),
  row('an assistant output_text item in input', (t) =>
    create([user('q'), { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `The answer is ${t}`, annotations: [] }] }, user('and?')]),
  ),
  row('an assistant refusal part in input', (t) => create([user('q'), { type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: t }] }, user('why?')])),
  row('instructions', (t) => create('hi', { instructions: `Never mention this: ${t}` })),
  docRow('function_call item arguments', (args) => create([user('run it'), fnCall(args), fnOutput('done')])),
  row('function_call_output output (string)', (t) => create([user('run it'), fnCall('{}'), fnOutput(`output: ${t}`)])),
  row('function_call_output output (parts)', (t) => create([user('run it'), fnCall('{}'), fnOutput([{ type: 'input_text', text: t }])])),
  row('custom_tool_call item input', (t) => create([user('run it'), { type: 'custom_tool_call', call_id: 'call_1', name: 'shell', input: t }])),
  row('reasoning item summary', (t) => create([user('q'), { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: t }] }, user('go')])),
  row('an item type the extractor does not know (every string)', (t) => create([user('q'), { type: 'future_item', id: 'fi_1', payload: { notes: [t] } }])),
  row('tools[].name (function)', (t) => create('hi', { tools: [fnTool({ name: t })] })),
  row('tools[].description (function)', (t) => create('hi', { tools: [fnTool({ description: `Looks up ${t}` })] })),
  row('tools[].parameters (a property description)', (t) => create('hi', { tools: [fnTool({ parameters: { type: 'object', properties: { q: { type: 'string', description: `e.g. ${t}` } } } })] })),
  row('tools[].format (custom tool grammar)', (t) => create('hi', { tools: [{ type: 'custom', name: 'shell', format: { type: 'grammar', syntax: 'lark', definition: `start: "${t}"` } }] })),
  row('tools[].server_label (MCP)', (t) => create('hi', { tools: [{ type: 'mcp', server_label: t, server_url: 'https://mcp.example.com', require_approval: 'never' }] })),
  row('tools[].server_description (MCP)', (t) => create('hi', { tools: [{ type: 'mcp', server_label: 'docs', server_description: `Serves ${t}`, server_url: 'https://mcp.example.com' }] })),
  row('text.format.schema', (t) => create('JSON please', schemaFormat({ schema: { type: 'object', properties: { a: { type: 'string', description: t } } } }))),
  row('text.format.name', (t) => create('JSON please', schemaFormat({ name: t }))),
  row('text.format.description', (t) => create('JSON please', schemaFormat({ description: `About ${t}` }))),
  row('prompt.variables', (t) => create(undefined, { prompt: { id: 'pmpt_1', variables: { topic: t } } })),
];

// ---------------------------------------------------------------------------------------------------
// Response objects: a row builds the upstream's whole JSON answer.

export const responseObject = (output: Json[], extra: Json = {}): Json => ({
  id: 'resp_coverage',
  object: 'response',
  created_at: 1_763_800_000,
  status: 'completed',
  error: null,
  model: 'gpt-4.1-mini',
  output,
  usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
  ...extra,
});
const message = (content: Json[]) => ({ id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content });
const outputText = (text: string, annotations: Json[] = []) => ({ type: 'output_text', text, annotations });
const citation = (fields: Json) => ({ type: 'url_citation', url: 'https://example.com/weather', title: 'Weather', start_index: 0, end_index: 4, ...fields });
const answer = (label: string, output: (t: string) => Json[]) => row(label, (t) => responseObject(output(t)));

export const RESPONSES_RESPONSE: FieldRow[] = [
  answer('output message output_text', (t) => [message([outputText(`Sure, here it is: ${t}`)])]),
  answer('output message refusal', (t) => [message([{ type: 'refusal', refusal: `I will not say ${t}` }])]),
  answer('output_text annotations[].title', (t) => [message([outputText('Done.', [citation({ title: t })])])]),
  docRow('function_call arguments', (args) => responseObject([{ id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'call_1', name: 'lookup', arguments: args }])),
  answer('function_call name', (t) => [{ id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'call_1', name: t, arguments: '{}' }]),
  answer('reasoning summary', (t) => [{ id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: t }] }, message([outputText('Done.')])]),
  answer('reasoning content', (t) => [{ id: 'rs_1', type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: t }] }, message([outputText('Done.')])]),
  answer('custom_tool_call input', (t) => [{ id: 'ctc_1', type: 'custom_tool_call', call_id: 'call_1', name: 'shell', input: t }]),
  answer('a built-in tool item (code_interpreter_call code and logs)', (t) => [
    { id: 'ci_1', type: 'code_interpreter_call', status: 'completed', container_id: 'cntr_1', code: `print("${t}")`, outputs: [{ type: 'logs', logs: 'ok' }] },
  ]),
  answer('an item type the extractor does not know (every string)', (t) => [{ id: 'x_1', type: 'future_call', status: 'completed', result: { notes: [t] } }]),
  row('output_text (a provider\'s convenience field)', (t) => responseObject([], { output_text: t })),
  row('error.message of a failed response', (t) => responseObject([], { status: 'failed', error: { code: 'server_error', message: `Failed on ${t}` } })),
];

// ---------------------------------------------------------------------------------------------------
// Streams: a row builds the events after response.created (`final`: the output response.completed carries).

const ev = (type: string, fields: Json = {}) => ({ type, item_id: 'msg_1', output_index: 0, ...fields });
const events = (label: string, build: (t: string) => Json[]) => row(label, (t) => ({ events: build(t) }));
const deltas = (type: string, fields: Json = {}) => (t: string) => split3(t).map((delta) => ev(type, { ...fields, delta }));
const argsStart = ev('response.output_item.added', { item: { id: 'fc_1', type: 'function_call', status: 'in_progress', call_id: 'call_1', name: 'lookup', arguments: '' } });

export const RESPONSES_STREAM: FieldRow[] = [
  events('output_text.delta', (t) => [...deltas('response.output_text.delta', { content_index: 0 })(t), ev('response.output_text.delta', { content_index: 0, delta: ' bye.' })]),
  events('refusal.delta', deltas('response.refusal.delta', { content_index: 0 })),
  {
    ...events('function_call_arguments.delta', (t) => [argsStart, ...deltas('response.function_call_arguments.delta')(JSON.stringify({ query: t }))]),
    withArgs: (args) => ({ events: [argsStart, ...(args.match(/[\s\S]{1,5}/g) ?? []).map((delta) => ev('response.function_call_arguments.delta', { delta }))] }),
  },
  events('reasoning_summary_text.delta', deltas('response.reasoning_summary_text.delta', { summary_index: 0 })),
  events('reasoning_text.delta', deltas('response.reasoning_text.delta', { content_index: 0 })),
  events('custom_tool_call_input.delta', deltas('response.custom_tool_call_input.delta')),
  events('code_interpreter_call_code.delta', deltas('response.code_interpreter_call_code.delta')),
  events('output_text.done (a text no delta streamed)', (t) => [ev('response.output_text.done', { content_index: 0, text: t })]),
  events('output_text.done stating another text than its deltas', (t) => [
    ev('response.output_text.delta', { content_index: 0, delta: 'Fine.' }),
    ev('response.output_text.done', { content_index: 0, text: t }),
  ]),
  events('content_part.done part text', (t) => [ev('response.content_part.done', { content_index: 0, part: outputText(t) })]),
  events('reasoning_summary_part.done part text', (t) => [ev('response.reasoning_summary_part.done', { summary_index: 0, part: { type: 'summary_text', text: t } })]),
  events('output_text.annotation.added', (t) => [ev('response.output_text.annotation.added', { content_index: 0, annotation_index: 0, annotation: citation({ title: t }) })]),
  events('output_item.done item', (t) => [ev('response.output_item.done', { item: message([outputText(t)]) })]),
  row('response.completed output (never streamed as deltas)', (t) => ({ events: [], final: [message([outputText(t)])] })),
  events('an event type the extractor does not know (every string)', (t) => [{ type: 'response.future_event.delta', output_index: 0, delta: t }]),
];

/** The events of a stream row's body: response.created, the row's events, response.completed with the row's `final` output. */
export function responsesStreamEvents(body: Json): Json[] {
  const response = (status: string, output: Json[]) => ({ ...responseObject(output), status, usage: null });
  return [
    { type: 'response.created', sequence_number: 0, response: response('in_progress', []) },
    ...(body.events as Json[]),
    { type: 'response.completed', response: response('completed', (body.final as Json[] | undefined) ?? []) },
  ];
}
