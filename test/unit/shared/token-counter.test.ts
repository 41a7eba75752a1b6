import { getPriority } from 'node:os';
import { itWithThreadNice, threadsAtNice } from '../../helpers/thread-nice';
import { until } from '../../helpers/until';
import { AuditTokenCounter, inlineTokenCounter } from '../../../src/shared/token-counter';
import { countTextTokens } from '../../../src/shared/tokens';
import { generateProse, sourceCodeText } from '../../../tools/text-corpus';

/** Audit token counts off the serving thread (needs the compiled dist/: workers cannot load TypeScript). */
describe('AuditTokenCounter', () => {
  const counters: AuditTokenCounter[] = [];
  afterAll(async () => {
    await Promise.all(counters.map((c) => c.close()));
  });
  const counter = (minChars: number) => {
    const c = new AuditTokenCounter({ workers: 1, minChars });
    counters.push(c);
    return c;
  };
  const exact = (texts: string[]) => texts.reduce((n, t) => n + countTextTokens(t), 0);

  it('counts long texts in the worker, with exactly the inline count (long runs and special-token text included)', async () => {
    const c = counter(1024);
    const texts = [generateProse({ seed: 1, length: 50_000 }), sourceCodeText(20_000), 'a'.repeat(5_000), 'before <|endoftext|> after <|im_start|>system'];
    const counted = c.count(texts);
    expect(counted).toBeInstanceOf(Promise);
    expect(await counted).toBe(exact(texts));
    expect(c.pool?.dispatched).toBe(1);
  });

  itWithThreadNice('runs its worker at the nice value it is given (Linux), the calling thread unchanged', async () => {
    const c = new AuditTokenCounter({ workers: 1, minChars: 1024, nice: 13 });
    counters.push(c);
    const before = threadsAtNice(13);
    const texts = [generateProse({ seed: 3, length: 5_000 })];
    expect(await c.count(texts)).toBe(exact(texts));
    expect(c.pool?.threads).toBe(1);
    expect(threadsAtNice(13) - before).toBe(1);
    expect(getPriority()).toBe(0);
  });

  it('counts inline, with the same number, while the texts held for the workers would pass maxPendingChars', async () => {
    const c = new AuditTokenCounter({ workers: 1, minChars: 10, maxPendingChars: 1_000 });
    counters.push(c);
    const [a, b, d] = [1, 2, 3].map((seed) => [generateProse({ seed: 10 + seed, length: 600 })]);
    const first = c.count(a!);
    expect(first).toBeInstanceOf(Promise);
    expect(c.heldChars).toBe(600);
    // 600 + 600 > 1,000: counted right here, nothing more held.
    expect(c.count(b!)).toBe(exact(b!));
    expect(c.heldChars).toBe(600);
    expect(await first).toBe(exact(a!));
    await until(async () => (c.heldChars === 0 ? true : undefined));
    // The backlog gone, the next one goes to the worker again.
    const third = c.count(d!);
    expect(third).toBeInstanceOf(Promise);
    expect(await third).toBe(exact(d!));
  });

  it('counts short texts inline, synchronously, without starting a worker', () => {
    const c = counter(1024);
    const texts = ['hello there', generateProse({ seed: 2, length: 900 })];
    expect(c.count(texts)).toBe(exact(texts));
    expect(c.pool?.started).toBe(0);
    expect(inlineTokenCounter.count(texts)).toBe(exact(texts));
  });

  it('with 0 workers every count is inline', () => {
    const c = new AuditTokenCounter({ workers: 0, minChars: 0 });
    const texts = [generateProse({ seed: 3, length: 30_000 })];
    expect(c.count(texts)).toBe(exact(texts));
    expect(c.pool).toBeUndefined();
  });

  it('close() waits for counts in progress; after it, counts are made inline (same number)', async () => {
    const c = counter(0);
    const texts = [generateProse({ seed: 4, length: 200_000 })];
    const inProgress = c.count(texts);
    await c.close();
    expect(await inProgress).toBe(exact(texts));
    expect(c.pool?.threads).toBe(0);
    expect(await c.count(['after close, still counted'])).toBe(exact(['after close, still counted']));
  });
});
