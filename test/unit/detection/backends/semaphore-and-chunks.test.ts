import { Semaphore } from '../../../../src/detection/classifiers/backends/semaphore';
import { defaultOverlap, splitIntoChunks } from '../../../../src/detection/classifiers/backends/text-chunks';

describe('Semaphore', () => {
  const signal = () => new AbortController().signal;

  it('grants up to maxConcurrent, queues up to maxQueue, refuses beyond', async () => {
    const s = new Semaphore(2, 1, 'x');
    const r1 = await s.acquire(signal());
    await s.acquire(signal());
    const queued = s.acquire(signal());
    expect(s.waiting).toBe(1);
    await expect(s.acquire(signal())).rejects.toMatchObject({ kind: 'overloaded', message: 'x: overloaded (2 calls in flight, 1 queued)' });
    r1();
    r1(); // idempotent
    await queued;
    expect(s.inUse).toBe(2);
    expect(s.waiting).toBe(0);
  });

  it('an aborted waiter leaves the queue and does not take a slot later', async () => {
    const s = new Semaphore(1, 2);
    const r1 = await s.acquire(signal());
    const c = new AbortController();
    const leaving = s.acquire(c.signal);
    const staying = s.acquire(signal());
    c.abort(new Error('bye'));
    await expect(leaving).rejects.toThrow('bye');
    r1();
    const r3 = await staying;
    expect(s.inUse).toBe(1);
    r3();
    expect(s.inUse).toBe(0);
  });
});

describe('splitIntoChunks', () => {
  it('short text is one chunk', () => {
    expect(splitIntoChunks('abc', 10, 2)).toEqual(['abc']);
  });

  it('chunks are at most maxChars, overlap, and cover the whole text', () => {
    const text = Array.from({ length: 1000 }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');
    const chunks = splitIntoChunks(text, 100, 20);
    expect(chunks.every((c) => c.length <= 100)).toBe(true);
    expect(chunks[0]).toBe(text.slice(0, 100));
    expect(chunks[1]).toBe(text.slice(80, 180));
    expect(chunks.at(-1)!.endsWith(text.slice(-20))).toBe(true);
    expect(chunks.length).toBe(Math.ceil((1000 - 20) / 80));
  });

  it('a phrase shorter than the overlap cut by one boundary is whole in the next chunk', () => {
    const phrase = 'ignore previous';
    const text = `${'x'.repeat(92)}${phrase}${'y'.repeat(100)}`;
    const chunks = splitIntoChunks(text, 100, 20);
    expect(chunks[0]!.includes(phrase)).toBe(false);
    expect(chunks.some((c) => c.includes(phrase))).toBe(true);
  });

  it('never splits a surrogate pair', () => {
    const text = '😀'.repeat(300);
    for (const c of splitIntoChunks(text, 101, 10)) {
      expect(c.length).toBeLessThanOrEqual(101);
      expect(/^(?:\uD83D\uDE00)+$/.test(c)).toBe(true);
    }
  });

  it('default overlap is an eighth of the size, at most 200', () => {
    expect(defaultOverlap(800)).toBe(100);
    expect(defaultOverlap(8000)).toBe(200);
  });
});
