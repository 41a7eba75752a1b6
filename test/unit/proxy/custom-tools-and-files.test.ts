import { chunkTexts, readChatRequest, responseFields, toolCallStreamKind } from '../../../src/gateway/proxy/openai-chat.schema';
import { decodeBase64, parseDataUrl } from '../../../src/shared/content/file-content';
import { AppError } from '../../../src/shared/errors';
import { boundedPaths } from '../../../src/shared/http/unscanned-content';
import { effectiveUnscannable } from '../../../src/shared/policy';
import { readMessagesRequest } from '../../../src/sensor/messages.schema';

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const chat = (messages: unknown[], extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', messages, ...extra });
const filePart = (file: Record<string, unknown>) => ({ type: 'file', file });
const userParts = (...parts: unknown[]) => chat([{ role: 'user', content: parts }]);

function fieldsOf(body: unknown) {
  const r = readChatRequest(body);
  return { fields: Object.fromEntries(r.fields.map((f) => [f.path, f.text])), unscanned: r.unscanned };
}

function thrown(f: () => unknown): AppError {
  try {
    f();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('did not throw');
}

describe('OpenAI custom tools', () => {
  it('reads a custom tool definition: name, description and every string of its grammar format', () => {
    const grammar = { type: 'grammar', grammar: { syntax: 'lark', definition: 'start: "SELECT " WORD\n%import common.WORD' } };
    const body = chat([{ role: 'user', content: 'hi' }], {
      tools: [
        { type: 'custom', custom: { name: 'sql', description: 'Runs SQL', format: grammar } },
        { type: 'custom', custom: { name: 'free', format: { type: 'text' } } },
      ],
      tool_choice: { type: 'custom', custom: { name: 'sql' } },
    });
    expect(readChatRequest(body).fields.filter((f) => f.path.startsWith('tools'))).toEqual([
      { path: 'tools[0].custom.name', text: 'sql' },
      { path: 'tools[0].custom.description', text: 'Runs SQL' },
      { path: 'tools[0].custom.format.type', text: 'grammar' },
      { path: 'tools[0].custom.format.grammar.syntax', text: 'lark' },
      { path: 'tools[0].custom.format.grammar.definition', text: grammar.grammar.definition },
      { path: 'tools[1].custom.name', text: 'free' },
      { path: 'tools[1].custom.format.type', text: 'text' },
    ]);
  });

  it('reads custom tool calls in assistant history (name and free-form input, not JSON)', () => {
    const body = chat([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'custom', custom: { name: 'sql', input: 'SELECT secret FROM t' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'rows' },
    ]);
    const { fields } = fieldsOf(body);
    expect(fields['messages[1].tool_calls[0].custom.name']).toBe('sql');
    expect(fields['messages[1].tool_calls[0].custom.input']).toBe('SELECT secret FROM t');
  });

  it('reads custom tool call input in a response and in stream deltas (a plain text stream of its own)', () => {
    const message = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'custom', custom: { name: 'sql', input: 'DROP TABLE x' } }] };
    expect(responseFields({ choices: [{ index: 0, message }] })).toEqual([
      { path: 'choices[0].message.tool_calls[0].custom.name', text: 'sql' },
      { path: 'choices[0].message.tool_calls[0].custom.input', text: 'DROP TABLE x' },
    ]);
    const chunk = { choices: [{ index: 0, delta: { tool_calls: [{ index: 2, custom: { input: 'DROP ' } }] } }] };
    expect(chunkTexts(chunk)).toEqual([{ choice: 0, text: 'DROP ', path: 'choices[0].delta.tool_calls[2].custom.input' }]);
    expect(toolCallStreamKind('choices[0].delta.tool_calls[2].custom.input')).toBe('text');
    expect(toolCallStreamKind('choices[0].delta.tool_calls[2].function.arguments')).toBe('json');
    expect(toolCallStreamKind('choices[0].delta.content')).toBeNull();
  });
});

