import * as grpc from '@grpc/grpc-js';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { FastCounter, FastHistogram } from '../shared/metrics/fast-metrics';
import { cache1, cache2 } from '../shared/metrics/label-cache';
import type { ClassifierPoolStats } from './classifiers/builtin/builtin-pool';
import { classifierWindowCounts } from './classifiers/shared-calls';
import type { ConfigCache } from './config-cache';

/**
 * The detection service's metrics (docs/metrics.md), in a Registry of their own: in `all` they join the
 * gateway's scrape (from the detection worker thread by message, or in process), and with `detection`
 * alone they are served on DETECTION_METRICS_PORT. No label carries request content or a tenant.
 */

const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 30, 120];

/** gRPC status code → its name (OK, INVALID_ARGUMENT, ...). */
const STATUS_NAMES = new Map<number, string>(Object.entries(grpc.status).filter(([, v]) => typeof v === 'number').map(([k, v]) => [v as number, k]));

export type DetectionMethod = 'Detect' | 'DetectStream' | 'ListDetectorTypes';

export class DetectionMetrics {
  readonly registry = new Registry();
  private readonly calls = new FastCounter({
    name: 'csg_detection_server_calls_total',
    help: 'Calls the detection service answered, by gRPC method and status code',
    labelNames: ['method', 'code'] as const,
    registers: [this.registry],
  });
  private readonly duration = new FastHistogram({
    name: 'csg_detection_server_duration_seconds',
    help: 'Time the detection service spent on a call (a DetectStream call: from its start to its end)',
    labelNames: ['method'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  private streamsOpen = 0;
  private readonly callsBy: (method: string, code: string) => { inc(): void };
  private readonly durationBy: (method: string) => { observe(v: number): void };

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics === true) collectDefaultMetrics({ register: this.registry });
    this.callsBy = cache2((method, code) => this.calls.child(method, code));
    this.durationBy = cache1((method) => this.duration.child(method));
    const streams = () => this.streamsOpen;
    new Gauge({
      name: 'csg_detection_server_streams_open',
      help: 'DetectStream calls in progress',
      registers: [this.registry],
      collect() {
        this.set(streams());
      },
    });
    new Counter({
      name: 'csg_detection_classifier_windows_total',
      help: 'Classifier windows asked for (asked) and scored by a backend (scored; the rest shared a call in flight or a recent score), by backend',
      labelNames: ['backend', 'result'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [backend, count] of classifierWindowCounts) {
          this.inc({ backend, result: 'asked' }, count.windows);
          this.inc({ backend, result: 'scored' }, count.scored);
        }
      },
    });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** A call finished: `startedAt` from performance.now(), `code` a gRPC status. */
  callEnded(method: DetectionMethod, startedAt: number, code: number): void {
    this.callsBy(method, STATUS_NAMES.get(code) ?? String(code)).inc();
    this.durationBy(method).observe((performance.now() - startedAt) / 1000);
  }

  streamOpened(): void {
    this.streamsOpen++;
  }

  streamClosed(): void {
    this.streamsOpen--;
  }

  /** The compiled-configuration cache's size and hit rate, read at scrape time. */
  watchConfigCache(cache: Pick<ConfigCache, 'stats'>): void {
    const registers = [this.registry];
    new Gauge({
      name: 'csg_detection_config_cache_entries',
      help: 'Compiled detector configurations held by the detection service',
      registers,
      collect() {
        this.set(cache.stats().entries);
      },
    });
    new Counter({
      name: 'csg_detection_config_cache_lookups_total',
      help: 'Configuration lookups of the compiled-configuration cache, by result (hit, miss)',
      labelNames: ['result'] as const,
      registers,
      collect() {
        const s = cache.stats();
        this.reset();
        this.inc({ result: 'hit' }, s.hits);
        this.inc({ result: 'miss' }, s.misses);
      },
    });
  }

  /** The builtin classifier's worker pool (queue, busy workers), read at scrape time. */
  watchClassifierPool(stats: () => ClassifierPoolStats | undefined): void {
    new Gauge({
      name: 'csg_detection_classifier_pool',
      help: 'The builtin classifier worker pool: windows queued, workers busy, workers in all',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const s = stats();
        if (!s) return;
        this.set({ state: 'queued_windows' }, s.queuedWindows);
        this.set({ state: 'busy_workers' }, s.busyWorkers);
        this.set({ state: 'workers' }, s.workers);
      },
    });
  }
}
