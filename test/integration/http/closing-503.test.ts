import { connect, type AddressInfo } from 'node:net';
import { createHttpApp } from '../../../src/shared/http/create-app';
import { createLogger } from '../../../src/shared/logger';

/**
 * A request that reaches a server while it is closing (here: sent on a keep-alive connection that close() kept
 * open because a request is in flight on it) gets the spec's envelope, not
 * fastify's own `{"error":"Service Unavailable","statusCode":503}`, with `Connection: close`.
 */
describe.each([
  ['standard', (body: any) => body] as const,
  ['messages', (body: any) => { expect(body.type).toBe('error'); return body; }] as const,
])('503 while closing (%s envelope)', (style, unwrap) => {
  it('answers a request that arrives during close() with 503 shutting_down in the envelope and closes the connection', async () => {
    const app = createHttpApp({ logger: createLogger({ level: 'silent' }), bodyLimitBytes: 1024, envelope: style });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inFlight = new Promise<void>((r) => (entered = r));
    app.get('/slow', async () => {
      entered();
      await held;
      return { ok: true };
    });
    app.get('/fast', async () => ({ ok: true }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;

    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (c: Buffer) => received.push(c));
    const ended = new Promise<void>((r) => socket.once('close', () => r()));
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await inFlight;
    const closed = app.close();
    await new Promise((r) => setTimeout(r, 50)); // close() has begun (preClose ran); the connection is busy, so kept
    socket.write('GET /fast HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => setTimeout(r, 50));
    release();
    await Promise.race([ended, new Promise((_, reject) => setTimeout(() => reject(new Error('connection not closed')), 5000))]);
    await closed;
    socket.destroy();

    const text = Buffer.concat(received).toString('utf8');
    const second = text.slice(text.indexOf('HTTP/1.1', 1));
    expect(text.startsWith('HTTP/1.1 200')).toBe(true);
    expect(second.startsWith('HTTP/1.1 503')).toBe(true);
    const [head, body] = second.split('\r\n\r\n') as [string, string];
    expect(head.toLowerCase()).toContain('connection: close');
    expect(head.toLowerCase()).toContain('retry-after: 1');
    expect(head.toLowerCase()).toMatch(/content-type: application\/json/);
    const parsed = unwrap(JSON.parse(body));
    expect(parsed.error).toEqual({
      message: expect.any(String), type: 'service_unavailable', code: 'shutting_down', details: { retry_after: 1 },
    });
    expect(body).not.toContain('statusCode');
  });
});
