import { createServer } from 'node:http';

/**
 * A fast fake upstream for benchmarks, run in its own process: OpenAI chat completions (JSON) and
 * messages (JSON or SSE: `STREAM_EVENTS` events `STREAM_GAP_MS` apart). Prints its port on stdout.
 */
const STREAM_EVENTS = Number(process.env.STREAM_EVENTS ?? 10);
const STREAM_GAP_MS = Number(process.env.STREAM_GAP_MS ?? 0);

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

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.url?.endsWith('/chat/completions')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(chat);
    }
    const stream = Buffer.concat(chunks).includes('"stream":true');
    if (!stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(message);
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sse('message_start', { type: 'message_start', message: { id: 'msg_bench', type: 'message', role: 'assistant', content: [] } }));
    let i = 0;
    const next = () => {
      if (res.destroyed) return;
      if (i++ >= STREAM_EVENTS) {
        res.end(sse('message_stop', { type: 'message_stop' }));
        return;
      }
      res.write(sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `word${i} ` } }));
      if (STREAM_GAP_MS > 0) setTimeout(next, STREAM_GAP_MS);
      else setImmediate(next);
    };
    next();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`PORT ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
