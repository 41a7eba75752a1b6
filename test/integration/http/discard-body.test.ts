import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { discardBody } from '../../../src/shared/http/upstream';

/**
 * Why upstream bodies are discarded with discardBody: destroying an undici body that is still streaming
 * emits `error` (RequestAbortedError), an uncaught exception when nobody listens (the full fuzz run
 * ended with one). discardBody listens first.
 */
describe('discardBody', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: 1\n\n'); // and never ends
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('a plain destroy() of a streaming body emits an error event', async () => {
    const res = await request(url);
    const emitted = new Promise<Error>((resolve) => res.body.once('error', resolve));
    res.body.destroy();
    expect((await emitted) as Error & { code?: string }).toMatchObject({ code: 'UND_ERR_ABORTED' });
  });

  it('discardBody destroys it with a listener in place, so nothing is left unhandled', async () => {
    const res = await request(url);
    expect(res.body.listenerCount('error')).toBe(0);
    discardBody(res.body);
    expect(res.body.destroyed).toBe(true);
    expect(res.body.listenerCount('error')).toBeGreaterThan(0);
    await new Promise((r) => setImmediate(r));
    discardBody(res.body); // twice is harmless
  });
});