describe('OpenAI file parts and binary content', () => {
  it.each([
    ['a text/plain data URL', { file_data: `data:text/plain;base64,${b64('hello file')}`, filename: 'a.bin' }],
    ['a markdown data URL with charset', { file_data: `data:text/markdown; charset=utf-8;base64,${b64('hello file')}` }],
    ['application/json', { file_data: `data:application/json;base64,${b64('hello file')}` }],
    ['bare base64 with a .csv filename', { file_data: b64('hello file'), filename: 'data.csv' }],
    ['octet-stream with an .html filename', { file_data: `data:application/octet-stream;base64,${b64('hello file')}`, filename: 'p.HTML' }],
    ['bare base64, no filename, UTF-8 bytes (sniffed)', { file_data: b64('hello file') }],
    ['a non-base64 data URL', { file_data: 'data:text/plain,hello%20file' }],
  ])('decodes and scans %s', (_label, file) => {
    const { fields, unscanned } = fieldsOf(userParts(filePart(file)));
    expect(fields['messages[0].content[0].file.file_data#decoded']).toBe('hello file');
    expect(unscanned).toEqual([]);
  });

  it.each([
    ['a PDF data URL', { file_data: `data:application/pdf;base64,${b64('%PDF-1.7 text')}`, filename: 'x.txt' }],
    ['an image data URL', { file_data: `data:image/png;base64,${b64('not really png')}` }],
    ['bare base64 with a .pdf filename', { file_data: b64('plain words'), filename: 'report.pdf' }],
    ['sniffed bytes starting with %PDF-', { file_data: b64('%PDF-1.4 all ascii') }],
    ['sniffed bytes that are not UTF-8', { file_data: b64(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff])) }],
    ['sniffed bytes with a NUL', { file_data: b64(Buffer.from('a\u0000b')) }],
    ['text/plain that is not UTF-8', { file_data: `data:text/plain;base64,${b64(Buffer.from([0x68, 0xe9, 0x6c]))}` }],
    ['text/plain in another charset', { file_data: `data:text/plain;charset=utf-16le;base64,${b64('hi')}` }],
  ])('reports %s as unscanned content', (_label, file) => {
    const { fields, unscanned } = fieldsOf(userParts(filePart(file)));
    expect(Object.keys(fields).filter((p) => p.endsWith('#decoded'))).toEqual([]);
    expect(unscanned).toEqual(['messages[0].content[0].file.file_data']);
  });

  it('reports images, audio, file references and unknown part kinds by their JSON path, and still reads the filename', () => {
    const body = userParts(
      { type: 'text', text: 'look' },
      { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${b64('x')}` } },
      { type: 'input_audio', input_audio: { data: b64('x'), format: 'wav' } },
      filePart({ file_id: 'file-abc', filename: 'notes.txt' }),
      { type: 'video_url', video_url: { url: 'https://e.x/v.mp4' } },
    );
    const { fields, unscanned } = fieldsOf(body);
    expect(unscanned).toEqual([
      'messages[0].content[1].image_url',
      'messages[0].content[2].image_url',
      'messages[0].content[3].input_audio',
      'messages[0].content[4].file.file_id',
      'messages[0].content[5]',
    ]);
    expect(fields['messages[0].content[4].file.filename']).toBe('notes.txt');
  });

  it.each([
    ['a character outside the alphabet', 'aGVsbG8*'],
    ['padding in the middle', 'aGV=sbG8'],
    ['too much padding', 'aGVsbA==='],
    ['a length that cannot be base64', 'aGVsb'],
  ])('refuses invalid base64 (%s) with 400 invalid_base64 naming the field', (_label, data) => {
    const err = thrown(() => readChatRequest(userParts(filePart({ file_data: `data:text/plain;base64,${data}` }))));
    expect(err).toMatchObject({ status: 400, type: 'invalid_request', code: 'invalid_base64' });
    expect(err.message).toContain('messages[0].content[0].file.file_data');
  });

  it('accepts unpadded, URL-safe and line-wrapped base64', () => {
    expect(decodeBase64('aGVsbG8', 'p').toString()).toBe('hello');
    expect(decodeBase64('aGVs\r\nbG8=', 'p').toString()).toBe('hello');
    expect(decodeBase64('-_8', 'p')).toEqual(Buffer.from([0xfb, 0xff]));
  });

  it('parses data URLs', () => {
    expect(parseDataUrl('data:text/csv;base64,YQ==')).toEqual({ mediaType: 'text/csv', base64: true, data: 'YQ==' });
    expect(parseDataUrl('DATA:,a%20b')).toEqual({ mediaType: '', base64: false, data: 'a%20b' });
    expect(parseDataUrl('YQ==')).toBeNull();
  });
});

describe('messages API documents and images', () => {
  const msgs = (content: unknown[]) => ({ model: 'claude', max_tokens: 5, messages: [{ role: 'user', content }] });
  const doc = (source: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'document', source, ...extra });

  it('decodes a base64 text document (also inside a tool_result) and reports what it cannot read', () => {
    const body = msgs([
      doc({ type: 'base64', media_type: 'text/plain', data: b64('doc text') }),
      doc({ type: 'base64', media_type: 'application/pdf', data: b64('%PDF-1.7') }),
      doc({ type: 'url', url: 'https://e.x/a.pdf' }),
      doc({ type: 'file', file_id: 'file_1' }),
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64('x') } },
      { type: 'tool_result', tool_use_id: 't', content: [doc({ type: 'base64', media_type: 'text/csv', data: b64('a,b') }), { type: 'image', source: { type: 'url', url: 'https://e.x/i.png' } }] },
      { type: 'container_upload', file_id: 'file_2' },
    ]);
    const r = readMessagesRequest(body);
    expect(r.fields.filter((f) => f.path.endsWith('#decoded'))).toEqual([
      { path: 'messages[0].content[0].source.data#decoded', text: 'doc text' },
      { path: 'messages[0].content[5].content[0].source.data#decoded', text: 'a,b' },
    ]);
    expect(r.texts).toContain('doc text');
    expect(r.unscanned).toEqual([
      'messages[0].content[1].source.data',
      'messages[0].content[2].source',
      'messages[0].content[3].source',
      'messages[0].content[4].source',
      'messages[0].content[5].content[1].source',
      'messages[0].content[6].file_id',
    ]);
  });

  it('refuses a base64 document that is not base64', () => {
    const err = thrown(() => readMessagesRequest(msgs([doc({ type: 'base64', media_type: 'text/plain', data: 'not base64!' })])));
    expect(err).toMatchObject({ status: 400, code: 'invalid_base64' });
  });
});

describe('unscannable: the effective default and the bounded path lists', () => {
  const d = (action: 'block' | 'log' | 'alert') => [{ action }];
  it.each([
    [null, [], [], [], 'allow'],
    [null, d('log'), d('alert'), d('log'), 'allow'],
    [null, d('block'), [], [], 'block'],
    [null, [], d('block'), [], 'block'],
    [null, [], [], d('block'), 'block'],
    ['allow', d('block'), [], [], 'allow'],
    ['block', [], [], [], 'block'],
  ] as const)('set %s, input %j, output %j, custom %j → %s', (unscannable, inputDetectors, outputDetectors, customDetectors, expected) => {
    expect(effectiveUnscannable({ unscannable, inputDetectors, outputDetectors, customDetectors })).toBe(expected);
  });

  it('keeps whole paths within the limit and counts the rest', () => {
    const paths = Array.from({ length: 10 }, (_, i) => `messages[${i}].content[0].image_url`);
    expect(boundedPaths(paths, 10_000)).toEqual(paths);
    const cut = boundedPaths(paths, 100);
    expect(cut.join(',').length).toBeLessThanOrEqual(100);
    expect(cut.slice(0, -1)).toEqual(paths.slice(0, cut.length - 1));
    expect(cut[cut.length - 1]).toBe(`+${paths.length - (cut.length - 1)}`);
    expect(boundedPaths(['x'.repeat(50)], 10)).toEqual(['+1']);
  });
});

describe('messages API: attachments nested deeper than the block-by-block walk', () => {
  it('reports an image and decodes a text document inside a subtree scanned as JSON text', () => {
    let content: unknown[] = [
      { type: 'image', source: { type: 'url', url: 'https://e.x/i.png' } },
      { type: 'document', source: { type: 'base64', media_type: 'text/plain', data: b64('deep text') } },
    ];
    for (let i = 0; i < 12; i++) content = [{ type: 'tool_result', tool_use_id: `t${i}`, content }];
    const r = readMessagesRequest({ model: 'claude', max_tokens: 5, messages: [{ role: 'user', content }] });
    const nested = 'messages[0].content' + '[0].content'.repeat(12);
    expect(r.unscanned).toEqual([`${nested}[0].source`]);
    expect(r.fields).toContainEqual({ path: `${nested}[1].source.data#decoded`, text: 'deep text' });
  });
});
