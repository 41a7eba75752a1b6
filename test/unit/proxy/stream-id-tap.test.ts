import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { tapStreamId } from '../../../src/gateway/proxy/stream-id-tap';

/** The Responses route's stream tap (stream-id-tap.ts): the first id an event names, recorded before that event passes. */
const events = [
  'event: response.created\ndata: {"type":"response.created","response":{"id":"resp_1","object":"response"}}\n\n',
  'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"Hi"}\n\n',
  'event: response.completed\ndata: {"type":"response.completed","response":{"id":"resp_1"}}\n\n',
];
const idOf = (e: unknown) => ((e as { response?: { id?: unknown } }).response?.id as string | undefined) ?? null;

/** Reads the tapped stream; `early`: the bytes that came out before the record settled. */
async function run(body: Readable, encoding = '') {
  const recorded: string[] = [];
  let settled = false;
  // A write that takes a while: the tap must hold the stream meanwhile.
  const record = (id: string) => {
    recorded.push(id);
    return new Promise<void>((resolve) => setTimeout(resolve, 20)).then(() => {
      settled = true;
    });
  };
  const out = tapStreamId(body, encoding, idOf, record);
  const chunks: Buffer[] = [];
  let early = 0;
  for await (const c of out) {
    chunks.push(Buffer.from(c as Buffer));
    if (!settled) early += (c as Buffer).length;
  }
  return { recorded, bytes: Buffer.concat(chunks), early, settled };
}

describe('tapStreamId', () => {
  it('records the first id (split across chunks) and releases nothing from its event on until the record settled; bytes unchanged', async () => {
    const text = events.join('');
    const end = events[0]!.length;
    const cut = [text.slice(0, 40), text.slice(40, end + 10), text.slice(end + 10)];
    const { recorded, bytes, early } = await run(Readable.from(cut.map((c) => Buffer.from(c))));
    expect(recorded).toEqual(['resp_1']);
    expect(bytes.toString()).toBe(text);
    // The first chunk holds no whole event: it passes; the one completing response.created waits for the record.
    expect(early).toBe(40);
  });

  it('a compressed stream: the id read from a decompressed copy, the bytes passed unchanged, the end held until recorded', async () => {
    const gz = zlib.gzipSync(Buffer.from(events.join('')));
    const { recorded, bytes, settled } = await run(Readable.from([gz.subarray(0, 30), gz.subarray(30)]), 'gzip');
    expect(recorded).toEqual(['resp_1']);
    expect(bytes.equals(gz)).toBe(true);
    expect(settled).toBe(true);
  });

  it('a stream naming no id, or not JSON, passes unchanged with nothing recorded', async () => {
    const text = 'data: not json\n\ndata: {"type":"error","error":{"message":"x"}}\n\ndata: [DONE]\n\n';
    const { recorded, bytes } = await run(Readable.from([Buffer.from(text)]));
    expect(recorded).toEqual([]);
    expect(bytes.toString()).toBe(text);
  });
});
