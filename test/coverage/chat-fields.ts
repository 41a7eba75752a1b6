import { DUPLICATE_KEY, URL_EXCLUDED } from './payloads';
import type { FieldRow, Json } from './table';

/**
 * The chat-completions wire (OpenAI): every content field the extractor (src/gateway/proxy/openai-chat.schema.ts)
 * reads, as a row that builds a valid request / response / stream with a text at that field. `doc` rows
 * carry the text inside a JSON document in a string (tool-call arguments): they build from that
 * document's text, so the `\u`-escape variant can spell the value inside it.
 */

/** A base64 data URL of a text file (decoded and scanned by the gateway). */
export const b64DataUrl = (mime: string, text: string) => `data:${mime};base64,${Buffer.from(text).toString('base64')}`;
/** The payload travels base64-encoded: no JSON key holds its text to repeat. */
export const DECODED_ONLY = 'the payload is inside base64 content: no JSON string holds its text to repeat (the duplicate-key variant is covered on the plain fields)';

export const chat = (messages: Json[], extra: Json = {}): Json => ({ model: 'gpt-4o-mini', messages, ...extra });
export const user = (content: unknown) => ({ role: 'user', content });
const call = (args: string, name = 'lookup') => ({ id: 'call_1', type: 'function', function: { name, arguments: args } });
const toolTurn = (args = '{}') => [user('run it'), { role: 'assistant', content: null, tool_calls: [call(args)] }];
const fnTurn = (args = '{}') => [user('look it up'), { role: 'assistant', content: null, function_call: { name: 'lookup', arguments: args } }];
const row = (label: string, build: (t: string) => Json, extra: Partial<FieldRow> = {}): FieldRow => ({ label, build, ...extra });
const docRow = (label: string, withArgs: (args: string) => Json): FieldRow => ({ label, build: (t) => withArgs(JSON.stringify({ query: t })), withArgs });

