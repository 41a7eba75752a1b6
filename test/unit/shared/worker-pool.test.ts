import { getPriority } from 'node:os';
import { DEFAULT_WORKER_NICE, DEFAULT_WORKER_YOUNG_GENERATION_MB, defaultPoolSize, niceSource, WorkerPool, WorkerPoolFull } from '../../../src/shared/worker-pool';
import { itWithThreadNice, threadsAtNice } from '../../helpers/thread-nice';
import { until } from '../../helpers/until';

/**
 * The generic worker pool. The worker here speaks the pool's protocol directly ({ id, task } in,
 * { id, result | error } out) and blocks on an Atomics.wait gate so tests control when a task finishes.
 */
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const gate = new Int32Array(workerData.gate);
parentPort.on('message', (m) => {
  if (m.task.wait) Atomics.wait(gate, 0, 0);
  if (m.task.fail) parentPort.postMessage({ id: m.id, error: 'task failed: ' + m.task.fail });
  else parentPort.postMessage({ id: m.id, result: m.task.value * 2 });
});`;

type Task = { value?: number; wait?: boolean; fail?: string };

function gatedPool(size: number, maxQueue: number) {
  const gate = new SharedArrayBuffer(4);
  const pool = new WorkerPool<Task, number>({ name: 'test', source: SOURCE, workerData: { gate }, size, maxQueue });
  const open = () => {
    const view = new Int32Array(gate);
    Atomics.store(view, 0, 1);
    Atomics.notify(view, 0);
  };
  return { pool, open };
}

describe('WorkerPool', () => {
  it('starts each worker with a small young generation by default, or the limits it is given', async () => {
    const limitsSource = `
