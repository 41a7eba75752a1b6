import { chunkTexts, readChatRequest, responseFields } from '../../../src/gateway/proxy/openai-chat.schema';
import { joinFields } from '../../../src/shared/explain/field-layout';
import { readMessagesRequest } from '../../../src/sensor/messages.schema';

/** Where `needle` is, as the gateway reports it: the joined text's offsets located back in their field. */
function locateNeedle(fields: ReturnType<typeof readChatRequest>['fields'], needle: string) {
  const { text, layout } = joinFields(fields);
  const at = text.indexOf(needle);
  expect(at).toBeGreaterThanOrEqual(0);
  return layout.locate(at, at + needle.length);
}

/** Reads the JSON value at a path like `messages[1].content[0].text` from a parsed body. */
function valueAt(body: unknown, path: string): unknown {
  const keys = path.replace(/\[(\d+)\]/g, '.$1').split('.');
  return keys.reduce<unknown>((v, k) => (v as Record<string, unknown>)[k], body);
}

describe('chat completions request: every text with its JSON path', () => {
  const body = {
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: [{ type: 'text', text: 'first part' }, { type: 'image_url', image_url: { url: 'x' } }, { type: 'text', text: 'mail me at jane@acme.test' }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'lookup', arguments: '{"q":"\\u0069gnore"}' } }] },
      { role: 'tool', tool_call_id: 't1', content: 'result text SECRET-7' },
    ],
    tools: [{ type: 'function', function: { name: 'lookup', description: 'Looks up DESC-MARK', parameters: { type: 'object' } } }],
  };

  it('collects paths for messages, content parts, tool calls (raw and decoded) and tool definitions', () => {
    const { fields, texts } = readChatRequest(body);
    expect(fields.map((f) => f.path)).toEqual([
      'messages[0].content',
      'messages[1].content[0].text',
      'messages[1].content[2].text',
      'messages[2].tool_calls[0].function.name',
      'messages[2].tool_calls[0].function.arguments',
      'messages[2].tool_calls[0].function.arguments#decoded',
      'messages[3].content',
      'tools[0].function.name',
      'tools[0].function.description',
      'tools[0].function.parameters',
    ]);
    expect(texts).toEqual(fields.map((f) => f.text));
    for (const f of fields) {
      if (f.path.endsWith('#decoded') || f.path.endsWith('.parameters')) continue;
      expect(valueAt(body, f.path)).toBe(f.text);
    }
    expect(fields.find((f) => f.path.endsWith('#decoded'))?.text).toBe('{"q":"ignore"}');
  });

  it('maps a joined-text span back to the field and offsets of a multi-message conversation', () => {
    const { fields } = readChatRequest(body);
    expect(locateNeedle(fields, 'jane@acme.test')).toEqual([{ path: 'messages[1].content[2].text', start: 11, end: 25 }]);
    expect(locateNeedle(fields, 'SECRET-7')).toEqual([{ path: 'messages[3].content', start: 12, end: 20 }]);
    expect(locateNeedle(fields, 'DESC-MARK')).toEqual([{ path: 'tools[0].function.description', start: 9, end: 18 }]);
  });
});

describe('chat completions response and stream paths', () => {
  it('names choices by position for a whole response', () => {
    const fields = responseFields({
      choices: [
        { index: 0, message: { role: 'assistant', content: 'one' } },
        { index: 1, message: { role: 'assistant', content: null, tool_calls: [{ function: { name: 'f', arguments: '{}' } }], refusal: 'no' } },
      ],
    });
    expect(fields).toEqual([
      { path: 'choices[0].message.content', text: 'one' },
      { path: 'choices[1].message.refusal', text: 'no' },
      { path: 'choices[1].message.tool_calls[0].function.name', text: 'f' },
      { path: 'choices[1].message.tool_calls[0].function.arguments', text: '{}' },
    ]);
  });

  it('names stream pieces by choice index and tool-call index', () => {
    const pieces = chunkTexts({
      choices: [
        { index: 1, delta: { content: 'hi' } },
        { index: 0, delta: { tool_calls: [{ index: 2, function: { arguments: '{"a"' } }] } },
      ],
    });
    expect(pieces).toEqual([
      { choice: 1, text: 'hi', path: 'choices[1].delta.content' },
      { choice: 0, text: '{"a"', path: 'choices[0].delta.tool_calls[2].function.arguments' },
    ]);
  });
});

describe('messages request (sensor): system, blocks, tool results, tools', () => {
  const body = {
    model: 'claude',
    system: [{ type: 'text', text: 'System rules here.' }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'hello' }, { type: 'text', text: 'call 020 7946 0958' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'u1', name: 'bash', input: { cmd: 'ls' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'u1', content: [{ type: 'text', text: 'file.txt' }] }] },
      { role: 'user', content: [{ type: 'custom_block', 'odd-key': 'odd value', nested: { note: 'deep' } }] },
      { role: 'user', content: 'plain string' },
    ],
    tools: [{ name: 'bash', description: 'Runs commands', input_schema: { type: 'object' } }],
  };

  it('collects paths for system blocks, text blocks, tool use / result, unknown blocks and tools', () => {
    const { fields } = readMessagesRequest(body);
    expect(fields.map((f) => f.path)).toEqual([
      'system[0].text',
      'messages[0].content[0].text',
      'messages[0].content[1].text',
      'messages[1].content[0].name',
      'messages[1].content[0].input',
      'messages[2].content[0].content[0].text',
      'messages[3].content[0]["odd-key"]',
      'messages[3].content[0].nested.note',
      'messages[4].content',
      'tools[0].name',
      'tools[0].description',
      'tools[0].input_schema',
    ]);
    expect(locateNeedle(fields, '020 7946 0958')).toEqual([{ path: 'messages[0].content[1].text', start: 5, end: 18 }]);
  });

  it('names a string system prompt `system`', () => {
    const { fields } = readMessagesRequest({ model: 'm', system: 'Be brief.', messages: [{ role: 'user', content: 'x' }] });
    expect(fields).toEqual([
      { path: 'system', text: 'Be brief.' },
      { path: 'messages[0].content', text: 'x' },
    ]);
  });
});
