import { Counter, Histogram, Registry } from 'prom-client';
import { FastCounter, FastHistogram } from '../../../src/shared/metrics/fast-metrics';

/**
 * The request path's counters and histograms (fast-metrics.ts) must scrape exactly as prom-client's own
 * metrics would for the same observations: same families, samples, cumulative buckets and escaping.
 */
describe('fast metrics', () => {
  const buckets = [0.005, 0.05, 0.5, 5];
  const observations: Array<[string, string, number]> = [
    ['POST', '/v1/chat/completions', 0.001],
    ['POST', '/v1/chat/completions', 0.005],
    ['POST', '/v1/chat/completions', 0.3],
    ['GET', '/v1/policies/:id', 7],
    ['GET', 'say "hi"\\\n', 0.05],
  ];

  it('formats a histogram and a counter as prom-client does', async () => {
    const theirs = new Registry();
    const ours = new Registry();
    const h = new Histogram({ name: 'x_seconds', help: 'help of x', labelNames: ['method', 'route'], buckets, registers: [theirs] });
    const c = new Counter({ name: 'y_total', help: 'help of y', labelNames: ['method', 'route'], registers: [theirs] });
    const fh = new FastHistogram({ name: 'x_seconds', help: 'help of x', labelNames: ['method', 'route'], buckets, registers: [ours] });
    const fc = new FastCounter({ name: 'y_total', help: 'help of y', labelNames: ['method', 'route'], registers: [ours] });
    const hChildren = new Map<string, ReturnType<typeof fh.child>>();
    const cChildren = new Map<string, ReturnType<typeof fc.child>>();
    for (const [method, route, v] of observations) {
      h.labels(method, route).observe(v);
      c.labels(method, route).inc();
      const key = `${method} ${route}`;
      if (!hChildren.has(key)) hChildren.set(key, fh.child(method, route));
      if (!cChildren.has(key)) cChildren.set(key, fc.child(method, route));
      hChildren.get(key)!.observe(v);
      cChildren.get(key)!.inc();
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
    expect(await ours.metrics()).toContain('x_seconds_bucket{le="0.005",method="POST",route="/v1/chat/completions"} 2');
  });

  it('scrapes nothing for a metric with no label set yet, like prom-client', async () => {
    const theirs = new Registry();
    const ours = new Registry();
    new Counter({ name: 'z_total', help: 'z', labelNames: ['a'], registers: [theirs] });
    new FastCounter({ name: 'z_total', help: 'z', labelNames: ['a'], registers: [ours] });
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });
});