const { parentPort, resourceLimits } = require('node:worker_threads');
parentPort.on('message', (m) => parentPort.postMessage({ id: m.id, result: resourceLimits }));`;
    const byDefault = new WorkerPool<null, { maxYoungGenerationSizeMb: number; maxOldGenerationSizeMb: number }>({ name: 'test', source: limitsSource, size: 1, maxQueue: 1 });
    const given = new WorkerPool<null, { maxYoungGenerationSizeMb: number; maxOldGenerationSizeMb: number }>({
      name: 'test', source: limitsSource, size: 1, maxQueue: 1, resourceLimits: { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 64 },
    });
    try {
      // V8 rounds the young generation to whole semi-spaces: within 1 MB of what was asked.
      const d = await byDefault.run(null);
      expect(Math.abs(d.maxYoungGenerationSizeMb - DEFAULT_WORKER_YOUNG_GENERATION_MB)).toBeLessThanOrEqual(1);
      const g = await given.run(null);
      expect(Math.abs(g.maxYoungGenerationSizeMb - 2)).toBeLessThanOrEqual(1);
      expect(g.maxOldGenerationSizeMb).toBe(64);
    } finally {
      await Promise.all([byDefault.close(), given.close()]);
    }
  });

  it('runs tasks on at most `size` workers and answers each with its own result', async () => {
    const { pool } = gatedPool(2, 10);
    try {
      const results = await Promise.all([1, 2, 3, 4, 5].map((value) => pool.run({ value })));
      expect(results).toEqual([2, 4, 6, 8, 10]);
      expect(pool.dispatched).toBe(5);
      expect(pool.started).toBeLessThanOrEqual(2);
    } finally {
      await pool.close();
    }
  });

  it('bounds the queue: beyond maxQueue waiting tasks, run rejects with WorkerPoolFull at once', async () => {
    const { pool, open } = gatedPool(1, 2);
    try {
      const running = pool.run({ value: 1, wait: true });
      const queued = [pool.run({ value: 2 }), pool.run({ value: 3 })];
      await expect(pool.run({ value: 4 })).rejects.toBeInstanceOf(WorkerPoolFull);
      open();
      expect(await running).toBe(2);
      expect(await Promise.all(queued)).toEqual([4, 6]);
      expect(pool.dispatched).toBe(3);
    } finally {
      await pool.close();
    }
  });

  it('drops a queued task that is cancelled by its turn, without posting it', async () => {
    const { pool, open } = gatedPool(1, 5);
    try {
      const running = pool.run({ value: 1, wait: true });
      let cancelled: unknown;
      const dropped = pool.run({ value: 2 }, { cancelled: () => cancelled });
      cancelled = new Error('deadline');
      open();
      await expect(dropped).rejects.toThrow('deadline');
      expect(await running).toBe(2);
      expect(pool.dispatched).toBe(1);
    } finally {
      await pool.close();
    }
  });

  it('a task error rejects that task only; close() rejects running and queued tasks and later runs', async () => {
    const { pool } = gatedPool(1, 5);
    await expect(pool.run({ fail: 'boom' })).rejects.toThrow('task failed: boom');
    expect(await pool.run({ value: 21 })).toBe(42);
    const running = pool.run({ value: 1, wait: true });
    const queued = pool.run({ value: 2 });
    const refused = [expect(running).rejects.toThrow(/closed/), expect(queued).rejects.toThrow(/closed/)];
    await pool.close();
    await Promise.all(refused);
    expect(pool.threads).toBe(0);
    await expect(pool.run({ value: 3 })).rejects.toThrow(/closed/);
  });

  it('with idleMs, an idle worker is terminated and the next task starts a new one', async () => {
    const gate = new SharedArrayBuffer(4);
    const pool = new WorkerPool<Task, number>({ name: 'test', source: SOURCE, workerData: { gate }, size: 1, maxQueue: 1, idleMs: 50 });
    try {
      expect(await pool.run({ value: 1 })).toBe(2);
      await until(async () => (pool.threads === 0 ? true : undefined));
      expect(await pool.run({ value: 2 })).toBe(4);
      expect(pool.started).toBe(2);
    } finally {
      await pool.close();
    }
  });

  it('defaults to one worker per core on Linux (niced), one per spare core elsewhere, at least one', () => {
    expect(defaultPoolSize(1, 'linux')).toBe(1);
    expect(defaultPoolSize(2, 'linux')).toBe(2);
    expect(defaultPoolSize(8, 'linux')).toBe(8);
    expect(defaultPoolSize(1, 'darwin')).toBe(1);
    expect(defaultPoolSize(2, 'darwin')).toBe(1);
    expect(defaultPoolSize(8, 'win32')).toBe(7);
    expect(DEFAULT_WORKER_NICE).toBe(10);
  });

  itWithThreadNice('lowers the priority of its worker threads only, to the nice value it is given', async () => {
    const source = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (m) => parentPort.postMessage({ id: m.id, result: require('node:os').getPriority() }));`;
    const niced = new WorkerPool<null, number>({ name: 'test', source, size: 2, maxQueue: 4, nice: 7 });
    const plain = new WorkerPool<null, number>({ name: 'test', source, size: 1, maxQueue: 1 });
    const before = threadsAtNice(7);
    try {
      // Two tasks at once: both workers start.
      expect(await Promise.all([niced.run(null), niced.run(null)])).toEqual([7, 7]);
      expect(niced.threads).toBe(2);
      expect(await plain.run(null)).toBe(getPriority());
      // The calling thread keeps its priority; exactly the two pool threads run at 7.
      expect(getPriority()).toBe(0);
      expect(threadsAtNice(7) - before).toBe(2);
    } finally {
      await Promise.all([niced.close(), plain.close()]);
    }
  });

  it('sets the nice value on Linux only, and rejects one outside 0–19', () => {
    expect(niceSource('work()', 10, 'linux')).toMatch(/^try \{ require\('node:os'\)\.setPriority\(10\); \} catch \{\}\nwork\(\)$/);
    expect(niceSource('work()', 10, 'darwin')).toBe('work()');
    expect(niceSource('work()', 10, 'win32')).toBe('work()');
    expect(niceSource('work()', 0, 'linux')).toBe('work()');
    expect(niceSource('work()', undefined, 'linux')).toBe('work()');
    for (const bad of [-1, 20, 2.5, NaN]) {
      expect(() => niceSource('work()', bad, 'linux')).toThrow('from 0 to 19');
      expect(() => niceSource('work()', bad, 'darwin')).toThrow('from 0 to 19');
      // The pool checks it on every system, before any worker starts.
      expect(() => new WorkerPool({ name: 'test', source: 'x', size: 1, maxQueue: 1, nice: bad })).toThrow('from 0 to 19');
    }
  });
});
