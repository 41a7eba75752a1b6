import * as grpc from '@grpc/grpc-js';
import { grpcTimeout, UnaryChannel } from '../../../src/shared/grpc-unary';

/**
 * The lean unary gRPC client (src/shared/grpc-unary.ts) against a real grpc-js server on port 0:
 * answers, status and trailing metadata of errors, deadlines, size limits, and reconnecting after the
 * server went away. (The detection client's own tests in detection-server.test.ts run on it too.)
 */

const identity = (b: Buffer) => b;
const echoService: grpc.ServiceDefinition = {
  Echo: { path: '/test.Echo/Echo', requestStream: false, responseStream: false, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity },
  Fail: { path: '/test.Echo/Fail', requestStream: false, responseStream: false, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity },
  Hang: { path: '/test.Echo/Hang', requestStream: false, responseStream: false, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity },
};

async function startServer(port = 0): Promise<{ server: grpc.Server; port: number }> {
  const server = new grpc.Server();
  server.addService(echoService, {
    Echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => cb(null, Buffer.concat([Buffer.from('echo:'), call.request])),
    Fail: (_call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
      const metadata = new grpc.Metadata();
      metadata.set('x-error-code', 'text_too_large');
      cb({ code: grpc.status.INVALID_ARGUMENT, details: 'text is too large: 100% über', metadata });
    },
    Hang: () => undefined,
  });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return { server, port: bound };
}

const stop = (server: grpc.Server) => new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
const channelTo = (port: number, max = 1024 * 1024) =>
  new UnaryChannel({ address: `127.0.0.1:${port}`, maxSendMessageBytes: max, maxReceiveMessageBytes: max, keepaliveTimeMs: 30_000 });

describe('UnaryChannel (lean unary gRPC client)', () => {
  let server: grpc.Server;
  let port: number;
  let channel: UnaryChannel;
  beforeAll(async () => {
    ({ server, port } = await startServer());
    channel = channelTo(port);
  });
  afterAll(async () => {
    channel.close();
    await stop(server);
  });

  it('makes unary calls, many of them concurrently on one connection', async () => {
    expect((await channel.call('/test.Echo/Echo', Buffer.from('hi'), 2000)).toString()).toBe('echo:hi');
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => channel.call('/test.Echo/Echo', Buffer.from(String(i)), 5000)));
    expect(answers.map((a) => a.toString())).toEqual(Array.from({ length: 200 }, (_, i) => `echo:${i}`));
  });

  it('an empty message is a message', async () => {
    expect((await channel.call('/test.Echo/Echo', Buffer.alloc(0), 2000)).toString()).toBe('echo:');
  });

  it('rejects with the status, the decoded message and the trailing metadata of an error', async () => {
    const err = (await channel.call('/test.Echo/Fail', Buffer.from('x'), 2000).catch((e: unknown) => e)) as grpc.ServiceError;
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toBe('text is too large: 100% über');
    expect(err.metadata.get('x-error-code')).toEqual(['text_too_large']);
  });

  it('an unknown method is UNIMPLEMENTED', async () => {
    const err = (await channel.call('/test.Echo/Nope', Buffer.from('x'), 2000).catch((e: unknown) => e)) as grpc.ServiceError;
    expect(err.code).toBe(grpc.status.UNIMPLEMENTED);
  });

  it('enforces the deadline (DEADLINE_EXCEEDED) and the connection stays usable', async () => {
    const started = Date.now();
    const err = (await channel.call('/test.Echo/Hang', Buffer.from('x'), 150).catch((e: unknown) => e)) as grpc.ServiceError;
    expect(err.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(Date.now() - started).toBeLessThan(1500);
    expect((await channel.call('/test.Echo/Echo', Buffer.from('after'), 2000)).toString()).toBe('echo:after');
  });

  it('grpc-timeout values stay within the protocol\'s 8 digits', () => {
    expect(grpcTimeout(2000)).toBe('2000m');
    expect(grpcTimeout(0.4)).toBe('1m');
    expect(grpcTimeout(99_999_999)).toBe('99999999m');
    expect(grpcTimeout(100_000_000)).toBe('100000S');
    expect(grpcTimeout(1e15)).toBe('99999999S');
  });

  it('refuses to send or accept a message over the size limits (RESOURCE_EXHAUSTED)', async () => {
    const small = channelTo(port, 16);
    try {
      const tooBig = (await small.call('/test.Echo/Echo', Buffer.alloc(17), 2000).catch((e: unknown) => e)) as grpc.ServiceError;
      expect(tooBig.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      const answerTooBig = (await small.call('/test.Echo/Echo', Buffer.alloc(16), 2000).catch((e: unknown) => e)) as grpc.ServiceError;
      expect(answerTooBig.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    } finally {
      small.close();
    }
  });

  it('a closed channel refuses calls (UNAVAILABLE) instead of reconnecting', async () => {
    const c = channelTo(port);
    expect((await c.call('/test.Echo/Echo', Buffer.from('x'), 2000)).toString()).toBe('echo:x');
    c.close();
    const err = (await c.call('/test.Echo/Echo', Buffer.from('y'), 2000).catch((e: unknown) => e)) as grpc.ServiceError;
    expect(err.code).toBe(grpc.status.UNAVAILABLE);
  });

  it('no server is UNAVAILABLE; a server that comes back is used again (reconnect)', async () => {
    const own = await startServer();
    const c = channelTo(own.port);
    try {
      expect((await c.call('/test.Echo/Echo', Buffer.from('a'), 2000)).toString()).toBe('echo:a');
      own.server.forceShutdown();
      const down = (await c.call('/test.Echo/Echo', Buffer.from('b'), 1000).catch((e: unknown) => e)) as grpc.ServiceError;
      expect(down.code).toBe(grpc.status.UNAVAILABLE);
      const again = await startServer(own.port);
      try {
        expect((await c.call('/test.Echo/Echo', Buffer.from('c'), 2000)).toString()).toBe('echo:c');
      } finally {
        await stop(again.server);
      }
    } finally {
      c.close();
    }
  });
});
