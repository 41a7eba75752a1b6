import { DetectionAdmission, detectionOverloaded, type Release } from '../../../src/shared/detection-admission';
import { AppError } from '../../../src/shared/errors';

/** Lets every already-resolved promise callback run. */
const settle = () => new Promise<void>((r) => setImmediate(r));

/** Records the order in which acquisitions are granted. */
function tracked(admission: DetectionAdmission, name: string, order: string[], options: { admitted?: boolean; signal?: AbortSignal } = {}) {
  const p = admission.acquire({ admitted: options.admitted ?? false, signal: options.signal }).then((release) => {
    order.push(name);
    return release;
  });
  p.catch(() => undefined);
  return p;
}

describe('DetectionAdmission', () => {
  it('grants up to maxActive at once and hands freed slots to waiters in FIFO order', async () => {
    const admission = new DetectionAdmission({ maxActive: 2, maxQueued: 10 });
    const order: string[] = [];
    const a = tracked(admission, 'a', order);
    const b = tracked(admission, 'b', order);
    const c = tracked(admission, 'c', order);
    const d = tracked(admission, 'd', order, { admitted: true });
    const e = tracked(admission, 'e', order);
    await settle();
    expect(order).toEqual(['a', 'b']);
    expect(admission.stats()).toMatchObject({ active: 2, queued: 3 });

    (await b)();
    await settle();
    expect(order).toEqual(['a', 'b', 'c']);
    (await a)();
    (await c)();
    await settle();
    expect(order).toEqual(['a', 'b', 'c', 'd', 'e']);
    (await d)();
    (await e)();
    expect(admission.stats()).toMatchObject({ active: 0, queued: 0 });
  });

  it('a later arrival waits behind the queue even when a slot is momentarily free', async () => {
    const admission = new DetectionAdmission({ maxActive: 1, maxQueued: 10 });
    const order: string[] = [];
    const first = await tracked(admission, 'first', order);
    const queued = tracked(admission, 'queued', order);
    first();
    // Released synchronously to the waiter: a newcomer in the same turn does not overtake it.
    const newcomer = tracked(admission, 'newcomer', order);
    await settle();
    expect(order).toEqual(['first', 'queued']);
    (await queued)();
    await settle();
    expect(order).toEqual(['first', 'queued', 'newcomer']);
    (await newcomer)();
  });

  it('refuses new work with 503 detection_overloaded and Retry-After once maxQueued wait; admitted work still queues', async () => {
    const admission = new DetectionAdmission({ maxActive: 1, maxQueued: 2, retryAfterSeconds: 3 });
    const order: string[] = [];
    const held = await tracked(admission, 'held', order);
    const q1 = tracked(admission, 'q1', order);
    const q2 = tracked(admission, 'q2', order);
    const refused = admission.acquire({ admitted: false });
    await expect(refused).rejects.toBeInstanceOf(AppError);
    await expect(refused).rejects.toMatchObject({ type: 'service_unavailable', status: 503, code: 'detection_overloaded', details: { retry_after: 3 } });
    const later = tracked(admission, 'admitted', order, { admitted: true });
    expect(admission.stats().queued).toBe(3);

    held();
    (await q1)();
    (await q2)();
    (await later)();
    expect(order).toEqual(['held', 'q1', 'q2', 'admitted']);
    // With the queue drained, new work is admitted again.
    (await admission.acquire({ admitted: false }))();
  });

  it('maxQueued 0: new work is refused whenever every slot is busy', async () => {
    const admission = new DetectionAdmission({ maxActive: 1, maxQueued: 0 });
    const held = await admission.acquire({ admitted: false });
    await expect(admission.acquire({ admitted: false })).rejects.toMatchObject({ code: 'detection_overloaded' });
    held();
    (await admission.acquire({ admitted: false }))();
  });

  it('a waiter whose signal aborts leaves the queue (no leaked place, no slot taken)', async () => {
    const admission = new DetectionAdmission({ maxActive: 1, maxQueued: 1 });
    const order: string[] = [];
    const held = await tracked(admission, 'held', order);
    const gone = new AbortController();
    const waiting = tracked(admission, 'gone', order, { signal: gone.signal });
    // The queue is full: another newcomer is refused...
    await expect(admission.acquire({ admitted: false })).rejects.toMatchObject({ code: 'detection_overloaded' });
    gone.abort(new Error('client disconnected'));
    await expect(waiting).rejects.toThrow('client disconnected');
    expect(admission.stats()).toMatchObject({ active: 1, queued: 0 });
    // ...and once the client that waited is gone, its place is free again.
    const next = tracked(admission, 'next', order);
    held();
    (await next)();
    expect(order).toEqual(['held', 'next']);
    expect(admission.stats()).toMatchObject({ active: 0, queued: 0 });
  });

  it('an already aborted signal is refused without queueing', async () => {
    const admission = new DetectionAdmission({ maxActive: 1, maxQueued: 1 });
    const gone = new AbortController();
    gone.abort(new Error('gone before'));
    await expect(admission.acquire({ admitted: false, signal: gone.signal })).rejects.toThrow('gone before');
    expect(admission.stats()).toMatchObject({ active: 0, queued: 0 });
  });

  it('release is idempotent: a double release (error path + finally) frees one slot only', async () => {
    const admission = new DetectionAdmission({ maxActive: 1, maxQueued: 5 });
    const release: Release = await admission.acquire({ admitted: false });
    const order: string[] = [];
    const w1 = tracked(admission, 'w1', order);
    const w2 = tracked(admission, 'w2', order);
    release();
    release();
    await settle();
    expect(order).toEqual(['w1']);
    expect(admission.stats()).toMatchObject({ active: 1, queued: 1 });
    (await w1)();
    (await w2)();
    expect(admission.stats()).toMatchObject({ active: 0, queued: 0 });
  });

  it('a slot is released when the work holding it fails', async () => {
    const admission = new DetectionAdmission({ maxActive: 1, maxQueued: 5 });
    const work = async () => {
      const release = await admission.acquire({ admitted: false });
      try {
        throw new Error('detection failed');
      } finally {
        release();
      }
    };
    await expect(work()).rejects.toThrow('detection failed');
    expect(admission.stats()).toMatchObject({ active: 0, queued: 0 });
  });

  it('rejects impossible sizes', () => {
    expect(() => new DetectionAdmission({ maxActive: 0, maxQueued: 1 })).toThrow(RangeError);
    expect(() => new DetectionAdmission({ maxActive: 1, maxQueued: -1 })).toThrow(RangeError);
    expect(detectionOverloaded(7).toEnvelope()).toEqual({
      error: { message: 'Detection is at capacity: retry later', type: 'service_unavailable', code: 'detection_overloaded', details: { retry_after: 7 } },
    });
  });
});
