import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { decodeBody, errorBodyFields, jsonStringFields } from '../../../src/gateway/proxy/output-scan';
import { messagesStreamTexts } from '../../../src/sensor/messages-response';

describe('decodeBody: an upstream body decoded to be scanned', () => {
  const text = '{"type":"error","error":{"message":"caf\u00e9 \ud83d\ude00"}}';
  it.each([
    ['identity', Buffer.from(text), 'identity'],
    ['none', Buffer.from(text), undefined],
    ['gzip', gzipSync(text), 'gzip'],
    ['deflate', deflateSync(text), 'deflate'],
    ['br', brotliCompressSync(text), 'br'],
    ['gzip then br', brotliCompressSync(gzipSync(text)), 'gzip, br'],
  ])('reads %s', (_name, raw, encoding) => {
    expect(decodeBody(raw, encoding, 1024).toString('utf8')).toBe(text);
  });

  it('refuses an encoding it cannot read, and a broken body, as 502 upstream_invalid', () => {
    expect(() => decodeBody(Buffer.from(text), 'zstd', 1024)).toThrow(expect.objectContaining({ code: 'upstream_invalid', status: 502 }));
    expect(() => decodeBody(Buffer.from('not gzip'), 'gzip', 1024)).toThrow(expect.objectContaining({ code: 'upstream_invalid', status: 502 }));
  });

  it('bounds what a small compressed body may expand to (502 upstream_too_large)', () => {
    const bomb = gzipSync(Buffer.alloc(10 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(20 * 1024);
    expect(() => decodeBody(bomb, 'gzip', 1024 * 1024)).toThrow(expect.objectContaining({ code: 'upstream_too_large', status: 502 }));
  });
});

describe('the texts of an upstream error body', () => {
  it('every string of a JSON body, by path; numbers, booleans and nulls carry none', () => {
    const body = JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'bad "x"', 'odd-key': ['a', 1, null, true] } });
    expect(errorBodyFields(body)).toEqual([
      { path: 'type', text: 'error' },
      { path: 'error.type', text: 'invalid_request_error' },
      { path: 'error.message', text: 'bad "x"' },
      { path: 'error["odd-key"][0]', text: 'a' },
    ]);
  });

  it('a body that is not JSON is one text; an empty one none', () => {
    expect(errorBodyFields('upstream connect error')).toEqual([{ path: 'body', text: 'upstream connect error' }]);
    expect(errorBodyFields('')).toEqual([]);
    expect(jsonStringFields('top', '')).toEqual([{ path: '$', text: 'top' }]);
  });
});

describe('messagesStreamTexts: which parts of a messages stream event carry text', () => {
  const texts = (event: unknown) => messagesStreamTexts(event).map(({ path, text, json }) => [path, text, json === true]);
  it('reads every delta kind of a block, by the block index; one detection stream for the message', () => {
    const delta = (d: unknown) => ({ type: 'content_block_delta', index: 2, delta: d });
    expect(texts(delta({ type: 'text_delta', text: 'a' }))).toEqual([['content[2].text', 'a', false]]);
    expect(texts(delta({ type: 'thinking_delta', thinking: 'b' }))).toEqual([['content[2].thinking', 'b', false]]);
    expect(texts(delta({ type: 'input_json_delta', partial_json: '{"q": "\\u00' }))).toEqual([['content[2].input', '{"q": "\\u00', true]]);
    expect(texts(delta({ type: 'citations_delta', citation: { type: 'char_location', cited_text: 'c', document_index: 0 } }))).toEqual([['content[2].citations.cited_text', 'c', false]]);
    expect(texts(delta({ type: 'signature_delta', signature: 'EqQB' }))).toEqual([]);
    expect(texts(delta({ type: 'future_delta', body: 'd' }))).toEqual([['content[2].delta.body', 'd', false]]);
    expect(new Set(messagesStreamTexts(delta({ type: 'text_delta', text: 'a' })).map((t) => t.key))).toEqual(new Set(['message']));
  });

  it('reads blocks that start with content, upstream error events and unknown events; nothing in framing events', () => {
    expect(texts({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't', name: 'note', input: { q: 'x' } } })).toEqual([
      ['content[0].name', 'note', false],
      ['content[0].input', '{"q":"x"}', false],
      ['content[0].input.q', 'x', false],
    ]);
    expect(texts({ type: 'error', error: { type: 'overloaded_error', message: 'm' } })).toEqual([
      ['error.type', 'overloaded_error', false],
      ['error.message', 'm', false],
    ]);
    expect(texts({ type: 'future_event', note: 'n', id: 'opaque' })).toEqual([['event.note', 'n', false]]);
    for (const type of ['ping', 'content_block_stop', 'message_stop']) expect(texts({ type, index: 0 })).toEqual([]);
    expect(texts({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 3 } })).toEqual([]);
  });
});
