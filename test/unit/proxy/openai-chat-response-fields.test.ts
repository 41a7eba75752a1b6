import { chunkTexts, responseFields } from '../../../src/gateway/proxy/openai-chat.schema';

/** Paths of the response fields a model writes beside its answer (reasoning, citations, legacy text). */
describe('chat-completions response fields beside the answer', () => {
  it('collects reasoning, reasoning details, every citation string and legacy text of a JSON response, with their paths', () => {
    const response = {
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'answer',
            reasoning_content: 'rc',
            reasoning: 'r',
            reasoning_details: [{ type: 'reasoning.encrypted', data: 'opaque' }, { type: 'reasoning.text', text: 't' }, { type: 'reasoning.summary', summary: 's' }],
            annotations: [{ type: 'url_citation', url_citation: { title: 'ti', url: 'https://e.x/', content: 'c', start_index: 0, end_index: 1 } }, { type: 'other' }],
          },
        },
        { index: 1, text: 'legacy', finish_reason: 'stop' },
      ],
    };
    expect(responseFields(response)).toEqual([
      { path: 'choices[0].message.content', text: 'answer' },
      { path: 'choices[0].message.reasoning_content', text: 'rc' },
      { path: 'choices[0].message.reasoning', text: 'r' },
      { path: 'choices[0].message.reasoning_details[1].text', text: 't' },
      { path: 'choices[0].message.reasoning_details[2].summary', text: 's' },
      { path: 'choices[0].message.annotations[0].url_citation.title', text: 'ti' },
      { path: 'choices[0].message.annotations[0].url_citation.url', text: 'https://e.x/' },
      { path: 'choices[0].message.annotations[0].url_citation.content', text: 'c' },
      { path: 'choices[1].text', text: 'legacy' },
    ]);
  });

  it('reads a reasoning summary given as a list of text parts', () => {
    const message = { role: 'assistant', content: null, reasoning_details: [{ type: 'reasoning.summary', summary: [{ type: 'summary_text', text: 'x' }] }] };
    expect(responseFields({ choices: [{ index: 0, message }] })).toEqual([{ path: 'choices[0].message.reasoning_details[0].summary[0].text', text: 'x' }]);
  });

  it('names streamed reasoning details by their index, and a legacy chunk by its choice', () => {
    const delta = { reasoning_content: 'a', reasoning_details: [{ type: 'reasoning.text', index: 3, text: 'b' }], annotations: [{ type: 'url_citation', url_citation: { title: 'c', url: 'u' } }] };
    expect(chunkTexts({ choices: [{ index: 1, delta }, { index: 2, text: 'd' }] })).toEqual([
      { choice: 1, path: 'choices[1].delta.reasoning_content', text: 'a' },
      { choice: 1, path: 'choices[1].delta.reasoning_details[3].text', text: 'b' },
      { choice: 1, path: 'choices[1].delta.annotations[0].url_citation.title', text: 'c' },
      { choice: 1, path: 'choices[1].delta.annotations[0].url_citation.url', text: 'u' },
      { choice: 2, path: 'choices[2].text', text: 'd' },
    ]);
  });
});
