import type { Metric, Registry } from 'prom-client';

/**
 * Counters and histograms for the request path. prom-client's own children (`metric.labels(...)`)
 * rebuild and validate a label object and hash it on every `inc` / `observe`; these keep one record
 * per label set, made once, so an observation is an addition (and, for a histogram, a search of a
 * dozen bounds). The registry formats them like its own metrics: they implement the part of the
 * metric interface it reads (`name`, `help`, `type`, `get()`). Label values come from small closed
 * sets and are bound through label-cache.ts.
 */

type Labels = Record<string, string>;

interface MetricValue {
  value: number;
  labels: Labels;
  metricName?: string;
}

interface MetricData {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: MetricValue[];
  aggregator: 'sum';
}

interface Options<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registers: Registry[];
}

function labelsOf(names: readonly string[], values: readonly string[]): Labels {
  const labels: Labels = {};
  names.forEach((n, i) => (labels[n] = values[i] as string));
  return labels;
}

function register(metric: { name: string }, registers: Registry[]): void {
  // The registry calls get() and reads name/help/type: all a prom-client metric offers it.
  for (const r of registers) r.registerMetric(metric as unknown as Metric);
}

export class FastCounterChild {
  value = 0;
  constructor(readonly labels: Labels) {}
  inc(by = 1): void {
    this.value += by;
  }
}

export class FastCounter<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'counter' as const;
  private readonly children: FastCounterChild[] = [];

  constructor(private readonly options: Options<L>) {
    this.name = options.name;
    this.help = options.help;
    register(this, options.registers);
  }

  /** A new child for these label values (in labelNames order); bind it once (label-cache.ts). */
  child(...values: string[]): FastCounterChild {
    const c = new FastCounterChild(labelsOf(this.options.labelNames, values));
    this.children.push(c);
    return c;
  }

  async get(): Promise<MetricData> {
    return { name: this.name, help: this.help, type: this.type, values: this.children.map((c) => ({ value: c.value, labels: c.labels })), aggregator: 'sum' };
  }
}

export class FastHistogramChild {
  sum = 0;
  count = 0;
  /** Observations per bucket (not cumulative); the last one is +Inf. */
  readonly buckets: Float64Array;
  constructor(
    readonly labels: Labels,
    private readonly bounds: readonly number[],
  ) {
    this.buckets = new Float64Array(bounds.length + 1);
  }
  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    this.buckets[i]!++;
    this.sum += value;
    this.count++;
  }
}

export class FastHistogram<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram' as const;
  private readonly children: FastHistogramChild[] = [];

  constructor(private readonly options: Options<L> & { buckets: readonly number[] }) {
    this.name = options.name;
    this.help = options.help;
    register(this, options.registers);
  }

  child(...values: string[]): FastHistogramChild {
    const c = new FastHistogramChild(labelsOf(this.options.labelNames, values), this.options.buckets);
    this.children.push(c);
    return c;
  }

  async get(): Promise<MetricData> {
    const values: MetricValue[] = [];
    const bounds = this.options.buckets;
    for (const c of this.children) {
      let cumulative = 0;
      for (let i = 0; i <= bounds.length; i++) {
        cumulative += c.buckets[i] as number;
        values.push({ metricName: `${this.name}_bucket`, labels: { le: i < bounds.length ? String(bounds[i]) : '+Inf', ...c.labels }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels: c.labels, value: c.sum });
      values.push({ metricName: `${this.name}_count`, labels: c.labels, value: c.count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' };
  }
}
