import { createServer } from 'node:http';

/**
 * A fast fake upstream for benchmarks, run in its own process: OpenAI chat completions (JSON) and
 * messages, each JSON or SSE (`"stream":true`: `STREAM_EVENTS` text events `STREAM_GAP_MS` apart, each
 * carrying `STREAM_EVENT_CHARS` characters of harmless prose; a chat stream ends with `data: [DONE]`).
 * Prints its port on stdout.
 */
const STREAM_EVENTS = Number(process.env.STREAM_EVENTS ?? 10);
const STREAM_GAP_MS = Number(process.env.STREAM_GAP_MS ?? 0);
const STREAM_EVENT_CHARS = Number(process.env.STREAM_EVENT_CHARS ?? 24);

const chat = JSON.stringify({
  id: 'chatcmpl-bench', object: 'chat.completion', created: 1763800000, model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'A short and harmless answer from the benchmark upstream.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 250, completion_tokens: 12, total_tokens: 262 },
});
const message = JSON.stringify({
  id: 'msg_bench', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'A short and harmless answer.' }], stop_reason: 'end_turn', usage: { input_tokens: 250, output_tokens: 8 },
});
const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
/**
 * Harmless prose, cut to STREAM_EVENT_CHARS per event (event `i` numbered, so every stream event differs).
 * STREAM_NUMBERED=0: no numbers (event `i` starts i × 7 characters into the prose instead): a number
 * is held until 128 characters follow it (adaptive release, detection/stream-release.ts), so the
 * numbered events measure the fixed hold-back and these the release of plain prose.
 */
const PROSE = 'The answer continues with a plain and harmless sentence about gardening and the weather. ';
const NUMBERED = process.env.STREAM_NUMBERED !== '0';
const PROSE_RUN = PROSE.repeat(Math.ceil(STREAM_EVENT_CHARS / PROSE.length) + 2);
const chatText = (i: number) =>
  NUMBERED
    ? `${i} ${PROSE.repeat(Math.ceil(STREAM_EVENT_CHARS / PROSE.length) + 1)}`.slice(0, STREAM_EVENT_CHARS)
    : PROSE_RUN.slice((i * 7) % PROSE.length, ((i * 7) % PROSE.length) + STREAM_EVENT_CHARS);
const chatChunk = (delta: Record<string, unknown>, finish: string | null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1763800000, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** Writes `count` events (`event(i)`, i from 1) `gapMs` apart, then `last`. */
function streamEvents(res: import('node:http').ServerResponse, { count, gapMs }: { count: number; gapMs: number }, event: (i: number) => string, last: string): void {
  let i = 0;
  const next = () => {
    if (res.destroyed) return;
    if (i++ >= count) {
      res.end(last);
      return;
    }
    res.write(event(i));
    if (gapMs > 0) setTimeout(next, gapMs);
    else setImmediate(next);
  };
  next();
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const stream = Buffer.concat(chunks).includes('"stream":true');
    if (req.url?.endsWith('/chat/completions')) {
      if (!stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(chat);
      }
      // A chat stream's `max_tokens`, when given, is its number of text events (else STREAM_EVENTS), and
      // `metadata.gap_ms` the milliseconds between them (else STREAM_GAP_MS).
      const asked = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { max_tokens?: number; metadata?: { gap_ms?: string } };
      const gapMs = asked.metadata?.gap_ms === undefined ? STREAM_GAP_MS : Number(asked.metadata.gap_ms);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chatChunk({ role: 'assistant', content: '' }, null));
      return streamEvents(res, { count: asked.max_tokens ?? STREAM_EVENTS, gapMs }, (i) => chatChunk({ content: chatText(i) }, null), `${chatChunk({}, 'stop')}data: [DONE]\n\n`);
    }
    if (!stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(message);
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sse('message_start', { type: 'message_start', message: { id: 'msg_bench', type: 'message', role: 'assistant', content: [] } }));
    streamEvents(
      res,
      { count: STREAM_EVENTS, gapMs: STREAM_GAP_MS },
      (i) => sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: chatText(i) } }),
      sse('message_stop', { type: 'message_stop' }),
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`PORT ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
