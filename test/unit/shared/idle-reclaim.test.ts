import { fullCollection, startIdleReclaim } from '../../../src/shared/idle-reclaim';
import { loadConfig } from '../../../src/shared/config';

/**
 * Idle reclaim decides from the heap's growth, the event loop's utilisation and the quiet time; they are
 * injected or pinned here (maxUtilization 1 = any interval counts as idle, -1 = none does; a fake clock),
 * and `check()` is called directly instead of waiting for the timer.
 */

const MB = 1024 * 1024;

/** A clock that moves a minute per reading: every check() sees a whole idle time pass. */
function minutes() {
  let t = 0;
  return () => (t += 60_000);
}

function fakeHeap(startMb: number) {
  let bytes = startMb * MB;
  const collected: number[] = [];
  return {
    heapBytes: () => bytes,
    set: (mb: number) => {
      bytes = mb * MB;
    },
    // A collection brings the heap back to 60 MB.
    collect: () => {
      collected.push(bytes / MB);
      bytes = 60 * MB;
    },
    collected,
  };
}

describe('idle reclaim', () => {
  it('collects once the heap grew by the threshold while idle, then counts growth from after the collection', () => {
    const heap = fakeHeap(60);
    const reclaim = startIdleReclaim({ idleMs: 60_000, minGrowthBytes: 32 * MB, maxUtilization: 1, heapBytes: heap.heapBytes, collect: heap.collect, now: minutes() });
    try {
      heap.set(80); // +20 MB: below the threshold
      reclaim.check();
      expect(reclaim.collections).toBe(0);
      heap.set(200); // a burst: +140 MB
      reclaim.check();
      // Collected twice in a row (the second releases the pages the first left empty), once counted.
      expect(reclaim.collections).toBe(1);
      expect(heap.collected).toEqual([200, 60]);
      heap.set(85); // +25 MB over the heap after the collection
      reclaim.check();
      expect(reclaim.collections).toBe(1);
    } finally {
      reclaim.stop();
    }
  });

  it('counts growth from the lowest heap seen (V8 shrank it meanwhile)', () => {
    const heap = fakeHeap(150);
    const reclaim = startIdleReclaim({ idleMs: 60_000, minGrowthBytes: 32 * MB, maxUtilization: 1, heapBytes: heap.heapBytes, collect: heap.collect, now: minutes() });
    try {
      heap.set(70);
      reclaim.check();
      heap.set(110); // +40 MB over 70
      reclaim.check();
      expect(reclaim.collections).toBe(1);
    } finally {
      reclaim.stop();
    }
  });

  it('never collects on a busy thread, however much the heap grew', () => {
    const heap = fakeHeap(60);
    const reclaim = startIdleReclaim({ idleMs: 60_000, minGrowthBytes: 32 * MB, maxUtilization: -1, heapBytes: heap.heapBytes, collect: heap.collect, now: minutes() });
    try {
      heap.set(500);
      reclaim.check();
      reclaim.check();
      expect(reclaim.collections).toBe(0);
      expect(heap.collected).toEqual([]);
    } finally {
      reclaim.stop();
    }
  });

  it('collects only once the thread has been idle for idleMs without a break, counted over several checks', () => {
    const heap = fakeHeap(60);
    let t = 0;
    let busy = 0;
    const reclaim = startIdleReclaim({ idleMs: 30_000, minGrowthBytes: 32 * MB, heapBytes: heap.heapBytes, collect: heap.collect, now: () => t, utilization: () => busy });
    const step = (ms: number, utilization: number) => {
      t += ms;
      busy = utilization;
      reclaim.check();
    };
    try {
      heap.set(200);
      for (let i = 0; i < 5; i++) step(5_000, 0.01);
      expect(reclaim.collections).toBe(0); // 25 s of quiet
      step(5_000, 0.2); // a busy interval: the quiet time starts again
      for (let i = 0; i < 5; i++) step(5_000, 0.01);
      expect(reclaim.collections).toBe(0); // 25 s since the busy interval
      step(5_000, 0.01);
      expect(reclaim.collections).toBe(1); // 30 s
      expect(heap.collected).toEqual([200, 60]);
    } finally {
      reclaim.stop();
    }
  });

  it('reaches a real full collection of this isolate', async () => {
    const gc = fullCollection();
    const ref = (() => new WeakRef({ big: new Array(1000).fill(0) }))();
    // A WeakRef's target is kept until the job that created it ends.
    await new Promise<void>((resolve) => setImmediate(resolve));
    gc();
    expect(ref.deref()).toBeUndefined();
  });

  it('MEMORY_RECLAIM_IDLE_MS defaults to 30,000 ms (a short lull keeps the heap; see idle-reclaim.ts); 0 turns it off', () => {
    expect(loadConfig({}).MEMORY_RECLAIM_IDLE_MS).toBe(30_000);
    expect(loadConfig({ MEMORY_RECLAIM_IDLE_MS: '0' }).MEMORY_RECLAIM_IDLE_MS).toBe(0);
    expect(() => loadConfig({ MEMORY_RECLAIM_IDLE_MS: '-1' })).toThrow(/MEMORY_RECLAIM_IDLE_MS/);
  });
});
