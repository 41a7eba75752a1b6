import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/fake-anthropic';
import { pgliteTarget } from '../helpers/databases';
import { postJson, startTestServices, type TestServices } from '../helpers/services';

/**
 * Scan coverage: a deny-listed term is put into EACH content-bearing field of each wire API, and the
 * request must be blocked with nothing forwarded (input) or nothing of it returned (output). Every row
 * also runs with a harmless value in the same place, which must pass: so a block proves that field was
 * scanned, not that the request shape was refused. Then evasion by formatting (invisible characters,
 * casing) must not get the term through either.
 *
 * Scanning does not depend on the database, so this runs on the embedded one only.
 */

const TERM = 'zebra-quartz-77';
const CLEAN = 'plain-value-12';

type Json = Record<string, any>;
type Build = (t: string) => Json;

// ---------------------------------------------------------------------------------------------------
// A scripted chat-completions upstream (real wire format): answers the next request with the JSON
// message or the stream deltas the test set, and records what it received.

interface ScriptedOpenAI {
  url: string;
  received: Buffer[];
  /** The assistant message of the JSON answer (role/refusal are added). */
  message: Json;
  /** Stream answer: the `delta` of each chunk, in order (role chunk, finish chunk and [DONE] are added). */
  deltas: Json[];
  close(): Promise<void>;
}