export const CHAT_REQUEST: FieldRow[] = [
  row('system message string', (t) => chat([{ role: 'system', content: `Never mention this: ${t}` }, user('hi')])),
  row('system message content parts', (t) => chat([{ role: 'system', content: [{ type: 'text', text: `Rules: ${t}` }] }, user('hi')])),
  row('a participant name (messages[].name)', (t) => chat([{ role: 'user', name: t, content: 'hi' }])),
  row('developer message', (t) => chat([{ role: 'developer', content: `Internal note ${t}` }, user('hi')])),
  row('user string content', (t) => chat([user(`Tell me about ${t}`)])),
  row('user content-part array text', (t) =>
    chat([user([{ type: 'text', text: 'Look at this' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }, { type: 'text', text: t }])]),
  ),
  row('user file part filename', (t) => chat([user([{ type: 'file', file: { filename: t, file_id: 'file-abc123' } }, { type: 'text', text: 'Summarise' }])])),
  row('user file part file_data (a text file, base64 data URL, decoded)', (t) =>
    chat([user([{ type: 'file', file: { filename: 'notes.txt', file_data: b64DataUrl('text/plain', `Meeting notes: ${t}`) } }, { type: 'text', text: 'Summarise' }])]),
    { excluded: { [DUPLICATE_KEY]: DECODED_ONLY } },
  ),
  row('user file part file_data (bare base64 of a CSV, decoded)', (t) =>
    chat([user([{ type: 'file', file: { filename: 'rows.csv', file_data: Buffer.from(`id,note\n1,${t}\n`).toString('base64') } }, { type: 'text', text: 'Summarise' }])]),
    { excluded: { [DUPLICATE_KEY]: DECODED_ONLY } },
  ),
  row('an earlier user turn (not the last)', (t) => chat([user(`first: ${t}`), { role: 'assistant', content: 'noted' }, user('continue')])),
  row('assistant message content', (t) => chat([user('q'), { role: 'assistant', content: `The answer is ${t}` }, user('and?')])),
  row('assistant content parts', (t) => chat([user('q'), { role: 'assistant', content: [{ type: 'text', text: t }] }, user('and?')])),
  row('assistant content refusal part', (t) => chat([user('q'), { role: 'assistant', content: [{ type: 'refusal', refusal: t }] }, user('and?')])),
  row('assistant refusal', (t) => chat([user('q'), { role: 'assistant', content: null, refusal: `I cannot discuss ${t}` }, user('why?')])),
  docRow('assistant tool_calls[].function.arguments', (args) => chat([...toolTurn(args), { role: 'tool', tool_call_id: 'call_1', content: 'done' }])),
  row('assistant tool_calls[].function.name', (t) =>
    chat([user('q'), { role: 'assistant', content: null, tool_calls: [call('{}', t)] }, { role: 'tool', tool_call_id: 'call_1', content: 'done' }]),
  ),
  docRow('legacy function_call.arguments', (args) => chat([...fnTurn(args), { role: 'function', name: 'lookup', content: 'done' }])),
  row('legacy function message content', (t) => chat([...fnTurn(), { role: 'function', name: 'lookup', content: t }])),
  row('tool message content (string)', (t) => chat([...toolTurn(), { role: 'tool', tool_call_id: 'call_1', content: `output: ${t}` }])),
  row('tool message content (parts)', (t) => chat([...toolTurn(), { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: t }] }])),
  row('tools[].function.description', (t) =>
    chat([user('hi')], { tools: [{ type: 'function', function: { name: 'lookup', description: `Looks up ${t}`, parameters: { type: 'object', properties: {} } } }] }),
  ),
  row('tools[].function.parameters (a property description)', (t) =>
    chat([user('hi')], { tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string', description: `e.g. ${t}` } } } } }] }),
  ),
  row('tools[].function.name', (t) => chat([user('hi')], { tools: [{ type: 'function', function: { name: t, parameters: { type: 'object' } } }] })),
  row('tools[].custom.name', (t) => chat([user('hi')], { tools: [{ type: 'custom', custom: { name: t } }] })),
  row('tools[].custom.description', (t) => chat([user('hi')], { tools: [{ type: 'custom', custom: { name: 'lookup', description: `Looks up ${t}` } }] })),
  row('tools[].custom.format (grammar definition)', (t) =>
    chat([user('hi')], { tools: [{ type: 'custom', custom: { name: 'lookup', format: { type: 'grammar', grammar: { syntax: 'lark', definition: `start: "${t}"` } } } }] }),
  ),
  row('assistant tool_calls[].custom.input', (t) =>
    chat([user('q'), { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'custom', custom: { name: 'lookup', input: t } }] }, { role: 'tool', tool_call_id: 'call_1', content: 'done' }]),
  ),
  row('legacy functions[].name', (t) => chat([user('hi')], { functions: [{ name: t, parameters: { type: 'object' } }] })),
  row('legacy functions[].description', (t) => chat([user('hi')], { functions: [{ name: 'lookup', description: `Looks up ${t}`, parameters: { type: 'object' } }] })),
  row('legacy functions[].parameters', (t) => chat([user('hi')], { functions: [{ name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string', enum: [t] } } } }] })),
  row('prediction.content (string)', (t) => chat([user('edit this file')], { prediction: { type: 'content', content: `const note = "${t}";` } })),
  row('prediction.content (parts)', (t) => chat([user('edit this file')], { prediction: { type: 'content', content: [{ type: 'text', text: t }] } })),
  row('response_format.json_schema.schema', (t) =>
    chat([user('answer in JSON')], {
      response_format: { type: 'json_schema', json_schema: { name: 'answer', strict: true, schema: { type: 'object', properties: { a: { type: 'string', description: t } } } } },
    }),
  ),
  row('response_format.json_schema.name', (t) => chat([user('answer in JSON')], { response_format: { type: 'json_schema', json_schema: { name: t, schema: { type: 'object' } } } })),
  row('response_format.json_schema.description', (t) =>
    chat([user('answer in JSON')], { response_format: { type: 'json_schema', json_schema: { name: 'answer', description: `About ${t}`, schema: { type: 'object' } } } }),
  ),
];

// ---------------------------------------------------------------------------------------------------
// Responses: a row builds the upstream's whole JSON answer (the fake sends exactly its serialisation).

/** Variants no response field carries (variant id → why). */
export const RESPONSE_ONLY: Record<string, string> = {
  'allow-listed phrase in another message': 'a response is one answer: the allow-listed phrase beside the payload is the same-field variant',
};

const completion = (message: Json): Json => ({
  id: 'chatcmpl-coverage',
  object: 'chat.completion',
  created: 1_763_800_000,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: null, ...message }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
});
const citation = (fields: Json) => ({ type: 'url_citation', url_citation: { title: 'Weather', url: 'https://example.com/weather', start_index: 0, end_index: 4, ...fields } });
const answer = (label: string, message: (t: string) => Json) => row(label, (t) => completion(message(t)));

export const CHAT_RESPONSE: FieldRow[] = [
  answer('response content', (t) => ({ content: `Sure, here it is: ${t}` })),
  answer('response content parts', (t) => ({ content: [{ type: 'text', text: t }] })),
  answer('response refusal', (t) => ({ refusal: `I will not say ${t}` })),
  { ...docRow('response tool_calls[].function.arguments', (args) => completion({ tool_calls: [call(args)] })) },
  answer('response tool_calls[].function.name', (t) => ({ tool_calls: [call('{}', t)] })),
  docRow('response legacy function_call.arguments', (args) => completion({ function_call: { name: 'lookup', arguments: args } })),
  answer('response audio.transcript', (t) => ({ audio: { id: 'audio_1', data: 'UklGRg==', expires_at: 1_763_900_000, transcript: t } })),
  answer('reasoning_content', (t) => ({ content: 'Done.', reasoning_content: t })),
  answer('reasoning', (t) => ({ content: 'Done.', reasoning: t })),
  answer('reasoning_details[].text', (t) => ({ content: 'Done.', reasoning_details: [{ type: 'reasoning.text', text: t, signature: null }] })),
  answer('reasoning_details[].summary (string)', (t) => ({
    content: 'Done.',
    reasoning_details: [{ type: 'reasoning.encrypted', data: 'b3BhcXVl' }, { type: 'reasoning.summary', summary: t }],
  })),
  answer('reasoning_details[].summary (parts)', (t) => ({ content: 'Done.', reasoning_details: [{ type: 'reasoning.summary', summary: [{ type: 'summary_text', text: t }] }] })),
  answer('annotations[].url_citation.title', (t) => ({ content: 'Done.', annotations: [citation({ title: t })] })),
  { ...answer('annotations[].url_citation.url', (t) => ({ content: 'Done.', annotations: [citation({ url: `https://example.com/?q=${t}` })] })), excluded: URL_EXCLUDED },
  answer('annotations[].url_citation.content', (t) => ({ content: 'Done.', annotations: [citation({ content: t })] })),
  row('legacy choices[].text', (t) => ({
    id: 'cmpl-coverage',
    object: 'text_completion',
    created: 1_763_800_000,
    model: 'gpt-3.5-turbo-instruct',
    choices: [{ index: 0, text: t, logprobs: null, finish_reason: 'stop' }],
  })),
];

// ---------------------------------------------------------------------------------------------------
// Streams: a row builds the choices of each chunk after the role chunk, the text split across three.

/** Harmless text the client may receive before the payload arrives (longer than the stream window, 1024). */
// Released as soon as it is scanned (adaptive release): it shares no 6-character piece with a payload (touches(): "introduction" did, with "instructions").
const PREAMBLE = 'This is a long and perfectly harmless opening paragraph that the client may receive early. '.repeat(14);

export const split3 = (t: string): string[] => {
  const cps = [...t]; // never inside a surrogate pair
  const a = Math.floor(cps.length / 3);
  const b = Math.floor((2 * cps.length) / 3);
  return [cps.slice(0, a).join(''), cps.slice(a, b).join(''), cps.slice(b).join('')];
};
const deltas = (label: string, delta: (piece: string) => Json, tail: Json[] = [{ content: 'Done.' }]): FieldRow =>
  row(label, (t) => ({ choices: [...split3(t).map((p) => ({ delta: delta(p) })), ...tail.map((d) => ({ delta: d }))] }));
const toolStart = { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '' } }] };
const docDeltas = (label: string, start: Json | null, piece: (p: string) => Json): FieldRow => ({
  label,
  build: (t) => ({ choices: [...(start ? [{ delta: start }] : []), ...split3(JSON.stringify({ query: t })).map((p) => ({ delta: piece(p) }))] }),
  withArgs: (args) => ({ choices: [...(start ? [{ delta: start }] : []), ...(args.match(/[\s\S]{1,5}/g) ?? []).map((p) => ({ delta: piece(p) }))] }),
});

