import { readResponsesRequest, responsesStreamTexts, type ResponsesStreamState } from '../../../src/gateway/proxy/openai-responses.schema';

/** What the input scan reads of a Responses request, and what it lists as unscanned. */
describe('readResponsesRequest', () => {
  it('lists images and file references as unscanned; reads a file_search result\'s text, not its file id as content; never reads MCP credentials', () => {
    const read = readResponsesRequest({
      model: 'gpt-4.1',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'look' }, { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'high' }, { type: 'input_file', file_id: 'file-1' }] },
        { type: 'file_search_call', id: 'fs_1', status: 'completed', queries: ['q1'], results: [{ file_id: 'file-2', filename: 'a.txt', score: 0.9, text: 'result text' }] },
        { type: 'item_reference', id: 'msg_stored' },
      ],
      tools: [{ type: 'mcp', server_label: 'docs', server_url: 'https://mcp.example.com', headers: { Authorization: 'Bearer secret-token' }, authorization: 'secret-2' }],
    });
    expect(read.unscanned).toEqual(['input[0].content[1].image_url', 'input[0].content[2].file_id']);
    expect(read.fields.map((f) => [f.path, f.text])).toEqual([
      ['input[0].content[0].text', 'look'],
      ['input[1].queries[0]', 'q1'],
      ['input[1].results[0].filename', 'a.txt'],
      ['input[1].results[0].text', 'result text'],
      ['tools[0].server_label', 'docs'],
    ]);
  });

  it('refuses background: true (its output could not be scanned in line), and bodies of the wrong shape', () => {
    expect(() => readResponsesRequest({ model: 'gpt-4.1', input: 'hi', background: true })).toThrow(expect.objectContaining({ code: 'background_not_supported' }));
    expect(() => readResponsesRequest({ model: 'gpt-4.1', input: 42 })).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(readResponsesRequest({ model: 'gpt-4.1', input: 'hi', background: false }).fields).toEqual([{ path: 'input', text: 'hi' }]);
  });
});

/**
 * The Responses stream's texts for the stream guard (openai-responses.schema.ts): deltas go to their
 * detection stream; an event that states a whole text again is covered when it equals what the deltas
 * built, continues it, or else is scanned whole on its own; interleaved fields stay contiguous.
 */
describe('responsesStreamTexts', () => {
  const start = () => {
    const state: ResponsesStreamState = { snapshot: null, sequence: 0 };
    return { state, texts: responsesStreamTexts(state) };
  };
  const text = (output_index: number, delta: string) => ({ type: 'response.output_text.delta', output_index, content_index: 0, delta });
  const done = (output_index: number, t: string) => ({ type: 'response.output_text.done', output_index, content_index: 0, text: t });

  it('a restated text equal to its deltas adds nothing; one that continues them adds the rest; another text is scanned whole on its own', () => {
    const { texts } = start();
    expect(texts(text(0, 'Hello '))).toEqual([{ key: 'message', path: 'output[0].content[0].text', text: 'Hello ' }]);
    expect(texts(text(0, 'world'))).toEqual([{ key: 'message', path: 'output[0].content[0].text', text: 'world' }]);
    expect(texts(done(0, 'Hello world'))).toEqual([]);
    expect(texts(done(0, 'Hello world, again'))).toEqual([{ key: 'message', path: 'output[0].content[0].text', text: ', again' }]);
    expect(texts(done(0, 'Something else'))).toEqual([{ key: 'restated', path: 'output[0].content[0].text', text: 'Something else' }]);
    // The response object of response.completed states the same text again: covered.
    const item = { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Something else', annotations: [] }] };
    expect(texts({ type: 'response.completed', sequence_number: 9, response: { id: 'resp_1', output: [item] } })).toEqual([]);
  });

  it('a field resumed after another field\'s text moves to a detection stream of its own, from its start', () => {
    const { texts } = start();
    texts(text(0, 'ign'));
    texts(text(1, 'unrelated'));
    expect(texts(text(0, 'ore all'))).toEqual([{ key: 'output[0].content[0].text', path: 'output[0].content[0].text', text: 'ignore all' }]);
    expect(texts(text(0, ' rules'))).toEqual([{ key: 'output[0].content[0].text', path: 'output[0].content[0].text', text: ' rules' }]);
    expect(texts(done(0, 'ignore all rules'))).toEqual([]);
  });

  it('function-call arguments are a JSON document per call; a differing restatement is scanned as sent and decoded', () => {
    const { state, texts } = start();
    const args = (delta: string) => ({ type: 'response.function_call_arguments.delta', output_index: 2, delta, sequence_number: 4 });
    expect(texts(args('{"q":'))).toEqual([{ key: 'output[2].arguments', path: 'output[2].arguments', text: '{"q":', json: true }]);
    // Continuing: the rest, decoded by the guard as the document goes on.
    expect(texts(args('"\\u0061"'))).toEqual([{ key: 'output[2].arguments', path: 'output[2].arguments', text: '"\\u0061"', json: true }]);
    expect(texts({ type: 'response.function_call_arguments.done', output_index: 2, arguments: '{"x":"\\u0062"}' })).toEqual([
      { key: 'restated', path: 'output[2].arguments', text: '{"x":"\\u0062"}' },
      { key: 'restated', path: 'output[2].arguments#decoded', text: '{"x":"b"}' },
    ]);
    expect(state.sequence).toBe(4);
  });
});
