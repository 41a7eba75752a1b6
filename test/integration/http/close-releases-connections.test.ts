import { connect, type AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { createHttpApp } from '../../../src/shared/http/create-app';
import { createLogger } from '../../../src/shared/logger';

/**
 * close() (what SIGTERM runs) waits for every open connection. A keep-alive connection busy when it starts
 * must be closed once its answer is out, not kept for fastify's keepAliveTimeout (72 s): that held every
 * replica's shutdown until SHUTDOWN_TIMEOUT_MS ran out (test/e2e/scale-out.test.ts, part d). The default
 * keepAliveTimeout is kept here, so without the release close() outlives the test's timeout.
 */
async function heldApp(answer: 'json' | 'stream') {
  const app = createHttpApp({ logger: createLogger({ level: 'silent' }), bodyLimitBytes: 1024, envelope: 'standard' });
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const inFlight = new Promise<void>((r) => (entered = r));
  app.get('/held', async (_request, reply) => {
    if (answer === 'json') {
      entered();
      await held;
      return { ok: true };
    }
    // Headers and a first chunk go out before close() starts; the rest after it.
    const body = new PassThrough();
    body.write('first ');
    void held.then(() => body.end('last'));
    setImmediate(entered);
    return reply.type('text/plain').send(body);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const socket = connect(port, '127.0.0.1');
  const received: Buffer[] = [];
  socket.on('data', (c: Buffer) => received.push(c));
  const socketClosed = new Promise<void>((r) => socket.once('close', () => r()));
  socket.write('GET /held HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
  await inFlight;
  return { app, release, socketClosed, text: () => Buffer.concat(received).toString('utf8') };
}

describe('close() with a keep-alive connection busy when it starts', () => {
  it('a JSON answer finished during close says Connection: close; the server closes the connection and close() resolves', async () => {
    const { app, release, socketClosed, text } = await heldApp('json');
    const closed = app.close();
    await new Promise((r) => setTimeout(r, 50)); // close() has begun; the connection is busy, so kept
    release();
    await socketClosed; // closed by the server, not by us
    await closed;
    const [head, body] = text().split('\r\n\r\n') as [string, string];
    expect(head.startsWith('HTTP/1.1 200')).toBe(true);
    expect(head.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(body)).toEqual({ ok: true });
  });

  it('a stream whose headers went out before close ends whole; then the idle connection is closed and close() resolves', async () => {
    const { app, release, socketClosed, text } = await heldApp('stream');
    const closed = app.close();
    await new Promise((r) => setTimeout(r, 50));
    release();
    await socketClosed;
    await closed;
    expect(text().startsWith('HTTP/1.1 200')).toBe(true);
    expect(text().toLowerCase()).toContain('connection: keep-alive'); // sent before close(): it could not say otherwise
    expect(text()).toMatch(/first [\s\S]*last/);
    expect(text().trimEnd().endsWith('0')).toBe(true); // the chunked body's terminating chunk: complete
  });
});
