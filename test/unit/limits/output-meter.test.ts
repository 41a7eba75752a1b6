import { PassThrough, Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { OutputMeter } from '../../../src/gateway/limits/output-meter';
import type { WireApi } from '../../../src/gateway/limits/input-checks';

const chatChunk = (content: string | null, extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: content === null ? [] : [{ index: 0, delta: { content }, finish_reason: null }], ...extra })}\n\n`;
const msgEvent = (event: string, data: Record<string, unknown>) => `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`;

function meter(wire: WireApi, maxOutputTokens = 1000) {
  const done: number[] = [];
  const m = new OutputMeter({ wire, encoding: 'o200k_base', maxOutputTokens, onDone: (n) => done.push(n) });
  return { m, done };
}

async function collect(stream: Readable): Promise<string> {
  let out = '';
  stream.setEncoding('utf8');
  for await (const chunk of stream) out += chunk as string;
  return out;
}

/** A source emitting each piece separately (split mid-event on purpose). */
function source(pieces: string[]): Readable {
  return Readable.from(pieces.map((p) => Buffer.from(p)), { objectMode: false });
}

describe('output metering', () => {
  it('passes a chat stream through byte for byte and counts the upstream usage when sent', async () => {
    const events = [chatChunk('Hello'), chatChunk(' world'), chatChunk(null, { usage: { prompt_tokens: 3, completion_tokens: 42 } }), 'data: [DONE]\n\n'];
    const raw = events.join('');
    const { m, done } = meter('openai-chat');
    const out = await collect(m.wrap(source([raw.slice(0, 17), raw.slice(17, 80), raw.slice(80)]), 'text/event-stream'));
    expect(out).toBe(raw);
    expect(done).toEqual([42]);
  });

  it('counts the streamed deltas with the tokenizer when there is no usage chunk', async () => {
    const { m, done } = meter('openai-chat');
    await collect(m.wrap(source([chatChunk('Hello'), chatChunk(' world'), 'data: [DONE]\n\n']), 'text/event-stream; charset=utf-8'));
    expect(done).toEqual([2]);
  });

  it('cuts a chat stream that passes max_output_tokens with finish_reason "length" and [DONE], and closes the upstream', async () => {
    const { m, done } = meter('openai-chat', 3);
    const upstream = new PassThrough();
    const wrapped = m.wrap(upstream, 'text/event-stream');
    const reading = collect(wrapped);
    upstream.write(chatChunk('one'));
    upstream.write(chatChunk(' two three'));
    upstream.write(chatChunk(' four')); // 4 > 3: cut here
    upstream.write(chatChunk(' five'));
    const out = await reading;
    expect(upstream.destroyed).toBe(true);
    const datas = out.split('\n\n').filter(Boolean).map((e) => e.slice('data: '.length));
    expect(datas).toHaveLength(4);
    expect(out).not.toContain('four');
    const last = JSON.parse(datas[2]!);
    expect(last).toMatchObject({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'gpt-4o', choices: [{ index: 0, delta: {}, finish_reason: 'length' }] });
    expect(datas[3]).toBe('[DONE]');
    expect(done).toEqual([4]);
  });

  it('a stream exactly at max_output_tokens is not cut', async () => {
    const { m } = meter('openai-chat', 3);
    const out = await collect(m.wrap(source([chatChunk('one'), chatChunk(' two three'), 'data: [DONE]\n\n']), 'text/event-stream'));
    expect(out).not.toContain('"length"');
    expect(out).toContain('two three');
  });

  it('cuts a messages stream cleanly: open block stopped, stop_reason max_tokens, message_stop', async () => {
    const { m, done } = meter('messages', 2);
    const events = [
      msgEvent('message_start', { message: { id: 'msg_1', usage: { input_tokens: 5, output_tokens: 1 } } }),
      msgEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      msgEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hello' } }),
      msgEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: ' big world' } }),
      msgEvent('content_block_stop', { index: 0 }),
      msgEvent('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } }),
      msgEvent('message_stop', {}),
    ];
    const out = await collect(m.wrap(source(events), 'text/event-stream'));
    expect(out).not.toContain('big world');
    expect(out).toContain('Hello');
    const tail = out.split('\n\n').filter(Boolean).slice(-3);
    expect(tail[0]).toBe('event: content_block_stop\ndata: {"type":"content_block_stop","index":0}');
    expect(tail[1]).toContain('"stop_reason":"max_tokens"');
    expect(tail[2]).toBe('event: message_stop\ndata: {"type":"message_stop"}');
    expect(done).toEqual([3]);
  });

  it.each([
    ['CR-only', (e: string) => e.replace(/\n/g, '\r')],
    ['CRLF with a leading BOM', (e: string) => e.replace(/\n/g, '\r\n')],
  ])('meters and cuts a %s messages stream (the sensor\'s stream path) like an LF one', async (_name, frame) => {
    const { m, done } = meter('messages', 2);
    const events = [
      msgEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      msgEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hello' } }),
      msgEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: ' big world' } }),
      msgEvent('message_stop', {}),
    ].map(frame);
    const out = await collect(m.wrap(source([`\uFEFF${events[0]}`, ...events.slice(1)]), 'text/event-stream'));
    expect(out).toContain('Hello');
    expect(out).not.toContain('big world');
    expect(out).toContain('"stop_reason":"max_tokens"');
    expect(done).toEqual([3]);
  });

  it('counts a last event sent without its blank line, and passes CR-only streams through byte for byte', async () => {
    const raw = [chatChunk('Hello'), chatChunk(' world')].join('').replace(/\n/g, '\r') + `data: ${JSON.stringify({ choices: [], usage: { completion_tokens: 42 } })}`;
    const { m, done } = meter('openai-chat');
    const out = await collect(m.wrap(source([raw.slice(0, 33), raw.slice(33)]), 'text/event-stream'));
    expect(out).toBe(raw);
    expect(done).toEqual([42]);
  });

  it('uses the messages usage.output_tokens of an uncut stream', async () => {
    const { m, done } = meter('messages');
    await collect(m.wrap(source([
      msgEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hi' } }),
      msgEvent('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 17 } }),
    ]), 'text/event-stream'));
    expect(done).toEqual([17]);
  });

  it('counts a gzip-compressed stream from a decompressed copy without touching its bytes (never cut)', async () => {
    const raw = gzipSync(Buffer.from([chatChunk('Hello'), chatChunk(' world'), 'data: [DONE]\n\n'].join('')));
    const { m, done } = meter('openai-chat', 1);
    const out: Buffer[] = [];
    for await (const c of m.wrap(Readable.from([raw.subarray(0, 20), raw.subarray(20)]), 'text/event-stream', 'gzip')) out.push(c as Buffer);
    expect(Buffer.concat(out).equals(raw)).toBe(true);
    for (let i = 0; i < 50 && done.length === 0; i++) await new Promise((r) => setTimeout(r, 10)); // zlib finishes asynchronously
    expect(done).toEqual([2]);
  });

  it('counts whole JSON answers from usage, else from their text', () => {
    const a = meter('openai-chat');
    a.m.countJson(JSON.stringify({ choices: [{ message: { content: 'Hello world' } }], usage: { completion_tokens: 9 } }));
    expect(a.done).toEqual([9]);
    const b = meter('openai-chat');
    b.m.countJson(Buffer.from(JSON.stringify({ choices: [{ message: { content: 'Hello world' } }] })));
    expect(b.done).toEqual([2]);
    const c = meter('messages');
    c.m.countJson(gzipSync(JSON.stringify({ content: [{ type: 'text', text: 'Hello world' }], usage: { output_tokens: 11 } })), 'gzip');
    expect(c.done).toEqual([11]);
    const d = meter('messages');
    d.m.countJson('not json');
    d.m.finish(5);
    expect(d.done).toEqual([0]); // reported once
  });

  it('tees a JSON stream unchanged and counts it at its end', async () => {
    const body = JSON.stringify({ content: [{ type: 'text', text: 'Hello' }], usage: { output_tokens: 4 } });
    const { m, done } = meter('messages');
    expect(await collect(m.wrap(source([body.slice(0, 10), body.slice(10)]), 'application/json'))).toBe(body);
    expect(done).toEqual([4]);
  });
});