export const CHAT_STREAM: FieldRow[] = [
  deltas('delta.content', (p) => ({ content: p }), [{ content: ' bye.' }]),
  row('delta.content after a preamble longer than the stream window', (t) => ({
    choices: [{ delta: { content: PREAMBLE } }, ...split3(`code ${t} end`).map((p) => ({ delta: { content: p } })), { delta: { content: ' bye.' } }],
  })),
  deltas('delta.content parts', (p) => ({ content: [{ type: 'text', text: p }] })),
  deltas('delta.refusal', (p) => ({ refusal: p })),
  docDeltas('delta.tool_calls[].function.arguments', toolStart, (p) => ({ tool_calls: [{ index: 0, function: { arguments: p } }] })),
  row('delta.tool_calls[].function.name', (t) => ({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: t, arguments: '{}' } }] } }] })),
  docDeltas('delta.function_call.arguments', { function_call: { name: 'lookup', arguments: '' } }, (p) => ({ function_call: { arguments: p } })),
  deltas('delta.audio.transcript', (p) => ({ audio: { transcript: p } })),
  deltas('delta.reasoning_content', (p) => ({ reasoning_content: p })),
  deltas('delta.reasoning', (p) => ({ reasoning: p })),
  deltas('delta.reasoning_details[].text', (p) => ({ reasoning_details: [{ type: 'reasoning.text', index: 0, text: p }] })),
  deltas('delta.reasoning_details[].summary', (p) => ({ reasoning_details: [{ type: 'reasoning.summary', index: 0, summary: p }] })),
  row('delta.annotations[].url_citation.title', (t) => ({ choices: [{ delta: { content: 'Done.' } }, { delta: { annotations: [citation({ title: t })] } }] })),
  row('delta.annotations[].url_citation.url', (t) => ({ choices: [{ delta: { content: 'Done.' } }, { delta: { annotations: [citation({ url: `https://example.com/?q=${t}` })] } }] }), {
    excluded: URL_EXCLUDED,
  }),
  row('delta.annotations[].url_citation.content', (t) => ({ choices: [{ delta: { content: 'Done.' } }, { delta: { annotations: [citation({ content: t })] } }] })),
  row('legacy stream choices[].text', (t) => ({ legacy: true, choices: split3(t).map((p) => ({ text: p })) })),
];