async function startScriptedOpenAI(): Promise<ScriptedOpenAI> {
  const fake = { received: [], message: { content: 'ok' }, deltas: [{ content: 'ok' }] } as unknown as ScriptedOpenAI;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      fake.received.push(raw);
      const body = JSON.parse(raw.toString('utf8')) as Json;
      const base = { id: 'chatcmpl-scripted', created: 1_763_800_000, model: body.model };
      const toolish = Boolean(fake.message.tool_calls || fake.message.function_call);
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            ...base,
            object: 'chat.completion',
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: null, refusal: null, ...fake.message },
                logprobs: null,
                finish_reason: toolish ? 'tool_calls' : 'stop',
              },
            ],
            usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      const chunk = (delta: Json, finish: string | null = null) =>
        `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
      const events = [chunk({ role: 'assistant', content: '' }), ...fake.deltas.map((d) => chunk(d)), chunk({}, 'stop'), 'data: [DONE]\n\n'];
      let i = 0;
      const tick = () => {
        if (res.destroyed) return;
        if (i >= events.length) return void res.end();
        res.write(events[i++]);
        setTimeout(tick, 2);
      };
      tick();
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

// ---------------------------------------------------------------------------------------------------
// Chat completions: every content-bearing request field.

const chat = (messages: Json[], extra: Json = {}): Json => ({ model: 'gpt-4o-mini', messages, ...extra });
const user = (content: unknown) => ({ role: 'user', content });
const call = (args: string) => ({ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: args } });
const customCall = (input: string, name = 'run_sql') => ({ id: 'call_1', type: 'custom', custom: { name, input } });
const customTool = (custom: Json) => ({ tools: [{ type: 'custom', custom: { name: 'run_sql', ...custom } }] });
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const filePart = (file: Json) => ({ type: 'file', file });

const CHAT_INPUT: Array<[string, Build]> = [
  ['system message string', (t) => chat([{ role: 'system', content: `Never mention ${t}.` }, user('hi')])],
  ['system message content parts', (t) => chat([{ role: 'system', content: [{ type: 'text', text: `Rules: ${t}` }] }, user('hi')])],
  ['a participant name (messages[].name)', (t) => chat([{ role: 'user', name: t.replace(/[^a-zA-Z0-9_-]/g, '_'), content: 'hi' }])],
  ['developer message', (t) => chat([{ role: 'developer', content: `Internal codename ${t}` }, user('hi')])],
  ['user string content', (t) => chat([user(`Tell me about ${t}`)])],
  [
    'user content-part array text',
    (t) => chat([user([{ type: 'text', text: 'Look at this' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }, { type: 'text', text: t }])]),
  ],
  ['an earlier user turn (not the last)', (t) => chat([user(`first: ${t}`), { role: 'assistant', content: 'noted' }, user('continue')])],
  ['assistant message content', (t) => chat([user('q'), { role: 'assistant', content: `The answer is ${t}` }, user('and?')])],
  ['assistant content parts', (t) => chat([user('q'), { role: 'assistant', content: [{ type: 'text', text: t }] }, user('and?')])],
  ['assistant refusal', (t) => chat([user('q'), { role: 'assistant', content: null, refusal: `I cannot discuss ${t}` }, user('why?')])],
  [
    'assistant tool_calls[].function.arguments',
    (t) =>
      chat([user('look it up'), { role: 'assistant', content: null, tool_calls: [call(JSON.stringify({ query: t }))] }, { role: 'tool', tool_call_id: 'call_1', content: 'done' }]),
  ],
  [
    'legacy function_call.arguments',
    (t) =>
      chat([
        user('look it up'),
        { role: 'assistant', content: null, function_call: { name: 'lookup', arguments: JSON.stringify({ q: t }) } },
        { role: 'function', name: 'lookup', content: 'done' },
      ]),
  ],
  [
    'legacy function message content',
    (t) => chat([user('x'), { role: 'assistant', content: null, function_call: { name: 'lookup', arguments: '{}' } }, { role: 'function', name: 'lookup', content: t }]),
  ],
  [
    'tool message content (string)',
    (t) => chat([user('run it'), { role: 'assistant', content: null, tool_calls: [call('{}')] }, { role: 'tool', tool_call_id: 'call_1', content: `output: ${t}` }]),
  ],
  [
    'tool message content (parts)',
    (t) =>
      chat([user('run it'), { role: 'assistant', content: null, tool_calls: [call('{}')] }, { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: t }] }]),
  ],
  [
    'tools[].function.description',
    (t) => chat([user('hi')], { tools: [{ type: 'function', function: { name: 'lookup', description: `Looks up ${t}`, parameters: { type: 'object', properties: {} } } }] }),
  ],
  [
    'tools[].function.parameters (a property description)',
    (t) =>
      chat([user('hi')], {
        tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string', description: `e.g. ${t}` } } } } }],
      }),
  ],
  ['tools[].function.name', (t) => chat([user('hi')], { tools: [{ type: 'function', function: { name: t.replace(/[^a-zA-Z0-9_-]/g, '_'), parameters: { type: 'object' } } }] })],
  ['legacy functions[].description', (t) => chat([user('hi')], { functions: [{ name: 'lookup', description: `Looks up ${t}`, parameters: { type: 'object' } }] })],
  [
    'legacy functions[].parameters',
    (t) => chat([user('hi')], { functions: [{ name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string', enum: [t] } } } }] }),
  ],
  ['prediction.content (string)', (t) => chat([user('edit this file')], { prediction: { type: 'content', content: `const codename = "${t}";` } })],
  ['prediction.content (parts)', (t) => chat([user('edit this file')], { prediction: { type: 'content', content: [{ type: 'text', text: t }] } })],
  [
    'response_format.json_schema.schema',
    (t) =>
      chat([user('answer in JSON')], {
        response_format: { type: 'json_schema', json_schema: { name: 'answer', strict: true, schema: { type: 'object', properties: { a: { type: 'string', description: t } } } } },
      }),
  ],
  [
    'response_format.json_schema.name',
    (t) => chat([user('answer in JSON')], { response_format: { type: 'json_schema', json_schema: { name: t.replace(/[^a-zA-Z0-9_-]/g, '_'), schema: { type: 'object' } } } }),
  ],
  ['tools[].custom.description', (t) => chat([user('hi')], customTool({ description: `Runs SQL about ${t}` }))],
  ['tools[].custom.name', (t) => chat([user('hi')], { tools: [{ type: 'custom', custom: { name: t.replace(/[^a-zA-Z0-9_-]/g, '_') } }] })],
  [
    'tools[].custom.format (grammar definition)',
    (t) => chat([user('hi')], customTool({ format: { type: 'grammar', grammar: { syntax: 'lark', definition: `start: "SELECT " NAME\n// ${t}\nNAME: /[a-z]+/` } } })),
  ],
  [
    'assistant tool_calls[].custom.input',
    (t) => chat([user('query it'), { role: 'assistant', content: null, tool_calls: [customCall(`SELECT * FROM ${t}`)] }, { role: 'tool', tool_call_id: 'call_1', content: 'rows' }]),
  ],
  [
    'assistant tool_calls[].custom.name',
    (t) => chat([user('q'), { role: 'assistant', content: null, tool_calls: [customCall('x', t.replace(/[^a-zA-Z0-9_-]/g, '_'))] }, { role: 'tool', tool_call_id: 'call_1', content: 'ok' }]),
  ],
  ['a text/plain file part (data URL)', (t) => chat([user([filePart({ file_data: `data:text/plain;base64,${b64(`Notes: ${t}`)}`, filename: 'notes.txt' }), { type: 'text', text: 'Summarise' }])])],
  ['a markdown file part (bare base64, .md filename)', (t) => chat([user([filePart({ file_data: b64(`# Title\n\n- ${t}\n`), filename: 'README.md' }), { type: 'text', text: 'Summarise' }])])],
  ['a CSV file part', (t) => chat([user([filePart({ file_data: `data:text/csv;base64,${b64(`a,b\n1,${t}\n`)}` })])])],
  ['a JSON file part', (t) => chat([user([filePart({ file_data: `data:application/json;base64,${b64(JSON.stringify({ note: t }))}` })])])],
  ['an HTML file part', (t) => chat([user([filePart({ file_data: `data:text/html;base64,${b64(`<p>${t}</p>`)}` })])])],
  ['a file part without a type (sniffed as UTF-8 text)', (t) => chat([user([filePart({ file_data: b64(`plain ${t}`) })])])],
  [
    'response_format.json_schema.description',
    (t) => chat([user('answer in JSON')], { response_format: { type: 'json_schema', json_schema: { name: 'answer', description: `About ${t}`, schema: { type: 'object' } } } }),
  ],
];

