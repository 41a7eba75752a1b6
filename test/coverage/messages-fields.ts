import { DECODED_ONLY, split3 } from './chat-fields';
import { DUPLICATE_KEY, URL_EXCLUDED } from './payloads';
import type { FieldRow, Json } from './table';

/**
 * The messages wire (Anthropic, through the sensor): every content field the extractor
 * (src/sensor/messages.schema.ts) reads, as a row that builds a valid request with a text at that field.
 */

export const msgs = (messages: Json[], extra: Json = {}): Json => ({ model: 'claude-sonnet-4-5', max_tokens: 64, messages, ...extra });
const user = (content: unknown) => ({ role: 'user', content });
const toolUse = (input: Json) => ({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input }] });
const toolResult = (content: unknown) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content }] });
const row = (label: string, build: (t: string) => Json, extra: Partial<FieldRow> = {}): FieldRow => ({ label, build, ...extra });
const textDoc = (data: string) => ({ type: 'document', source: { type: 'text', media_type: 'text/plain', data } });

export const MESSAGES_REQUEST: FieldRow[] = [
  row('system string', (t) => msgs([user('hi')], { system: `You guard this: ${t}` })),
  row('system text blocks', (t) => msgs([user('hi')], { system: [{ type: 'text', text: 'Be helpful.' }, { type: 'text', text: t, cache_control: { type: 'ephemeral' } }] })),
  row('user string content', (t) => msgs([user(`What is ${t}?`)])),
  row('user text block', (t) => msgs([user([{ type: 'text', text: 'Look:' }, { type: 'text', text: t }])])),
  row('an earlier turn (not the last)', (t) => msgs([user(`first: ${t}`), { role: 'assistant', content: 'noted' }, user('continue')])),
  row('assistant turn (string)', (t) => msgs([user('q'), { role: 'assistant', content: `It is ${t}` }, user('and?')])),
  row('assistant turn (text block)', (t) => msgs([user('q'), { role: 'assistant', content: [{ type: 'text', text: t }] }, user('and?')])),
  row('tool_use input (nested JSON)', (t) => msgs([user('read it'), toolUse({ path: '/src/a.ts', options: { deep: { notes: [`see ${t}`] } } }), toolResult('done')])),
  row('tool_use name', (t) => msgs([user('read it'), { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: t, input: {} }] }, toolResult('done')])),
  row('server_tool_use input', (t) => msgs([user('q'), { role: 'assistant', content: [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: t } }] }, user('go')])),
  row('tool_result string content', (t) => msgs([user('read it'), toolUse({ path: '/a' }), toolResult(`file contents: ${t}`)])),
  row('tool_result text block content', (t) => msgs([user('read it'), toolUse({ path: '/a' }), toolResult([{ type: 'text', text: `$ cat notes\n${t}` }])])),
  row('web_search_tool_result content', (t) =>
    msgs([user('q'), { role: 'assistant', content: [{ type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', title: t, url: 'https://example.com', encrypted_content: 'e' }] }] }, user('go')]),
  ),
  row('document block with a text source', (t) => msgs([user([textDoc(`Report: ${t}`), { type: 'text', text: 'Summarise' }])])),
  row('document block with a base64 source (text/plain, decoded)', (t) =>
    msgs([user([{ type: 'document', source: { type: 'base64', media_type: 'text/plain', data: Buffer.from(`Report: ${t}`).toString('base64') } }, { type: 'text', text: 'Summarise' }])]),
    { excluded: { [DUPLICATE_KEY]: DECODED_ONLY } },
  ),
  row('tool_result with a base64 markdown document inside (decoded)', (t) =>
    msgs([user('read'), toolUse({}), toolResult([{ type: 'document', source: { type: 'base64', media_type: 'text/markdown', data: Buffer.from(`# Notes\n${t}`).toString('base64') } }])]),
    { excluded: { [DUPLICATE_KEY]: DECODED_ONLY } },
  ),
  row('document block with a content source', (t) =>
    msgs([user([{ type: 'document', source: { type: 'content', content: [{ type: 'text', text: t }] } }, { type: 'text', text: 'Summarise' }])]),
  ),
  row('document block title', (t) => msgs([user([{ type: 'document', title: t, source: { type: 'text', media_type: 'text/plain', data: 'x' } }])])),
  row('document block context', (t) => msgs([user([{ ...textDoc('x'), context: t }, { type: 'text', text: 'Summarise' }])])),
  row('thinking block', (t) => msgs([user('q'), { role: 'assistant', content: [{ type: 'thinking', thinking: `Considering ${t}`, signature: 'sig' }, { type: 'text', text: 'ok' }] }, user('go')])),
  row('tool_result with a document inside', (t) => msgs([user('read'), toolUse({}), toolResult([textDoc(t)])])),
  row('search_result block content', (t) =>
    msgs([user([{ type: 'search_result', source: 'https://example.com', title: 'Result', content: [{ type: 'text', text: t }] }, { type: 'text', text: 'Use it' }])]),
  ),
  row('search_result title', (t) => msgs([user([{ type: 'search_result', source: 'https://example.com', title: t, content: [{ type: 'text', text: 'x' }] }])])),
  {
    ...row('search_result source', (t) => msgs([user([{ type: 'search_result', source: `https://example.com/?q=${t}`, title: 'Result', content: [{ type: 'text', text: 'x' }] }])])),
    excluded: URL_EXCLUDED,
  },
  row('tools[].description', (t) => msgs([user('hi')], { tools: [{ name: 'read_file', description: `Reads ${t}`, input_schema: { type: 'object' } }] })),
  row('tools[].input_schema (a property description)', (t) =>
    msgs([user('hi')], { tools: [{ name: 'read_file', input_schema: { type: 'object', properties: { path: { type: 'string', description: t } } } }] }),
  ),
  row('tools[].input_examples', (t) => msgs([user('hi')], { tools: [{ name: 'read_file', input_schema: { type: 'object' }, input_examples: [{ path: t }] }] })),
  row('tools[].name', (t) => msgs([user('hi')], { tools: [{ name: t, input_schema: { type: 'object' } }] })),
  row('output_config.format.schema (structured output)', (t) =>
    msgs([user('JSON please')], { output_config: { format: { type: 'json_schema', schema: { type: 'object', properties: { a: { type: 'string', description: t } } } } } }),
  ),
  row('output_format.schema (structured output, beta)', (t) => msgs([user('JSON please')], { output_format: { type: 'json_schema', schema: { type: 'object', properties: { a: { type: 'string', description: t } } } } })),
  row('an unknown block type (every string it holds, at any depth)', (t) => msgs([user([{ type: 'future_block', payload: { items: [{ note: t }] } }, { type: 'text', text: 'hi' }])])),
  row('a text block nested deeper than the extractor follows block by block', (t) => {
    let content: Json[] = [{ type: 'text', text: t }];
    for (let i = 0; i < 12; i++) content = [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content }];
    return msgs([user('read'), toolUse({}), { role: 'user', content }]);
  }),
  row('mcp_tool_use input', (t) => msgs([user('q'), { role: 'assistant', content: [{ type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'search', server_name: 's', input: { q: t } }] }, user('go')])),
  row('mcp_tool_result content', (t) =>
    msgs([user('q'), { role: 'user', content: [{ type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', is_error: false, content: [{ type: 'text', text: t }] }] }]),
  ),
];

// ---------------------------------------------------------------------------------------------------
// Responses (the sensor's output scan, src/sensor/messages-response.ts): a whole message, and a stream's
// events after message_start (`start` replaces the default message_start).

const message = (content: Json[]): Json => ({
  id: 'msg_coverage',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content,
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 7 },
});
const cite = (fields: Json) => ({ type: 'char_location', cited_text: 'x', document_index: 0, document_title: 'Doc', start_char_index: 0, end_char_index: 1, ...fields });
const answer = (label: string, content: (t: string) => Json[]) => row(label, (t) => message(content(t)));

export const MESSAGES_RESPONSE: FieldRow[] = [
  answer('response text block', (t) => [{ type: 'text', text: `Sure: ${t}` }]),
  answer('response thinking block', (t) => [{ type: 'thinking', thinking: t, signature: 'sig' }, { type: 'text', text: 'Done.' }]),
  answer('response tool_use name', (t) => [{ type: 'tool_use', id: 'toolu_1', name: t, input: {} }]),
  answer('response tool_use input', (t) => [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { query: t } }]),
  answer('response server_tool_use input', (t) => [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: t } }]),
  answer('response web_search_tool_result content', (t) => [
    { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', title: t, url: 'https://example.com', encrypted_content: 'e' }] },
  ]),
  answer('response text citations[].cited_text', (t) => [{ type: 'text', text: 'Done.', citations: [cite({ cited_text: t })] }]),
  answer('response text citations[].document_title', (t) => [{ type: 'text', text: 'Done.', citations: [cite({ document_title: t })] }]),
  answer('response unknown block type', (t) => [{ type: 'future_block', payload: { note: t } }, { type: 'text', text: 'Done.' }]),
];

const blockDelta = (index: number, delta: Json) => ({ type: 'content_block_delta', index, delta });
const textBlock = (index: number) => ({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
const events = (label: string, build: (t: string) => Json[]) => row(label, (t) => ({ events: build(t) }));
const deltasOf = (start: Json, delta: (p: string) => Json) => (t: string) => [start, ...split3(t).map((p) => blockDelta(0, delta(p))), { type: 'content_block_stop', index: 0 }];
const toolStart = { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} } };

export const MESSAGES_STREAM: FieldRow[] = [
  events('text_delta', deltasOf(textBlock(0), (p) => ({ type: 'text_delta', text: p }))),
  events('thinking_delta', deltasOf({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } }, (p) => ({ type: 'thinking_delta', thinking: p }))),
  {
    ...events('input_json_delta', (t) => deltasOf(toolStart, (p) => ({ type: 'input_json_delta', partial_json: p }))(JSON.stringify({ query: t }))),
    withArgs: (args) => ({ events: [toolStart, ...(args.match(/[\s\S]{1,5}/g) ?? []).map((p) => blockDelta(0, { type: 'input_json_delta', partial_json: p }))] }),
  },
  events('citations_delta', (t) => [textBlock(0), blockDelta(0, { type: 'citations_delta', citation: cite({ cited_text: t }) }), blockDelta(0, { type: 'text_delta', text: 'Done.' })]),
  events('text split across two text blocks (as citations split it)', (t) => {
    const [a, b, c] = split3(t);
    return [textBlock(0), blockDelta(0, { type: 'text_delta', text: a }), { type: 'content_block_stop', index: 0 }, textBlock(1), ...[b, c].map((p) => blockDelta(1, { type: 'text_delta', text: p }))];
  }),
  events('content_block_start text', (t) => [{ type: 'content_block_start', index: 0, content_block: { type: 'text', text: t } }]),
  events('content_block_start tool_use name', (t) => [{ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: t, input: {} } }]),
  row('message_start content', (t) => ({ start: { type: 'message_start', message: { ...message([{ type: 'text', text: t }]), stop_reason: null } }, events: [] })),
  events('an unknown delta type', (t) => [textBlock(0), blockDelta(0, { type: 'future_delta', note: t })]),
  events('an unknown event type', (t) => [{ type: 'future_event', data: { note: t } }]),
];
