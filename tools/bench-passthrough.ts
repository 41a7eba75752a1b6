import { createServer } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Agent, request } from 'undici';

/**
 * The floor of the traffic-path benchmark: the least any Node.js proxy does, run in its own process.
 * It reads the request body, sends it to `UPSTREAM` with undici (keep-alive pool) and returns the
 * upstream's status and body (piped, so streams flow chunk by chunk): no authentication, no policy, no detection, no gRPC, no audit, no
 * logging. What it adds to a direct call bounds from below what a scanning gateway on the same runtime
 * can add. Prints its port on stdout.
 */
const UPSTREAM = process.env.UPSTREAM ?? 'http://127.0.0.1:8080';
const agent = new Agent({ connections: 128 });

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    request(`${UPSTREAM}${req.url ?? '/'}`, {
      method: 'POST',
      headers: { 'content-type': req.headers['content-type'] ?? 'application/json', authorization: req.headers.authorization ?? '' },
      body: Buffer.concat(chunks),
      dispatcher: agent,
    })
      .then((up) => {
        // Piped, not buffered: a streamed (SSE) answer goes out chunk by chunk, as from any proxy.
        res.writeHead(up.statusCode, { 'content-type': String(up.headers['content-type'] ?? 'application/json') });
        pipeline(up.body, res).catch(() => res.destroy());
      })
      .catch(() => {
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"upstream failed","type":"upstream_error","code":"bad_gateway"}}');
      });
  });
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`PORT ${typeof address === 'object' && address ? address.port : 0}\n`);
});