// Output: what the upstream answers (non-streaming JSON message, or stream deltas).
const CHAT_OUTPUT_JSON: Array<[string, (t: string) => Json]> = [
  ['response content', (t) => ({ content: `Sure, the codename is ${t}.` })],
  ['response refusal', (t) => ({ refusal: `I will not reveal ${t}.` })],
  ['response tool_calls[].function.arguments', (t) => ({ tool_calls: [call(JSON.stringify({ query: t }))] })],
  ['response legacy function_call.arguments', (t) => ({ function_call: { name: 'lookup', arguments: JSON.stringify({ q: t }) } })],
  ['response tool_calls[].custom.input', (t) => ({ tool_calls: [customCall(`SELECT * FROM ${t}`)] })],
];

const PREAMBLE = 'This is a long and perfectly harmless introduction that the client may receive early. '.repeat(5); // > window

const split3 = (t: string) => {
  const a = Math.floor(t.length / 3);
  const b = Math.floor((2 * t.length) / 3);
  return [t.slice(0, a), t.slice(a, b), t.slice(b)];
};

const CHAT_OUTPUT_STREAM: Array<[string, (t: string) => Json[]]> = [
  ['a streamed answer with the term split across three chunks', (t) => [{ content: PREAMBLE }, ...split3(`code ${t} end`).map((p) => ({ content: p })), { content: ' bye.' }]],
  [
    'streamed tool_calls arguments split across three chunks',
    (t) => [
      { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '' } }] },
      ...split3(JSON.stringify({ query: t })).map((p) => ({ tool_calls: [{ index: 0, function: { arguments: p } }] })),
    ],
  ],
  [
    'streamed custom tool call input (plain text) split across three chunks',
    (t) => [
      { tool_calls: [{ index: 0, id: 'call_1', type: 'custom', custom: { name: 'run_sql', input: '' } }] },
      ...split3(`SELECT * FROM ${t} LIMIT 1`).map((p) => ({ tool_calls: [{ index: 0, custom: { input: p } }] })),
    ],
  ],
];

// ---------------------------------------------------------------------------------------------------
// Messages (sensor): every content-bearing request field.

