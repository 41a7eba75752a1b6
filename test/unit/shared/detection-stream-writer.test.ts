import * as grpc from '@grpc/grpc-js';
import * as net from 'node:net';
import { DetectionAdmission } from '../../../src/shared/detection-admission';
import { DetectStreamWriter, MAX_BATCH_CHARS } from '../../../src/shared/detection-stream-writer';

/** A fake transport: records what is sent; the test acknowledges (received counts) by hand. */
function harness(options: { admission?: DetectionAdmission; stepTimeoutMs?: number } = {}) {
  const sent: Array<{ text: string; final: boolean; ack: boolean }> = [];
  let receivedChars = 0;
  const waiters: Array<{ chars: number; resolve: () => void; reject: (e: unknown) => void }> = [];
  const failures: unknown[] = [];
  const cancel = new AbortController();
  const writer = new DetectStreamWriter({
    send: async (msg) => {
      sent.push(msg);
    },
    received: (chars) => (receivedChars >= chars ? Promise.resolve() : new Promise((resolve, reject) => waiters.push({ chars, resolve, reject }))),
    fail: (err) => {
      failures.push(err);
      for (const w of waiters.splice(0)) w.reject(err);
    },
    admission: options.admission,
    stepTimeoutMs: options.stepTimeoutMs ?? 1000,
    signal: cancel.signal,
  });
  const ack = (chars: number) => {
    receivedChars = chars;
    for (const w of waiters.filter((x) => x.chars <= chars)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  };
  return { writer, sent, ack, failures, cancel };
}

const flush = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('DetectStreamWriter', () => {
  afterEach(() => jest.useRealTimers());

  it('sends one batch at a time, with ack, and coalesces what is written meanwhile into the next batch', async () => {
    const h = harness();
    await h.writer.write('one ');
    await flush();
    await h.writer.write('two ');
    await h.writer.write('three ');
    await flush();
    expect(h.sent).toEqual([{ text: 'one ', final: false, ack: true }]);
    h.ack(4);
    await flush();
    expect(h.sent.map((m) => m.text)).toEqual(['one ', 'two three ']);
    h.ack(14);
    const done = h.writer.end(Promise.resolve());
    await done;
    expect(h.sent.at(-1)).toEqual({ text: '', final: true, ack: false });
    expect(h.failures).toEqual([]);
  });

  it('never splits a surrogate pair across batches and caps a batch at MAX_BATCH_CHARS', async () => {
    const h = harness();
    const big = `${'a'.repeat(MAX_BATCH_CHARS - 1)}😀tail`;
    await h.writer.write(big.slice(0, MAX_BATCH_CHARS)); // ends in the high surrogate
    await flush();
    expect(h.sent[0]!.text).toBe('a'.repeat(MAX_BATCH_CHARS - 1));
    await h.writer.write(big.slice(MAX_BATCH_CHARS));
    h.ack(MAX_BATCH_CHARS - 1);
    await flush();
    expect(h.sent[1]!.text).toBe('😀tail');
    h.ack(big.length);
    await h.writer.end(Promise.resolve());
    expect(h.sent.map((m) => m.text).join('')).toBe(big);
  });

  it('a step queued behind a busy slot does not time out: its deadline starts when it is admitted', async () => {
    jest.useFakeTimers();
    const admission = new DetectionAdmission({ maxActive: 1, maxQueued: 0 });
    const hold = await admission.acquire({ admitted: false });
    const h = harness({ admission, stepTimeoutMs: 100 });
    await h.writer.write('queued text');
    await jest.advanceTimersByTimeAsync(10_000); // 100 deadlines' worth of waiting in the queue
    expect(h.sent).toEqual([]);
    expect(h.failures).toEqual([]);
    expect(admission.stats()).toMatchObject({ active: 1, queued: 1 }); // admitted work queues past maxQueued 0
    hold();
    await jest.advanceTimersByTimeAsync(0);
    expect(h.sent.map((m) => m.text)).toEqual(['queued text']);
    h.ack(11);
    await jest.advanceTimersByTimeAsync(0);
    expect(admission.stats()).toMatchObject({ active: 0, queued: 0 });
    expect(h.failures).toEqual([]);
  });

  it('an admitted step that is not answered within its deadline fails the stream as a detection timeout and frees its slot', async () => {
    jest.useFakeTimers();
    const admission = new DetectionAdmission({ maxActive: 1, maxQueued: 0 });
    const h = harness({ admission, stepTimeoutMs: 100 });
    await h.writer.write('never acknowledged');
    await jest.advanceTimersByTimeAsync(101);
    expect(h.failures).toHaveLength(1);
    expect(h.failures[0]).toMatchObject({ code: 'detection_unavailable', status: 503, cause: { code: grpc.status.DEADLINE_EXCEEDED } });
    expect(admission.stats()).toMatchObject({ active: 0, queued: 0 });
    await expect(h.writer.write('more')).rejects.toMatchObject({ code: 'detection_unavailable' });
  });

  it('a stream cancelled while its step waits for a slot leaves the queue (no leak)', async () => {
    const admission = new DetectionAdmission({ maxActive: 1, maxQueued: 0 });
    const hold = await admission.acquire({ admitted: false });
    const h = harness({ admission });
    await h.writer.write('waiting');
    await flush();
    expect(admission.stats().queued).toBe(1);
    h.cancel.abort(new Error('client disconnected'));
    await flush();
    expect(admission.stats()).toMatchObject({ active: 1, queued: 0 });
    hold();
    expect(admission.stats()).toMatchObject({ active: 0, queued: 0 });
    expect(h.sent).toEqual([]);
  });

  it('the final scan is a step too: it holds a slot until the done update arrives', async () => {
    const admission = new DetectionAdmission({ maxActive: 1, maxQueued: 0 });
    const h = harness({ admission });
    let finish!: () => void;
    const done = new Promise<void>((r) => (finish = r));
    const ended = h.writer.end(done);
    await flush();
    expect(h.sent).toEqual([{ text: '', final: true, ack: false }]);
    expect(admission.stats().active).toBe(1);
    finish();
    await ended;
    expect(admission.stats().active).toBe(0);
  });

  it('an answer waiting on a socket when the deadline passed during a busy loop still counts: the deadline is judged after pending I/O', async () => {
    // The answer travels over a real socket: it is written (into the kernel) as the step is sent, then
    // the loop is kept busy past the deadline, so the expired timer and the readable socket are due in
    // the same loop turn (timers run first).
    let peer: net.Socket | undefined;
    const server = net.createServer((socket) => (peer = socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
    await new Promise((resolve) => client.once('connect', resolve));
    while (!peer) await new Promise((resolve) => setImmediate(resolve));
    try {
      const failures: unknown[] = [];
      let answered = 0;
      const writer = new DetectStreamWriter({
        send: async () => undefined,
        received: (chars) =>
          new Promise<void>((resolve) => {
            client.once('data', (d) => {
              answered += d.length;
              if (answered >= chars) resolve();
            });
            peer!.write('x'.repeat(chars));
            const until = Date.now() + 60; // busy past the deadline: the answer waits in the socket
            while (Date.now() < until);
          }),
        fail: (err) => failures.push(err),
        admission: new DetectionAdmission({ maxActive: 1, maxQueued: 0 }),
        stepTimeoutMs: 20,
        signal: new AbortController().signal,
      });
      await writer.write('answered in time');
      await writer.end(Promise.resolve()).catch(() => undefined);
      expect(answered).toBe('answered in time'.length);
      expect(failures).toEqual([]);
    } finally {
      client.destroy();
      peer.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