const msgs = (messages: Json[], extra: Json = {}): Json => ({ model: 'claude-sonnet-4-5', max_tokens: 64, messages, ...extra });
const toolUse = (input: Json) => ({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input }] });
const toolResult = (content: unknown) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content }] });

const MESSAGES_INPUT: Array<[string, Build]> = [
  ['system string', (t) => msgs([user('hi')], { system: `You guard ${t}.` })],
  ['system text blocks', (t) => msgs([user('hi')], { system: [{ type: 'text', text: 'Be helpful.' }, { type: 'text', text: t, cache_control: { type: 'ephemeral' } }] })],
  ['user string content', (t) => msgs([user(`What is ${t}?`)])],
  ['user text block', (t) => msgs([user([{ type: 'text', text: 'Look:' }, { type: 'text', text: t }])])],
  ['an earlier turn (not the last)', (t) => msgs([user(`first: ${t}`), { role: 'assistant', content: 'noted' }, user('continue')])],
  ['assistant turn (string)', (t) => msgs([user('q'), { role: 'assistant', content: `It is ${t}` }, user('and?')])],
  ['assistant turn (text block)', (t) => msgs([user('q'), { role: 'assistant', content: [{ type: 'text', text: t }] }, user('and?')])],
  ['tool_use input (nested JSON)', (t) => msgs([user('read it'), toolUse({ path: '/src/a.ts', options: { deep: { notes: [`see ${t}`] } } }), toolResult('done')])],
  ['tool_result string content', (t) => msgs([user('read it'), toolUse({ path: '/a' }), toolResult(`file contents: ${t}`)])],
  ['tool_result text block content', (t) => msgs([user('read it'), toolUse({ path: '/a' }), toolResult([{ type: 'text', text: `$ cat secrets\n${t}` }])])],
  [
    'document block with a text source',
    (t) => msgs([user([{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: `Report: ${t}` } }, { type: 'text', text: 'Summarise' }])]),
  ],
  [
    'document block with a base64 text/plain source',
    (t) => msgs([user([{ type: 'document', source: { type: 'base64', media_type: 'text/plain', data: b64(`Report: ${t}`) } }, { type: 'text', text: 'Summarise' }])]),
  ],
  [
    'base64 markdown document inside a tool_result',
    (t) => msgs([user('read'), toolUse({}), toolResult([{ type: 'document', source: { type: 'base64', media_type: 'text/markdown', data: b64(`## Notes\n${t}`) } }])]),
  ],
  [
    'document block with a content source',
    (t) => msgs([user([{ type: 'document', source: { type: 'content', content: [{ type: 'text', text: t }] } }, { type: 'text', text: 'Summarise' }])]),
  ],
  ['document block title', (t) => msgs([user([{ type: 'document', title: t, source: { type: 'text', media_type: 'text/plain', data: 'x' } }])])],
  [
    'thinking block',
    (t) => msgs([user('q'), { role: 'assistant', content: [{ type: 'thinking', thinking: `Considering ${t}`, signature: 'sig' }, { type: 'text', text: 'ok' }] }, user('go')]),
  ],
  [
    'tool_result with a document inside',
    (t) => msgs([user('read'), toolUse({}), toolResult([{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: t } }])]),
  ],
  [
    'search_result block content',
    (t) => msgs([user([{ type: 'search_result', source: 'https://example.com', title: 'Result', content: [{ type: 'text', text: t }] }, { type: 'text', text: 'Use it' }])]),
  ],
  ['tools[].description', (t) => msgs([user('hi')], { tools: [{ name: 'read_file', description: `Reads ${t}`, input_schema: { type: 'object' } }] })],
  [
    'tools[].input_schema (a property description)',
    (t) => msgs([user('hi')], { tools: [{ name: 'read_file', input_schema: { type: 'object', properties: { path: { type: 'string', description: t } } } }] }),
  ],
  ['tools[].name', (t) => msgs([user('hi')], { tools: [{ name: t.replace(/[^a-zA-Z0-9_-]/g, '_'), input_schema: { type: 'object' } }] })],
  [
    'output_config.format.schema (structured output)',
    (t) => msgs([user('JSON please')], { output_config: { format: { type: 'json_schema', schema: { type: 'object', properties: { a: { type: 'string', description: t } } } } } }),
  ],
  ['an unknown block type (every string it holds, at any depth)', (t) => msgs([user([{ type: 'future_block', payload: { items: [{ note: t }] } }, { type: 'text', text: 'hi' }])])],
  [
    'a text block nested deeper than the extractor follows block by block',
    (t) => {
      let content: Json[] = [{ type: 'text', text: t }];
      for (let i = 0; i < 12; i++) content = [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content }];
      return msgs([user('read'), toolUse({}), { role: 'user', content }]);
    },
  ],
  ['mcp_tool_use input', (t) => msgs([user('q'), { role: 'assistant', content: [{ type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'search', server_name: 's', input: { q: t } }] }, user('go')])],
  [
    'mcp_tool_result content',
    (t) => msgs([user('q'), { role: 'user', content: [{ type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', is_error: false, content: [{ type: 'text', text: t }] }] }]),
  ],
];

// Evasion by formatting: still the term for a reader, so still blocked.
const EVASIONS: Array<[string, string]> = [
  ['upper case', TERM.toUpperCase()],
  ['mixed case', 'ZeBrA-QuArTz-77'],
  ['zero-width spaces inside', 'zeb\u200bra-qua\u200brtz-77'],
  ['zero-width non-joiner / joiner inside', 'z\u200cebra-quar\u200dtz-7\u200c7'],
  ['word joiner and BOM inside', 'zebra\u2060-quartz\ufeff-77'],
  ['soft hyphens inside', 'ze\u00adbra-quar\u00adtz-77'],
  ['upper case with zero-width characters', 'ZEB\u200bRA-QUA\u200dRTZ-77'],
];

// ---------------------------------------------------------------------------------------------------

describe('scan coverage: a deny-listed term in every content-bearing field is blocked', () => {
  let openai: ScriptedOpenAI;
  let anthropic: FakeAnthropic;
  let svc: TestServices;
  const bearer = () => ({ authorization: `Bearer ${svc.apiKey}` });
  const sensorHeaders = () => ({ 'x-svc-key': svc.apiKey, 'anthropic-version': '2023-06-01', authorization: 'Bearer upstream-token' });
  const sendChat = (body: Json) => postJson(`${svc.gatewayUrl}/v1/chat/completions`, body, bearer());
  const sendMessages = (body: Json) => postJson(`${svc.sensorUrl}/v1/messages`, body, sensorHeaders());

  beforeAll(async () => {
    openai = await startScriptedOpenAI();
    anthropic = await startFakeAnthropic();
    svc = await startTestServices(pgliteTarget, { env: { OPENAI_BASE_URL: openai.url, OPENAI_API_KEY: 'sk-upstream', ANTHROPIC_BASE_URL: anthropic.url } });
    const get = await fetch(`${svc.gatewayUrl}/v1/policies/?is_default=true`, { headers: bearer() });
    const policyId = ((await get.json()) as Json).results[0].id;
    // Only the deny list: a block can only come from the term.
    const patch = await fetch(`${svc.gatewayUrl}/v1/policies/${policyId}/`, {
      method: 'PATCH',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify({ policy_mode: 'IO', input_detectors: [], output_detectors: [], deny_list: { entries: [TERM], match_type: 'contains' } }),
    });
    expect(patch.status).toBe(200);
  });
  afterAll(async () => {
    await svc?.dispose();
    await openai?.close();
    await anthropic?.close();
  });
  beforeEach(() => {
    openai.received.length = 0;
    openai.message = { content: 'ok' };
    openai.deltas = [{ content: 'ok' }];
    anthropic.received.length = 0;
  });

  function expectChatInputBlocked(res: Awaited<ReturnType<typeof postJson>>): void {
    expect(res.status).toBe(403);
    expect(res.json.error).toMatchObject({ type: 'security_block', code: 'input_blocked', message: expect.stringContaining('deny_list') });
    expect(res.headers.get('x-risk-blocked')).toBe('true');
    expect(res.headers.get('x-risk-categories')).toContain('deny_list');
    expect(openai.received).toHaveLength(0);
  }

  function expectSensorBlocked(res: Awaited<ReturnType<typeof postJson>>): void {
    expect(res.status).toBe(403);
    expect(res.json).toEqual({ type: 'error', error: { type: 'permission_error', code: 'content_blocked', message: expect.stringContaining('deny_list') } });
    expect(res.headers.get('x-risk-blocked')).toBe('true');
    expect(anthropic.received).toHaveLength(0);
  }

  describe('chat completions input', () => {
    it.each(CHAT_INPUT)('%s', async (_label, build) => {
      const clean = await sendChat(build(CLEAN));
      expect(clean.status).toBe(200);
      expect(openai.received).toHaveLength(1);
      openai.received.length = 0;
      expectChatInputBlocked(await sendChat(build(TERM)));
    });
  });

  describe('chat completions output', () => {
    it.each(CHAT_OUTPUT_JSON)('%s (non-streaming)', async (_label, message) => {
      openai.message = message(CLEAN);
      const clean = await sendChat(chat([user('hi')]));
      expect(clean.status).toBe(200);
      expect(clean.text).toContain(CLEAN);
      openai.received.length = 0;

      openai.message = message(TERM);
      const res = await sendChat(chat([user('hi')]));
      expect(res.status).toBe(403);
      expect(res.json.error).toMatchObject({ type: 'security_block', code: 'output_blocked', message: expect.stringContaining('deny_list') });
      expect(res.text).not.toContain('zebra');
      expect(openai.received).toHaveLength(1);
    });

    it.each(CHAT_OUTPUT_STREAM)('%s', async (_label, deltas) => {
      openai.deltas = deltas(CLEAN);
      const clean = await sendChat(chat([user('hi')], { stream: true }));
      expect(clean.status).toBe(200);
      expect(clean.text).toContain('"finish_reason":"stop"');
      expect(clean.text.endsWith('data: [DONE]\n\n')).toBe(true);

      openai.deltas = deltas(TERM);
      const res = await sendChat(chat([user('hi')], { stream: true }));
      expect(res.status).toBe(200); // the stream had begun: the block is its final event
      for (const part of ['zebra', 'quartz']) expect(res.text).not.toContain(part);
      expect(res.text).toContain('"finish_reason":"content_filter"');
      expect(res.text.endsWith('data: [DONE]\n\n')).toBe(true);
      expect(res.text).not.toContain('"finish_reason":"stop"');
    });
  });

  describe('messages (sensor) input', () => {
    it.each(MESSAGES_INPUT)('%s', async (_label, build) => {
      const clean = await sendMessages(build(CLEAN));
      expect(clean.status).toBe(200);
      expect(anthropic.received).toHaveLength(1);
      anthropic.received.length = 0;
      expectSensorBlocked(await sendMessages(build(TERM)));
    });
  });

  describe('evasion by formatting', () => {
    it.each(EVASIONS)('chat completions: %s', async (_label, variant) => {
      expectChatInputBlocked(await sendChat(chat([user(`Tell me about ${variant} please`)])));
    });

    it.each(EVASIONS)('sensor: %s', async (_label, variant) => {
      expectSensorBlocked(await sendMessages(msgs([toolUse({ path: '/a' }), toolResult(`contents: ${variant}`)])));
    });

    it.each(EVASIONS)('chat completions output stream: %s', async (_label, variant) => {
      openai.deltas = [{ content: PREAMBLE }, ...split3(variant).map((p) => ({ content: p }))];
      const res = await sendChat(chat([user('hi')], { stream: true }));
      expect(res.text).toContain('"finish_reason":"content_filter"');
      expect(res.text.toLowerCase()).not.toContain('zeb');
    });

    it('JSON escapes inside tool-call arguments (the model and the tool both read the decoded text)', async () => {
      const escaped = '{"query":"\\u007aebra-quartz\\u002d77"}';
      expect(JSON.parse(escaped)).toEqual({ query: TERM });
      expectChatInputBlocked(await sendChat(chat([user('x'), { role: 'assistant', content: null, tool_calls: [call(escaped)] }, { role: 'tool', tool_call_id: 'call_1', content: 'ok' }])));
    });
  });
});
